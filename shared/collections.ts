import type { CollectionDef } from './db/collection';
import { apiKeys, authTokens, tenants } from './auth/collections';
import { authState } from './auth/auth-cache';
import { idempotencyKeys } from './idempotency/keys';
import { jobs } from './jobs/collection';
import { products, productSkus } from './products/collections';
import { dataUpgrades } from './products/search-backfill';
import { orderComments, orders } from './orders/collections';
import { bulkOperationItems, bulkOperations } from './bulk/operations';
import { importErrors, importSkuClaims, importStaging } from './csv/staging';
import { locations } from './locations/locations';
import { locationZones } from './locations/zones';
import { stockLevels, stockMovements } from './inventory/collections';
import { inventoryHandlers } from './inventory/handlers';
import { adjustments } from './inventory/adjustments';
import { counts } from './inventory/counts';
import { lotCosts } from './inventory/lots';
import { transfers } from './inventory/transfers';
import { publicationItems, publicationLocks } from './publication/publication';
import { channels } from './channels/channels';
import { channelCallSlots } from './channels/rate-gate';
import { materialMovements, materialStock, materials, supplies } from './materials/collections';
import { materialConsumptions } from './consumption/collections';
import { editPages, editPatches } from './edits/collections';
import { aiTokenDays } from './ai/budget';
import { customerEmails, customers } from './customers/collections';
import { webhookDeliveries, webhookEndpoints, webhookEvents, webhookOutbox } from './webhooks/collections';

/**
 * Every collection the service uses. The processes (API, worker, admin CLI, tests) hand this list
 * to ensureIndexes at start-up; the data layer itself knows no domain.
 */
export const allCollections: CollectionDef<any>[] = [
  tenants,
  apiKeys,
  authTokens,
  authState,
  dataUpgrades,
  jobs,
  products,
  productSkus,
  orders,
  orderComments,
  bulkOperations,
  bulkOperationItems,
  importStaging,
  importErrors,
  importSkuClaims,
  locations,
  locationZones,
  stockLevels,
  stockMovements,
  inventoryHandlers,
  adjustments,
  counts,
  lotCosts,
  transfers,
  publicationItems,
  publicationLocks,
  channels,
  channelCallSlots,
  materials,
  supplies,
  materialStock,
  materialMovements,
  materialConsumptions,
  editPatches,
  editPages,
  aiTokenDays,
  customers,
  customerEmails,
  idempotencyKeys,
  webhookEndpoints,
  webhookEvents,
  webhookOutbox,
  webhookDeliveries,
];

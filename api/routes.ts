import type { RouteSpec } from './route';
import { systemRoutes } from './system/routes';
import { docsRoutes } from './system/docs';
import { productRoutes } from './products/routes';
import { productStockRoutes } from './products/stock-reads';
import { publishRoutes } from './publication/publish';
import { readinessRoutes } from './publication/readiness';
import { publicationJobRoutes } from './publication/jobs';
import { retailGroupRoutes } from './publication/retail-group';
import { channelRoutes } from './channels/routes';
import { orderRoutes } from './orders/routes';
import { customerRoutes } from './customers/routes';
import { webhookRoutes } from './webhooks/routes';
import { locationRoutes } from './locations/routes';
import { csvRoutes } from './csv/routes';
import { csvAsyncRoutes } from './csv/async';
import { bulkRoutes } from './bulk/routes';
import { flowRoutes } from './edits/flow-routes';
import { aiRoutes } from './edits/ai-routes';
import { categoryRoutes } from './categories/routes';
import { stockRoutes } from './inventory/stock';
import { transferRoutes } from './inventory/transfers';
import { adjustmentRoutes } from './inventory/adjustments';
import { countRoutes } from './inventory/counts';
import { lotRoutes } from './inventory/lots';
import { reportRoutes } from './inventory/reports';
import { materialRoutes } from './materials/routes';
import { consumptionRoutes } from './consumption/routes';
import { modifierRoutes } from './modifiers/routes';
import { bomRoutes } from './bom/routes';

/** Every route of the API, by domain. Static paths come before `/:id` within a domain. */
export const allRoutes: RouteSpec[] = [
  ...systemRoutes,
  ...docsRoutes,
  ...csvRoutes,
  ...csvAsyncRoutes,
  ...bulkRoutes,
  ...flowRoutes,
  ...aiRoutes,
  ...categoryRoutes,
  ...stockRoutes,
  ...transferRoutes,
  ...adjustmentRoutes,
  ...countRoutes,
  ...lotRoutes,
  ...reportRoutes,
  ...productStockRoutes,
  ...consumptionRoutes,
  ...materialRoutes,
  ...publishRoutes,
  ...readinessRoutes,
  ...publicationJobRoutes,
  ...retailGroupRoutes,
  ...productRoutes,
  // after every `/products/<word>/…` route: their words are reserved SKUs (RESERVED_PRODUCT_SKUS)
  ...bomRoutes,
  ...modifierRoutes,
  ...locationRoutes,
  ...channelRoutes,
  ...orderRoutes,
  ...customerRoutes,
  ...webhookRoutes,
];

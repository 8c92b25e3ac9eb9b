import { defineCollection } from '../db/collection';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { newId } from '../ids';
import { locations } from '../locations/locations';

/**
 * An integration that manages stock (a marketplace's fulfilment, an ERP): the SKUs and locations
 * it lists are its own, and manual edits of them are refused.
 */
export interface InventoryHandler {
  _id: string; // ih_…
  tenantId: string;
  name: string;
  type: string;
  skus: string[];
  locationIds: string[];
  status: 'active' | 'paused';
  lastSyncAt: Date | null;
  syncCount: number;
  createdAt: Date;
}

export const inventoryHandlers = defineCollection<InventoryHandler>({
  name: 'inventory_handlers',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, createdAt: -1 } }],
});

export function handlerRefusal(what: string, handler: { _id: string; name: string }): AppError {
  return new AppError(
    403,
    'forbidden/inventory-handler',
    `${what} is managed by the integration ${handler.name} (${handler._id}); change it there`,
    {
      details: { handlerId: handler._id },
    },
  );
}

/** Refuses a manual stock edit of a SKU or location an active integration manages (403 forbidden/inventory-handler). */
export function assertManualEdit(tenantDb: TenantDb, sku: string, locationId: string): Promise<void> {
  return assertManualEdits(tenantDb, [sku], [locationId]);
}

/**
 * assertManualEdit for edits of several SKUs at several locations (a transfer's lines at its
 * origin and destination, a count's entries): the handlers and locations are read once.
 */
export async function assertManualEdits(tenantDb: TenantDb, skus: string[], locationIds: string[]): Promise<void> {
  const active = await tenantDb.collection(inventoryHandlers).find({ status: 'active' }).toArray();
  for (const sku of skus) {
    const bySku = active.find((h) => h.skus.includes(sku));
    if (bySku) throw handlerRefusal(`SKU ${sku}`, bySku);
  }
  for (const locationId of locationIds) {
    const byLocation = active.find((h) => h.locationIds.includes(locationId));
    if (byLocation) throw handlerRefusal(`Location ${locationId}`, byLocation);
  }
  const managed = await tenantDb
    .collection(locations)
    .find({ _id: { $in: locationIds }, managedBy: { $exists: true } } as never)
    .toArray();
  for (const locationId of locationIds) {
    const location = managed.find((l) => l._id === locationId);
    if (location?.managedBy)
      throw handlerRefusal(`Location ${locationId}`, { _id: location.managedBy, name: location.managedBy });
  }
}

export interface NewInventoryHandler {
  name: string;
  type: string;
  skus?: string[];
  locationIds?: string[];
}

export function presentHandler(h: InventoryHandler) {
  return {
    id: h._id,
    name: h.name,
    type: h.type,
    skus: h.skus,
    locationIds: h.locationIds,
    status: h.status,
    lastSyncAt: h.lastSyncAt,
    syncCount: h.syncCount,
    createdAt: h.createdAt,
  };
}

function handlerNotFound(id: string): AppError {
  return new AppError(404, 'not-found', `No inventory handler ${id}`);
}

/** The tenant's inventory integrations: registered, read, and asked to sync. */
export class InventoryHandlers {
  constructor(private readonly tenantDb: TenantDb) {}

  private get col() {
    return this.tenantDb.collection(inventoryHandlers);
  }

  /** `id`: derived from the request's Idempotency-Key, so a retry finds the handler it made (insertOnce). */
  async create(input: NewInventoryHandler, id = newId('ih')): Promise<InventoryHandler> {
    const doc = {
      _id: id,
      name: input.name,
      type: input.type,
      // as every inventory path names a SKU: trimmed, upper-case (a padded one would guard nothing)
      skus: (input.skus ?? []).map((s) => s.trim().toUpperCase()),
      locationIds: input.locationIds ?? [],
      status: 'active' as const,
      lastSyncAt: null,
      syncCount: 0,
      createdAt: new Date(),
    };
    return (await this.col.insertOnce(doc)) ?? { ...doc, tenantId: this.tenantDb.tenantId };
  }

  async get(id: string): Promise<InventoryHandler> {
    const h = await this.col.findOne({ _id: id });
    if (!h) throw handlerNotFound(id);
    return h;
  }

  /** Records a sync request: the time and one more to the count. */
  async sync(id: string): Promise<InventoryHandler> {
    if (!(await this.col.updateById(id, { $set: { lastSyncAt: new Date() }, $inc: { syncCount: 1 } })))
      throw handlerNotFound(id);
    return this.get(id);
  }
}

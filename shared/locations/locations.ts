import { defineCollection } from '../db/collection';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';

/** A place that holds stock (a warehouse, a store). Zones inside it are in `location_zones`. */
export interface LocationDoc {
  _id: string; // loc_…
  tenantId: string;
  name: string;
  type: 'location' | 'zone';
  isDefault: boolean;
  /** The tenant's system location (created with the tenant's first location read): never deleted, always a default candidate. */
  isSystem: boolean;
  /** An integration (inventory handler id) that manages this location's stock; manual edits are refused. */
  managedBy: string | null;
  createdAt: Date;
  updatedAt: Date;
  [more: string]: unknown;
}

export const locations = defineCollection<LocationDoc>({
  name: 'locations',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, createdAt: -1 } }],
});

/** The id of a tenant's system location (one per tenant, created on first use). */
export function systemLocationId(tenantId: string): string {
  return `loc_main_${tenantId.replace(/^ten_/, '')}`;
}

/** Location reads other domains need (inventory, transfers). */
export class Locations {
  constructor(private readonly tenantDb: TenantDb) {}

  private get col() {
    return this.tenantDb.collection(locations);
  }

  /** The tenant's system location, created (idempotently) the first time it is needed. */
  async system(): Promise<LocationDoc> {
    const _id = systemLocationId(this.tenantDb.tenantId);
    const found = await this.col.findOne({ _id });
    if (found) return found;
    const now = new Date();
    await this.col.updateOne({ _id }, { $setOnInsert: { name: 'Main location', type: 'location', isDefault: true, isSystem: true, managedBy: null, createdAt: now, updatedAt: now } }, { upsert: true }).catch(() => undefined);
    return (await this.col.findOne({ _id }))!;
  }

  async get(id: string): Promise<LocationDoc | null> {
    if (id === systemLocationId(this.tenantDb.tenantId)) return this.system();
    return this.col.findOne({ _id: id });
  }

  /** The location, or 404 `not-found/location`. */
  async require(id: string): Promise<LocationDoc> {
    const found = await this.get(id);
    if (!found) throw new AppError(404, 'not-found/location', `No location ${id}`, { field: 'locationId' });
    return found;
  }
}

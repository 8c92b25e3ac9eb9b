import type { Filter } from 'mongodb';
import { defineCollection } from '../db/collection';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';

export const LOCATION_TYPES = ['location', 'zone'] as const;
export type LocationType = (typeof LOCATION_TYPES)[number];
export const LOCATION_STATUSES = ['active', 'inactive'] as const;
export type LocationStatus = (typeof LOCATION_STATUSES)[number];
export const ADDRESS_FIELDS = ['street', 'city', 'state', 'postalCode', 'country'] as const;
export type Address = Partial<Record<(typeof ADDRESS_FIELDS)[number], string>>;

/** A place that holds stock (a warehouse, a store). Zones inside it are in `location_zones` (zones.ts). */
export interface LocationDoc {
  _id: string; // loc_…
  tenantId: string;
  name: string;
  type: LocationType;
  /**
   * A mirror of the tenant's default, kept for readers of the raw collection. The authority is
   * the system location's `defaultLocationId` (one document, so one atomic write decides the
   * default); `Locations` overlays it on every document it returns.
   */
  isDefault: boolean;
  /** The tenant's system location (created with the tenant's first location read): never deleted, always a default candidate. */
  isSystem: boolean;
  /** An integration (inventory handler id) that manages this location's stock; manual edits are refused. */
  managedBy: string | null;
  /** Always an object ({} when no part is known), so a partial update can `$set` one part. */
  address?: Address;
  code?: string;
  phone?: string;
  email?: string;
  /** Absent on old system locations: read as active. */
  status?: LocationStatus;
  /** Set by a delete while it checks that nothing is held here; cleared if it refuses. */
  deletingAt?: Date;
  /** Only on the system location: which location is the tenant's default (absent or null: the system one). */
  defaultLocationId?: string | null;
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

/** Location reads other domains need (inventory, transfers), and the default-location rule. */
export class Locations {
  constructor(private readonly tenantDb: TenantDb) {}

  private get col() {
    return this.tenantDb.collection(locations);
  }

  get systemId(): string {
    return systemLocationId(this.tenantDb.tenantId);
  }

  /** The tenant's system location as stored (no default overlay), created (idempotently) the first time it is needed. */
  async systemRaw(): Promise<LocationDoc> {
    const _id = this.systemId;
    const found = await this.col.findOne({ _id });
    if (found) return found;
    const now = new Date();
    await this.col
      .updateOne(
        { _id },
        {
          $setOnInsert: {
            name: 'Main location',
            type: 'location',
            address: {},
            status: 'active',
            isDefault: true,
            isSystem: true,
            managedBy: null,
            createdAt: now,
            updatedAt: now,
          },
        },
        { upsert: true },
      )
      .catch(() => undefined); // a concurrent first use inserted it: read it below
    return (await this.col.findOne({ _id }))!;
  }

  /** The tenant's system location, created (idempotently) the first time it is needed. */
  async system(): Promise<LocationDoc> {
    const sys = await this.systemRaw();
    return this.overlay(sys, await this.defaultIdFrom(sys));
  }

  async get(id: string): Promise<LocationDoc | null> {
    if (id === this.systemId) return this.system();
    if (!id) return null;
    // two primary-key reads: a location other than the system one is the default exactly when the pointer names it
    const [doc, sys] = await Promise.all([this.col.findOne({ _id: id }), this.col.findOne({ _id: this.systemId })]);
    return doc && { ...doc, isDefault: sys?.defaultLocationId === doc._id };
  }

  /** The location as stored, without the default overlay (asking for the system location creates it on first use). */
  async getRaw(id: string): Promise<LocationDoc | null> {
    if (!id) return null;
    if (id === this.systemId) return this.systemRaw();
    return this.col.findOne({ _id: id });
  }

  /**
   * Read after a write that put something at `id` (stock): 'gone' or 'deleting' when a delete got
   * there first. A delete marks the location before it looks for what is held there, and such a
   * writer reads the location after its write, so one of the two always sees the other.
   */
  async standing(id: string): Promise<'ok' | 'gone' | 'deleting'> {
    if (id === this.systemId) return 'ok';
    const doc = await this.col.findOne({ _id: id }, { projection: { deletingAt: 1 } });
    return !doc ? 'gone' : doc.deletingAt ? 'deleting' : 'ok';
  }

  /**
   * `standing`, once a delete under way has decided (it decides in milliseconds): what a writer
   * that added stock reads after its write. Still 'deleting' only when the delete did not decide
   * within `waitMs`.
   */
  async decidedStanding(id: string, waitMs = 5_000): Promise<'ok' | 'gone' | 'deleting'> {
    let standing = await this.standing(id);
    for (const until = Date.now() + waitMs; standing === 'deleting' && Date.now() < until;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      standing = await this.standing(id);
    }
    return standing;
  }

  /** The location, or 404 `not-found/location`. */
  async require(id: string): Promise<LocationDoc> {
    const found = await this.get(id);
    if (!found) throw new AppError(404, 'not-found/location', `No location ${id}`, { field: 'locationId' });
    return found;
  }

  /** The tenant's default location: always exactly one (the system location unless another was made default). */
  async defaultLocation(): Promise<LocationDoc> {
    const id = await this.defaultId();
    return (await this.get(id)) ?? this.system();
  }

  /** The id of the default location. A pointer to a location that no longer exists means the system one. */
  async defaultId(): Promise<string> {
    // no system location yet: nothing else can be the default either
    const sys = await this.col.findOne({ _id: this.systemId });
    return sys ? this.defaultIdFrom(sys) : this.systemId;
  }

  /** The default's id given the stored system location. */
  async defaultIdFrom(sys: LocationDoc): Promise<string> {
    const pointer = sys.defaultLocationId;
    if (!pointer || pointer === sys._id) return sys._id;
    return (await this.col.findOne({ _id: pointer })) ? pointer : sys._id;
  }

  /** A stored document with `isDefault` set from the pointer (the one source of truth). */
  overlay(doc: LocationDoc, defaultId: string): LocationDoc {
    return { ...doc, isDefault: doc._id === defaultId };
  }

  /** Points the default at `id` (one atomic write on the system location) and brings the mirrors in line. */
  async pointDefaultAt(id: string): Promise<void> {
    await this.systemRaw();
    await this.col.updateById(this.systemId, { $set: { defaultLocationId: id === this.systemId ? null : id } });
    await this.syncDefaultMirror();
  }

  /**
   * Hands the default back to the system location if (and only if) it is still `id`: a guarded
   * write, so a concurrent set-default of another location is never undone.
   */
  async releaseDefault(id: string): Promise<void> {
    if (id === this.systemId) return;
    await this.col.updateOne({ _id: this.systemId, defaultLocationId: id } as Filter<LocationDoc>, {
      $set: { defaultLocationId: null },
    });
    await this.syncDefaultMirror();
  }

  /**
   * Makes the stored `isDefault` flags match the pointer. Repeated until the pointer read after
   * the writes is the one they were made for, so when concurrent changes settle the last pass
   * wrote the current default.
   */
  async syncDefaultMirror(): Promise<void> {
    let target = await this.defaultId();
    for (let pass = 0; pass < 5; pass++) {
      await this.col.updateMany({ isDefault: true, _id: { $ne: target } } as Filter<LocationDoc>, {
        $set: { isDefault: false },
      });
      await this.col.updateById(target, { $set: { isDefault: true } });
      const now = await this.defaultId();
      if (now === target) return;
      target = now;
    }
  }
}

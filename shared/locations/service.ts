import type { Filter, UpdateFilter } from 'mongodb';
import { defineCollection } from '../db/collection';
import { isDuplicateKeyError } from '../db/duplicate-key';
import type { TenantDb } from '../db/tenant-db';
import { materialStock } from '../materials/collections';
import { counts } from '../inventory/counts';
import { transfers } from '../inventory/transfers';
import { orders } from '../orders/collections';
import { AppError } from '../errors/catalog';
import { newId } from '../ids';
import { pageWindow, type PageRequest } from '../paging';
import {
  ADDRESS_FIELDS,
  Locations,
  locations,
  type Address,
  type LocationDoc,
  type LocationStatus,
  type LocationType,
} from './locations';
import { locationZones, normalizeZoneCode, zoneKey, type ZoneDoc, type ZoneType } from './zones';

/** The spec's Locations codes (flat envelope). */
export const locationErrors = {
  /** GET /locations/{id} only: the spec gives it the bare `not-found`. */
  readNotFound: (id: string) => new AppError(404, 'not-found', `No location ${id}`, { field: 'id' }),
  /** Every other lookup by id (update, set-default, delete, zones, places). */
  notFound: (message: string, field = 'id') => new AppError(404, 'bad-request/not-found', message, { field }),
  /** PUT /locations without an id in the path. */
  missingId: (message: string) => new AppError(400, 'bad-request/missing-id', message, { field: 'id' }),
  systemLocation: (message: string) => new AppError(400, 'bad-request/system-location', message),
  cantCreate: (message: string, field?: string) =>
    new AppError(400, "bad-request/can't-create", message, field ? { field } : {}),
  cantUpdate: (message: string, field?: string) =>
    new AppError(400, "bad-request/can't-update", message, field ? { field } : {}),
  cantDelete: (message: string, details?: Record<string, unknown>) =>
    new AppError(400, "bad-request/can't-delete", message, details ? { details } : {}),
  duplicateCode: (code: string, locationId: string) =>
    new AppError(400, 'bad-request/duplicate-code', `Zone code ${code} is already used in location ${locationId}`, {
      field: 'code',
    }),
};

const zoneNotFound = (locationId: string, code: string) =>
  locationErrors.notFound(`No zone ${normalizeZoneCode(code)} in location ${locationId}`, 'code');

/** The default location takes stock and orders, so an inactive one never becomes it. */
const inactiveDefault = () =>
  locationErrors.cantUpdate(
    'An inactive location cannot be the default: make it active first (PUT /locations/{id} with status active)',
    'isDefault',
  );

/**
 * The stock balances inventory keeps (`shared/inventory` owns and indexes the collection); only
 * read here, to refuse deleting a location that still holds stock.
 */
interface StockLevelRead {
  _id: string; // `<tenantId>:<locationId>:<SKU>`
  tenantId: string;
  sku: string;
  locationId: string;
  onHand: number;
}
const stockLevelsRead = defineCollection<StockLevelRead>({ name: 'stock_levels', scope: 'tenant', indexes: [] });

export interface LocationInput {
  name: string;
  type: LocationType;
  address?: Address;
  code?: string;
  phone?: string;
  email?: string;
  isDefault?: boolean;
  status?: LocationStatus;
}

/** A partial update: `null` clears an optional field (code, phone, email, an address part). */
export interface LocationPatch {
  name?: string;
  type?: LocationType;
  address?: Partial<Record<keyof Address, string | null>>;
  code?: string | null;
  phone?: string | null;
  email?: string | null;
  isDefault?: boolean;
  status?: LocationStatus;
}

export interface LocationFilters {
  q?: string;
  type?: LocationType;
  status?: LocationStatus;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Each whitespace-separated token must appear (case-insensitive) in one of `fields`. */
function textClause(q: string, fields: string[]): Filter<LocationDoc> {
  // every word counts (q is at most 200 characters, so at most 100 words); a repeated word once
  const tokens = [...new Set(q.trim().split(/\s+/).filter(Boolean))];
  const one = (token: string) => {
    const re = new RegExp(escapeRegex(token), 'i');
    return { $or: fields.map((f) => ({ [f]: re })) };
  };
  if (tokens.length === 0) return {};
  return (tokens.length === 1 ? one(tokens[0]) : { $and: tokens.map(one) }) as Filter<LocationDoc>;
}

const LIST_TEXT_FIELDS = ['name', ...ADDRESS_FIELDS.map((f) => `address.${f}`)];
const PLACE_TEXT_FIELDS = ['name', 'address.street', 'address.city', 'address.state'];
/** System first, then oldest first; `_id` breaks ties so pages never overlap. */
const LIST_ORDER = { isSystem: -1, createdAt: 1, _id: 1 } as const;

function cleanAddress(address: Address | undefined): Address {
  const out: Address = {};
  for (const f of ADDRESS_FIELDS) {
    const v = address?.[f];
    if (typeof v === 'string' && v.trim()) out[f] = f === 'country' ? v.trim().toUpperCase() : v.trim();
  }
  return out;
}

/** Locations of one tenant: CRUD, the one default, place lookups and zones. */
export class LocationService {
  readonly locations: Locations;

  constructor(private readonly tenantDb: TenantDb) {
    this.locations = new Locations(tenantDb);
  }

  private get col() {
    return this.tenantDb.collection(locations);
  }

  private get zones() {
    return this.tenantDb.collection(locationZones);
  }

  /** The stored location with `isDefault` from the pointer, or null. */
  async find(id: string): Promise<LocationDoc | null> {
    return this.locations.get(id);
  }

  /** The location or 404 `bad-request/not-found`. */
  async require(id: string): Promise<LocationDoc> {
    const doc = await this.locations.getRaw(id);
    if (!doc) throw locationErrors.notFound(`No location ${id}`);
    return doc;
  }

  filter(f: LocationFilters): Filter<LocationDoc> {
    const parts: Filter<LocationDoc>[] = [];
    if (f.q && f.q.trim()) parts.push(textClause(f.q, LIST_TEXT_FIELDS));
    if (f.type) parts.push({ type: f.type });
    // the system location of an older tenant may have no status: it reads as active
    if (f.status) parts.push(f.status === 'active' ? { status: { $ne: 'inactive' } } : { status: 'inactive' });
    if (parts.length === 0) return {};
    return parts.length === 1 ? parts[0] : ({ $and: parts } as Filter<LocationDoc>);
  }

  async list(f: LocationFilters & PageRequest): Promise<{ docs: LocationDoc[]; total: number }> {
    const defaultId = await this.locations.defaultIdFrom(await this.locations.systemRaw()); // the system location exists from the first read on
    const filter = this.filter(f);
    const [docs, total] = await Promise.all([
      this.col.find(filter, { sort: LIST_ORDER, ...pageWindow(f) }).toArray(),
      this.col.countDocuments(filter),
    ]);
    return { docs: docs.map((d) => this.locations.overlay(d, defaultId)), total };
  }

  async count(f: LocationFilters): Promise<number> {
    await this.locations.systemRaw();
    return this.col.countDocuments(this.filter(f));
  }

  /** `id`: derived from the request's Idempotency-Key, so a retry finds the location it made (insertOnce). */
  async create(input: LocationInput, id = newId('loc')): Promise<LocationDoc> {
    // the default is where stock and orders go when none is named: it must be able to take them
    if (input.isDefault && input.status === 'inactive')
      throw locationErrors.cantCreate(
        'An inactive location cannot be the default: create it active, or without isDefault',
        'status',
      );
    await this.locations.systemRaw();
    const now = new Date();
    const _id = id;
    const doc = {
      _id,
      name: input.name.trim(),
      type: input.type,
      address: cleanAddress(input.address),
      // blank optional text is no value (answered null), never an empty string
      ...(input.code?.trim() ? { code: input.code.trim() } : {}),
      ...(input.phone?.trim() ? { phone: input.phone.trim() } : {}),
      ...(input.email?.trim() ? { email: input.email.trim() } : {}),
      status: input.status ?? 'active',
      isDefault: false,
      isSystem: false,
      managedBy: null,
      createdAt: now,
      updatedAt: now,
    };
    // an earlier attempt's location is made the default again: it may have died before
    await this.col.insertOnce(doc as Omit<LocationDoc, 'tenantId'>);
    if (input.isDefault) await this.makeDefault(_id);
    return (await this.find(_id))!;
  }

  async update(id: string, patch: LocationPatch): Promise<LocationDoc> {
    const doc = await this.require(id);
    if (doc.managedBy)
      throw locationErrors.cantUpdate(
        `Location ${id} is managed by the integration ${doc.managedBy}; change it there, or remove it from the integration first`,
      );
    if (
      !doc.isSystem &&
      patch.status === 'inactive' &&
      patch.isDefault !== false &&
      (patch.isDefault === true || (await this.find(id))?.isDefault)
    ) {
      throw locationErrors.cantUpdate(
        'The default location cannot be made inactive: make another location the default first (POST /locations/{id}/set-default)',
        'status',
      );
    }
    if (patch.isDefault === true && (patch.status ?? doc.status) === 'inactive') throw inactiveDefault();
    if (doc.isSystem) {
      if (patch.isDefault === false) {
        throw locationErrors.systemLocation(
          'The system location cannot lose isDefault: make another location the default (POST /locations/{id}/set-default) instead',
        );
      }
      if (patch.type !== undefined && patch.type !== 'location')
        throw locationErrors.systemLocation('The system location is always of type location');
      if (patch.status === 'inactive')
        throw locationErrors.systemLocation(
          'The system location is always active (it is the default whenever no other location is)',
        );
    }
    const $set: Record<string, unknown> = { updatedAt: new Date() };
    const $unset: Record<string, ''> = {};
    if (patch.name !== undefined) $set.name = patch.name.trim();
    if (patch.type !== undefined) $set.type = patch.type;
    if (patch.status !== undefined) $set.status = patch.status;
    for (const f of ['code', 'phone', 'email'] as const) {
      const v = patch[f];
      if (v === null || (typeof v === 'string' && !v.trim())) $unset[f] = '';
      else if (v !== undefined) $set[f] = v.trim();
    }
    if (patch.address) {
      if (doc.address && typeof doc.address === 'object') {
        // part by part, so a concurrent change of another part stands
        for (const f of ADDRESS_FIELDS) {
          const v = patch.address[f];
          if (v === null || (typeof v === 'string' && !v.trim())) $unset[`address.${f}`] = '';
          else if (v !== undefined) $set[`address.${f}`] = f === 'country' ? v.trim().toUpperCase() : v.trim();
        }
      } else {
        $set.address = cleanAddress(patch.address as Address);
      }
    }
    const update: UpdateFilter<LocationDoc> = { $set } as UpdateFilter<LocationDoc>;
    if (Object.keys($unset).length) (update as Record<string, unknown>).$unset = $unset;
    if (!(await this.col.updateById(id, update))) throw locationErrors.notFound(`No location ${id}`);
    if (patch.status === 'inactive' && patch.isDefault !== false) await this.keepDefaultActive(doc);
    if (patch.isDefault === true) await this.makeDefault(id);
    else if (patch.isDefault === false) await this.locations.releaseDefault(id);
    const after = await this.find(id);
    if (!after) throw locationErrors.notFound(`No location ${id}`);
    return after;
  }

  async setDefault(id: string): Promise<LocationDoc> {
    const doc = await this.require(id);
    if (doc.status === 'inactive') throw inactiveDefault();
    await this.makeDefault(id);
    const after = await this.find(id);
    if (!after) throw locationErrors.notFound(`No location ${id}`);
    return after;
  }

  /**
   * Points the default at `id`. If the location was deleted meanwhile, the pointer goes back to
   * the system location (guarded, so a later set-default of another location stands) and 404.
   */
  private async makeDefault(id: string): Promise<void> {
    await this.locations.pointDefaultAt(id);
    const after = await this.locations.getRaw(id);
    if (!after) {
      await this.locations.releaseDefault(id);
      throw locationErrors.notFound(`No location ${id}`);
    }
    // made inactive meanwhile (that update checked the pointer before this write): hand it back
    if (after.status === 'inactive') {
      await this.locations.releaseDefault(id);
      throw inactiveDefault();
    }
  }

  /**
   * The other half of the check in `makeDefault`: after writing `inactive`, read the pointer. A
   * set-default that slipped in between is seen by one side or the other, and the inactive
   * location never stays the default.
   */
  private async keepDefaultActive(before: LocationDoc): Promise<void> {
    if ((await this.locations.defaultId()) !== before._id) return;
    await this.col.updateOne({ _id: before._id, status: 'inactive' } as Filter<LocationDoc>, {
      $set: { status: before.status ?? 'active', updatedAt: new Date() },
    });
    throw locationErrors.cantUpdate(
      'The default location cannot be made inactive: make another location the default first (POST /locations/{id}/set-default)',
      'status',
    );
  }

  async delete(id: string): Promise<LocationDoc> {
    const doc = await this.require(id);
    if (doc.isSystem) throw locationErrors.systemLocation('The system location cannot be deleted');
    if (doc.managedBy) {
      throw locationErrors.cantDelete(
        `Location ${id} is managed by the integration ${doc.managedBy}; remove it from the integration first`,
        { managedBy: doc.managedBy },
      );
    }
    // marked before looking: a stock write that lands after the look reads the mark and undoes itself
    await this.col.updateOne({ _id: id } as Filter<LocationDoc>, { $set: { deletingAt: new Date() } });
    try {
      await this.refuseIfHeld(id);
    } catch (err) {
      await this.col.updateOne({ _id: id } as Filter<LocationDoc>, { $unset: { deletingAt: '' } });
      throw err;
    }
    if (!(await this.col.deleteById(id))) throw locationErrors.notFound(`No location ${id}`);
    await this.zones.deleteMany({ locationId: id });
    const sys = await this.locations.systemRaw();
    if (sys.defaultLocationId === id) await this.locations.releaseDefault(id);
    return doc;
  }

  /** Refuses (400 can't-delete) while stock, open transfers, open counts or open orders are at the location. */
  private async refuseIfHeld(id: string): Promise<void> {
    const stock = this.tenantDb.collection(stockLevelsRead);
    // an oversold (negative) balance is held too: deleted with the location, no PUT could clear it
    const held = { locationId: id, $or: [{ onHand: { $gt: 0 } }, { onHand: { $lt: 0 } }] };
    const holding = await stock.find(held).limit(5).toArray();
    if (holding.length) {
      const skus = await stock.countDocuments(held);
      throw locationErrors.cantDelete(
        `Location ${id} still holds stock of ${skus} SKU${skus === 1 ? '' : 's'} (${holding.map((l) => `${l.sku}: ${l.onHand}`).join(', ')}${skus > holding.length ? ', …' : ''}); transfer or adjust it to zero first`,
        { skusWithStock: skus, examples: holding.map((l) => ({ sku: l.sku, onHand: l.onHand })) },
      );
    }
    const materialHolding = (
      await this.tenantDb
        .collection(materialStock)
        .find({ 'locations.locationId': id }, { projection: { sku: 1, kind: 1, locations: 1 } })
        .toArray()
    ).filter((d) => d.locations.some((l) => l.locationId === id && l.quantity > 0));
    if (materialHolding.length) {
      const names = materialHolding.slice(0, 5).map((d) => `${d.kind} ${d.sku}`);
      throw locationErrors.cantDelete(
        `Location ${id} still holds stock of ${names.join(', ')}${materialHolding.length > 5 ? ', …' : ''}; transfer it elsewhere first`,
        { materialsWithStock: materialHolding.length, examples: materialHolding.slice(0, 5).map((d) => d.sku) },
      );
    }
    // a transfer not yet received is stock on its way from or to here: its receive would strand it
    const open = await this.tenantDb
      .collection(transfers)
      .find(
        { status: { $in: ['pending', 'approved'] }, $or: [{ originId: id }, { destinationId: id }] },
        { projection: { _id: 1 } },
      )
      .limit(5)
      .toArray();
    if (open.length)
      throw locationErrors.cantDelete(
        `Location ${id} is the origin or destination of transfers not yet received (${open.map((t) => t._id).join(', ')}); receive or cancel them first`,
        { openTransfers: open.map((t) => t._id) },
      );
    // a count not yet completed corrects stock here when it completes: with the location gone it
    // could never complete (counts have no cancel), so it holds the location as a transfer does
    const openCounts = await this.tenantDb
      .collection(counts)
      .find({ locationId: id, status: { $in: ['open', 'completing'] } }, { projection: { _id: 1 } })
      .limit(5)
      .toArray();
    if (openCounts.length)
      throw locationErrors.cantDelete(
        `Location ${id} has counts not yet completed (${openCounts.map((c) => c._id).join(', ')}); complete them first`,
        { openCounts: openCounts.map((c) => c._id) },
      );
    // an order that may still take stock here (pending) or give it back (accepted, preparing, or
    // cancelled with its stock not yet returned)
    const orderList = await this.tenantDb
      .collection(orders)
      .find(
        {
          $or: [
            {
              orderStatus: { $in: ['pending', 'accepted', 'preparing'] },
              $or: [{ locationId: id }, { 'stock.locationId': id }],
            },
            { stockReturnPending: true, 'stock.locationId': id },
          ],
        } as never,
        { projection: { _id: 1 }, limit: 5 },
      )
      .toArray();
    if (orderList.length)
      throw locationErrors.cantDelete(
        `Location ${id} is where open orders take or return their stock (${orderList.map((o) => o._id.toHexString()).join(', ')}); finish, cancel or move them first`,
        { openOrders: orderList.map((o) => o._id.toHexString()) },
      );
  }

  /** Locations whose name or address (street, city, state) contains every word of `q`. */
  async searchPlaces(q: string, limit: number): Promise<{ docs: LocationDoc[]; total: number }> {
    return this.listWhere(textClause(q, PLACE_TEXT_FIELDS), limit);
  }

  /** Locations with exactly this postal code (ignoring case and surrounding spaces). */
  async byPostalCode(postalCode: string, limit: number): Promise<{ docs: LocationDoc[]; total: number }> {
    return this.listWhere(
      { 'address.postalCode': new RegExp(`^${escapeRegex(postalCode.trim())}$`, 'i') } as Filter<LocationDoc>,
      limit,
    );
  }

  private async listWhere(filter: Filter<LocationDoc>, limit: number): Promise<{ docs: LocationDoc[]; total: number }> {
    const defaultId = await this.locations.defaultIdFrom(await this.locations.systemRaw());
    const [docs, total] = await Promise.all([
      this.col.find(filter).sort(LIST_ORDER).limit(limit).toArray(),
      this.col.countDocuments(filter),
    ]);
    return { docs: docs.map((d) => this.locations.overlay(d, defaultId)), total };
  }

  /** `run`: the request's Idempotency-Key run (KeyedRun), so a retry of a request that died answers the zone it made. */
  async createZone(
    locationId: string,
    input: { code: string; name: string; type: ZoneType },
    run?: string,
  ): Promise<ZoneDoc> {
    await this.require(locationId);
    const code = normalizeZoneCode(input.code);
    const now = new Date();
    const zone: Omit<ZoneDoc, 'tenantId'> = {
      _id: zoneKey(this.tenantDb.tenantId, locationId, code),
      locationId,
      code,
      name: input.name.trim(),
      type: input.type,
      createdAt: now,
      updatedAt: now,
      ...(run ? { createdByRun: run } : {}),
    };
    try {
      await this.zones.insertOne(zone);
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      const earlier = run ? await this.zones.findOne({ _id: zone._id }) : null;
      if (earlier && earlier.createdByRun === run) return earlier;
      throw locationErrors.duplicateCode(code, locationId);
    }
    // the location may have been deleted between the check and the insert: leave no orphan
    if (!(await this.locations.getRaw(locationId))) {
      await this.zones.deleteById(zone._id);
      throw locationErrors.notFound(`No location ${locationId}`);
    }
    return { ...zone, tenantId: this.tenantDb.tenantId };
  }

  async listZones(locationId: string): Promise<ZoneDoc[]> {
    await this.require(locationId);
    return this.zones.find({ locationId }).sort({ code: 1 }).toArray();
  }

  async getZone(locationId: string, code: string): Promise<ZoneDoc> {
    await this.require(locationId);
    const zone = await this.zones.findOne({ _id: zoneKey(this.tenantDb.tenantId, locationId, code) });
    if (!zone) throw zoneNotFound(locationId, code);
    return zone;
  }

  async deleteZone(locationId: string, code: string): Promise<ZoneDoc> {
    await this.require(locationId);
    const key = zoneKey(this.tenantDb.tenantId, locationId, code);
    const zone = await this.zones.findOne({ _id: key });
    if (!zone || !(await this.zones.deleteById(key))) throw zoneNotFound(locationId, code);
    return zone;
  }
}

import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { newId } from '../ids';
import { Locations } from '../locations/locations';
import { pageWindow, slicePage, type PageRequest } from '../paging';
import { Catalog } from '../products/catalog';
import { stockLevels, type StockLevel } from './collections';
import { assertManualEdit } from './handlers';
import { Ledger } from './ledger';
import { keepOffDeleted } from './off-deleted';
import { knownSku } from './skus';
import { calculatedAmong, levelsAt, standingLocationIds } from './stock-view';
import { reused } from '../idempotency/keys';

export function presentLevel(l: StockLevel) {
  return { sku: l.sku, locationId: l.locationId, onHand: l.onHand, updatedAt: l.updatedAt };
}

export interface SkuTotal {
  sku: string;
  total: number;
  byLocation: { locationId: string; onHand: number }[];
}

/** Per SKU: the total and the balance at each location, by SKU. */
function totalsBySku(levels: StockLevel[]): SkuTotal[] {
  const bySku = new Map<string, SkuTotal>();
  for (const l of levels) {
    const entry = bySku.get(l.sku) ?? { sku: l.sku, total: 0, byLocation: [] };
    entry.total += l.onHand;
    entry.byLocation.push({ locationId: l.locationId, onHand: l.onHand });
    bySku.set(l.sku, entry);
  }
  return [...bySku.values()].sort((a, b) => a.sku.localeCompare(b.sku));
}

/** One line of a bulk update as the API's schema lets it through (bulkSetBody in input-schemas.ts). */
export interface BulkSetItem {
  sku: string;
  stock: number;
  /** The default location when absent or null. */
  locationId?: string | null;
}

export interface BulkSetResult {
  sku: string;
  locationId: string;
  success: boolean;
  onHand?: number;
  error?: { code: string; message: string };
}

/** Balances of one tenant: reads, and manual sets through the ledger by `actor` (a key id). */
export class Stock {
  constructor(
    private readonly tenantDb: TenantDb,
    private readonly actor: string,
  ) {}

  private get levels() {
    return this.tenantDb.collection(stockLevels);
  }

  /**
   * Balances (one per SKU and location), of one SKU or location when given, by SKU then location;
   * none at a deleted location (standingLocationIds).
   */
  async balances(q: PageRequest & { sku?: string; locationId?: string }) {
    const standing = await standingLocationIds(this.tenantDb);
    const named = q.locationId?.trim();
    const filter = {
      ...(q.sku?.trim() ? { sku: q.sku.trim().toUpperCase() } : {}),
      locationId: { $in: named ? standing.filter((id) => id === named) : standing },
    };
    const [rows, totalCount] = await Promise.all([
      this.levels
        .find(filter, { sort: { sku: 1, locationId: 1 }, ...pageWindow(q), projection: { recent: 0 } })
        .toArray(),
      this.levels.countDocuments(filter),
    ]);
    return { items: await this.withCalculated(rows as StockLevel[]), totalCount };
  }

  /**
   * Balance rows as shown: a calculated bundle's (own or variant SKU) shows what its components
   * make up at that location, marked calculated, as its single read does (stock-view.ts).
   */
  private async withCalculated(rows: StockLevel[]) {
    const calculated = await calculatedAmong(
      this.tenantDb,
      rows.map((r) => r.sku),
    );
    return rows.map((r) => {
      const made = calculated.get(r.sku);
      if (!made) return presentLevel(r);
      const onHand = made.byLocation.find((b) => b.locationId === r.locationId)?.onHand ?? 0;
      return { ...presentLevel(r), onHand, updatedAt: null, calculated: true };
    });
  }

  /** Per SKU: the total and the balance at each location (a calculated bundle's as withCalculated). */
  async totals(page: PageRequest): Promise<{ items: (SkuTotal & { calculated?: true })[]; totalCount: number }> {
    const all = totalsBySku(
      (await this.levels.find(await levelsAt(this.tenantDb), { projection: { recent: 0 } }).toArray()) as StockLevel[],
    );
    const items = slicePage(all, page);
    const calculated = await calculatedAmong(
      this.tenantDb,
      items.map((i) => i.sku),
    );
    return {
      items: items.map((i) => {
        const made = calculated.get(i.sku);
        return made ? { sku: i.sku, total: made.total, byLocation: made.byLocation, calculated: true as const } : i;
      }),
      totalCount: all.length,
    };
  }

  /** The stock of one SKU of the tenant (404 not-found otherwise) at every location. */
  async ofSku(rawSku: string) {
    const sku = await knownSku(this.tenantDb, rawSku);
    const owner = (await new Catalog(this.tenantDb).skuOwner(sku))!;
    // a calculated bundle shows what its components make up (see stock-view.ts), marked as such
    const calculated = (await calculatedAmong(this.tenantDb, [sku])).get(sku);
    const [entry] = calculated ? [calculated] : totalsBySku(await this.standingBalancesOf(sku));
    return {
      sku,
      productId: owner.productId,
      kind: owner.kind,
      total: entry?.total ?? 0,
      byLocation: entry?.byLocation ?? [],
      ...(calculated ? { calculated: true } : {}),
    };
  }

  /** A SKU's balances at the locations that exist (a deleted location's 0 rows are not shown). */
  private async standingBalancesOf(sku: string): Promise<StockLevel[]> {
    const [levels, standing] = await Promise.all([
      new Ledger(this.tenantDb).balancesOf(sku),
      standingLocationIds(this.tenantDb),
    ]);
    const ids = new Set(standing);
    return levels.filter((l) => ids.has(l.locationId));
  }

  /** The balances held at one location of the tenant (404 not-found/location otherwise). */
  async atLocation(locationId: string, page: PageRequest) {
    await new Locations(this.tenantDb).require(locationId);
    const filter = { locationId };
    const [rows, totalCount] = await Promise.all([
      this.levels.find(filter, { sort: { sku: 1 }, ...pageWindow(page), projection: { recent: 0 } }).toArray(),
      this.levels.countDocuments(filter),
    ]);
    return { items: await this.withCalculated(rows as StockLevel[]), totalCount };
  }

  /** One SKU's balance at one location; 0 when it never had any. */
  async level(locationId: string, rawSku: string) {
    await new Locations(this.tenantDb).require(locationId);
    const sku = await knownSku(this.tenantDb, rawSku);
    const calculated = (await calculatedAmong(this.tenantDb, [sku], locationId)).get(sku);
    if (calculated) return { sku, locationId, onHand: calculated.total, updatedAt: null, calculated: true };
    const level = await new Ledger(this.tenantDb).level(sku, locationId);
    return level ? presentLevel(level) : { sku, locationId, onHand: 0, updatedAt: null };
  }

  /**
   * Sets one balance by hand: the location must exist, no integration may manage it, the SKU must
   * be the tenant's. With a client's key, a retry answers the first result.
   */
  async set(locationId: string, rawSku: string, stock: number, idempotencyKey?: string) {
    await new Locations(this.tenantDb).require(locationId);
    const sku = await knownSku(this.tenantDb, rawSku);
    await assertManualEdit(this.tenantDb, sku, locationId);
    // a client's key names a movement of this balance only: the same key for another SKU or location
    // is another movement, and it cannot collide with the keys the service makes (adj:…, trf:…)
    const key = idempotencyKey && `put:${locationId}:${sku}:${idempotencyKey}`;
    const ledger = new Ledger(this.tenantDb);
    // a retry sets the same stock: the key sent with another value would answer the first as if set
    const first = key ? await ledger.movement(key) : null;
    if (first && first.expect !== undefined && first.expect + first.delta !== stock) throw reused();
    const { onHand, movement } = await ledger.set({
      sku,
      locationId,
      target: stock,
      reason: 'manual',
      actor: this.actor,
      idempotencyKey: key,
    });
    if (movement) await keepOffDeleted(this.tenantDb, movement, this.actor);
    return { sku, locationId, onHand, movementId: movement?.idempotencyKey ?? null };
  }

  /**
   * Sets many balances, one after the other; an item that cannot be applied (an unknown SKU or
   * location, a SKU an integration manages) is a failed result, not a refusal of the others.
   */
  async bulkSet(items: BulkSetItem[], idempotencyKey = newId('bulk')) {
    const fallback = (await new Locations(this.tenantDb).defaultLocation())._id;
    const results: BulkSetResult[] = [];
    for (const [i, item] of items.entries()) {
      // the result names the SKU as it is stored (set trims and upper-cases it the same way)
      const sku = item.sku.trim().toUpperCase();
      const locationId = item.locationId ?? fallback;
      try {
        const done = await this.set(locationId, sku, item.stock, `${idempotencyKey}:${i}`);
        results.push({ sku, locationId, success: true, onHand: done.onHand });
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        results.push({
          sku,
          locationId,
          success: false,
          error: { code: err.codeFor('inventory'), message: err.message },
        });
      }
    }
    const failed = results.filter((r) => !r.success).length;
    return { results, succeeded: results.length - failed, failed };
  }
}

import { defineCollection } from '../db/collection';
import { isDuplicateKeyError } from '../db/duplicate-key';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { mapLimit } from '../concurrency';
import { Locations } from '../locations/locations';
import { pageWindow, type PageRequest } from '../paging';
import { Catalog, parseProductId } from '../products/catalog';
import { products } from '../products/collections';
import type { ProductDoc } from '../products/types';
import { stockMovements, type StockMovement } from './collections';
import { Ledger } from './ledger';
import { knownSku } from './skus';

/**
 * Lots are receipts of stock, derived from the ledger rather than stored: every applied movement
 * that added stock (delta > 0) is one lot of `delta` units at its SKU and location, received when
 * the movement was recorded. Its lot number is the movement's idempotency key (unique per tenant),
 * so a lot is read by the ledger's primary key and nothing else in the service has to change.
 *
 * A lot's unit cost is the product's (or variant's) cost when the stock came in. The catalog keeps
 * no cost history, so the paths that add stock note it beside the ledger at that moment
 * (`recordLotCost`, keyed like the movement): adjustments and counts do, and a transfer notes
 * what the units cost at its origin (`outgoingUnitCost`). A lot whose path noted nothing (the
 * stock routes) is costed at the catalog's current cost, and says so (`costSource: 'catalog'`).
 * No cost at all is 0.
 */
export interface LotCost {
  _id: string; // `<tenantId>:<idempotencyKey>` — the movement's _id
  tenantId: string;
  sku: string;
  costPerUnit: number;
  recordedAt: Date;
}

export const lotCosts = defineCollection<LotCost>({
  name: 'inventory_lot_costs',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, sku: 1 } }],
});

export type ValuationMethod = 'fifo' | 'lifo' | 'average';
export const VALUATION_METHODS: ValuationMethod[] = ['fifo', 'lifo', 'average'];

/** What the catalog says about a SKU that inventory reads need. */
export interface SkuFacts {
  sku: string;
  productId: string;
  kind: 'product' | 'variant';
  name: string | null;
  /** The variant's cost, else the product's, else 0. */
  cost: number;
  /** The variant's minAlertStock, else the product's, else 5. */
  minAlertStock: number;
}

export const DEFAULT_MIN_ALERT_STOCK = 5;

export function roundMoney(n: number): number {
  return Math.round((n + Number.EPSILON) * 100) / 100;
}
function roundUnit(n: number): number {
  return Math.round((n + Number.EPSILON) * 10000) / 10000;
}

function factsOf(product: ProductDoc, sku: string, kind: 'product' | 'variant'): SkuFacts {
  const variant = kind === 'variant' ? product.variants.find((v) => v.sku === sku) : undefined;
  const productCost = typeof product.cost === 'number' ? product.cost : 0;
  const cost = variant && typeof variant.cost === 'number' ? variant.cost : productCost;
  const min = variant?.minAlertStock ?? product.minAlertStock ?? DEFAULT_MIN_ALERT_STOCK;
  return {
    sku,
    productId: product._id.toHexString(),
    kind,
    name: (variant ?? product).title?.value ?? null,
    cost,
    minAlertStock: min,
  };
}

/** Catalog facts of many SKUs: one primary-key read per SKU claim and per product. Unknown SKUs are absent. */
export async function skuFacts(tenantDb: TenantDb, skus: Iterable<string>): Promise<Map<string, SkuFacts>> {
  const catalog = new Catalog(tenantDb);
  const list = [...new Set(skus)];
  const claims = await mapLimit(list, 8, (sku) => catalog.skuOwner(sku));
  const productIds = [...new Set(claims.flatMap((c) => (c ? [c.productId] : [])))];
  const docs = await mapLimit(productIds, 8, (id) => {
    const _id = parseProductId(id);
    return _id ? tenantDb.collection(products).findOne({ _id }) : Promise.resolve(null);
  });
  const byId = new Map(docs.flatMap((d) => (d ? [[d._id.toHexString(), d] as const] : [])));
  const out = new Map<string, SkuFacts>();
  list.forEach((sku, i) => {
    const claim = claims[i];
    const product = claim && byId.get(claim.productId);
    if (claim && product && (claim.kind === 'product' || claim.kind === 'variant'))
      out.set(sku, factsOf(product, sku, claim.kind));
  });
  return out;
}

/**
 * Notes the unit cost of the stock the movement `idempotencyKey` is about to add: `costOf()`, by
 * default the SKU's current catalog cost. Call it before applying the movement; the first note
 * wins, so a retry keeps the cost of the first attempt.
 */
export async function recordLotCost(
  tenantDb: TenantDb,
  idempotencyKey: string,
  sku: string,
  costOf?: () => Promise<number>,
): Promise<number> {
  const col = tenantDb.collection(lotCosts);
  const _id = `${tenantDb.tenantId}:${idempotencyKey}`;
  const found = await col.findOne({ _id });
  if (found) return found.costPerUnit;
  const cost = costOf ? await costOf() : ((await skuFacts(tenantDb, [sku])).get(sku)?.cost ?? 0);
  try {
    await col.insertOne({ _id, sku, costPerUnit: cost, recordedAt: new Date() });
    return cost;
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    return (await col.findOne({ _id }))?.costPerUnit ?? cost;
  }
}

/**
 * What `quantity` units leaving `locationId` now cost each: stock leaves first in, first out, so
 * they are the oldest of the lots FIFO says remain (units beyond every lot at the catalog cost).
 * A transfer notes it as the cost of what it brings to its destination.
 */
export async function outgoingUnitCost(
  tenantDb: TenantDb,
  sku: string,
  locationId: string,
  quantity: number,
): Promise<number> {
  if (!(quantity > 0)) return 0;
  const { lots } = await new Lots(tenantDb).valuation(sku, locationId, 'fifo');
  let left = quantity;
  let total = 0;
  for (const lot of lots) {
    const take = Math.min(lot.remaining, left);
    total += take * lot.costPerUnit;
    left -= take;
    if (left <= 0) break;
  }
  if (left > 0) total += left * ((await skuFacts(tenantDb, [sku])).get(sku)?.cost ?? 0);
  return roundUnit(total / quantity);
}

export interface Lot {
  lotNumber: string;
  sku: string;
  locationId: string;
  quantity: number;
  costPerUnit: number;
  costSource: 'recorded' | 'catalog';
  receivedAt: Date;
  reason: string;
  reference: { type: string; id: string } | null;
}

export interface ValuedLot {
  lotNumber: string | null;
  receivedAt: Date | null;
  remaining: number;
  costPerUnit: number;
  value: number;
}

export interface Valuation {
  sku: string;
  locationId: string;
  method: ValuationMethod;
  quantity: number;
  totalValue: number;
  unitCost: number;
  lots: ValuedLot[];
}

export function lotNotFound(lotNumber: string): AppError {
  return new AppError(404, 'not-found', `No lot ${lotNumber}`);
}

/**
 * Values `onHand` units from the receipts (oldest first):
 * - fifo: the oldest receipts were consumed first, so what remains is the newest receipts;
 * - lifo: the newest were consumed first, so what remains is the oldest;
 * - average: on hand × the weighted average cost of every receipt (Σ qty·cost / Σ qty); the lots
 *   listed are those FIFO says remain, each valued at the average cost.
 * Units on hand beyond every receipt (a movement not yet marked applied) are listed with lotNumber
 * null at `fallbackCost`. The total is rounded to cents once and the lots' values add up to it
 * (withValues); the unit cost is rounded to 4 decimals.
 */
export function valueOnHand(
  receipts: Pick<Lot, 'lotNumber' | 'quantity' | 'costPerUnit' | 'receivedAt'>[],
  onHand: number,
  method: ValuationMethod,
  fallbackCost: number,
) {
  const order = method === 'lifo' ? receipts : [...receipts].reverse(); // the lots that remain, first to last taken
  const remaining: { lotNumber: string | null; receivedAt: Date | null; remaining: number; costPerUnit: number }[] = [];
  let left = Math.max(0, onHand);
  for (const r of order) {
    if (left <= 0) break;
    const take = Math.min(r.quantity, left);
    remaining.push({ lotNumber: r.lotNumber, receivedAt: r.receivedAt, remaining: take, costPerUnit: r.costPerUnit });
    left -= take;
  }
  if (left > 0) remaining.push({ lotNumber: null, receivedAt: null, remaining: left, costPerUnit: fallbackCost });
  // listed oldest first whatever the method
  remaining.sort((a, b) => (a.receivedAt?.getTime() ?? Infinity) - (b.receivedAt?.getTime() ?? Infinity));
  if (method === 'average') {
    const units = receipts.reduce((s, r) => s + r.quantity, 0);
    const avg = units > 0 ? receipts.reduce((s, r) => s + r.quantity * r.costPerUnit, 0) / units : fallbackCost;
    const lots = withValues(remaining, (l) => l.remaining * avg);
    return {
      quantity: Math.max(0, onHand),
      totalValue: roundMoney(Math.max(0, onHand) * avg),
      unitCost: roundUnit(avg),
      lots,
    };
  }
  const lots = withValues(remaining, (l) => l.remaining * l.costPerUnit);
  const exact = remaining.reduce((s, l) => s + l.remaining * l.costPerUnit, 0);
  const quantity = Math.max(0, onHand);
  return { quantity, totalValue: roundMoney(exact), unitCost: quantity > 0 ? roundUnit(exact / quantity) : 0, lots };
}

/**
 * Each lot's value in cents such that the values add up to the rounded total: a lot's value is
 * the rounded running total at it less the rounded running total before it (each within a cent
 * of its own rounding), so three lots of 5/3 are 1.67, 1.66, 1.67 and sum to 5.00.
 */
function withValues<L>(lots: L[], exactOf: (l: L) => number): (L & { value: number })[] {
  let running = 0;
  let shown = 0;
  return lots.map((l) => {
    running += exactOf(l);
    const value = roundMoney(roundMoney(running) - shown);
    shown = roundMoney(shown + value);
    return { ...l, value };
  });
}

/** Read-only lots of one tenant, from the ledger. */
export class Lots {
  constructor(private readonly tenantDb: TenantDb) {}

  private get movements() {
    return this.tenantDb.collection(stockMovements);
  }

  /** Lots as the API shows them: each with its recorded cost, else the SKU's current catalog cost. */
  async present(movements: StockMovement[]): Promise<Lot[]> {
    const costs = await mapLimit(movements, 8, (m) => this.tenantDb.collection(lotCosts).findOne({ _id: m._id }));
    const missing = movements.filter((_, i) => !costs[i]).map((m) => m.sku);
    const facts = missing.length ? await skuFacts(this.tenantDb, missing) : new Map<string, SkuFacts>();
    return movements.map((m, i) => ({
      lotNumber: m.idempotencyKey,
      sku: m.sku,
      locationId: m.locationId,
      quantity: m.delta,
      costPerUnit: costs[i]?.costPerUnit ?? facts.get(m.sku)?.cost ?? 0,
      costSource: costs[i] ? 'recorded' : 'catalog',
      receivedAt: m.createdAt,
      reason: m.reason,
      reference: m.reference,
    }));
  }

  /** The filter of receipts: applied movements that added stock. */
  static receiptFilter(f: { sku?: string; locationId?: string } = {}) {
    // a transfer's reversal puts back what the same receive attempt took: not a receipt
    return {
      status: 'applied' as const,
      delta: { $gt: 0 },
      reason: { $ne: 'transfer_reversal' },
      // a receipt taken back (it landed at a location being deleted) is none
      undoneBy: { $exists: false },
      ...(f.sku ? { sku: f.sku } : {}),
      ...(f.locationId?.trim() ? { locationId: f.locationId.trim() } : {}),
    };
  }

  async list(q: PageRequest & { sku?: string; locationId?: string }): Promise<{ lots: Lot[]; totalCount: number }> {
    const filter = Lots.receiptFilter({ ...q, sku: q.sku?.trim().toUpperCase() });
    const [docs, totalCount] = await Promise.all([
      this.movements.find(filter, { sort: { createdAt: -1, _id: -1 }, ...pageWindow(q) }).toArray(),
      this.movements.countDocuments(filter),
    ]);
    return { lots: await this.present(docs as StockMovement[]), totalCount };
  }

  async get(lotNumber: string): Promise<Lot> {
    const m = await this.movements.findOne({ _id: `${this.tenantDb.tenantId}:${lotNumber}` });
    if (!m || m.status !== 'applied' || !(m.delta > 0) || m.reason === 'transfer_reversal' || m.undoneBy)
      throw lotNotFound(lotNumber);
    return (await this.present([m]))[0];
  }

  /** Every receipt of a SKU at a location, oldest first. */
  async receipts(sku: string, locationId: string): Promise<Lot[]> {
    const docs = await this.movements
      .find(Lots.receiptFilter({ sku, locationId }), { sort: { createdAt: 1, _id: 1 } })
      .toArray();
    return this.present(docs as StockMovement[]);
  }

  /** Values the stock of a SKU of the tenant (404 not-found) at one of its locations (404 not-found/location). */
  async valueSku(rawSku: string, locationId: string, method: ValuationMethod): Promise<Valuation> {
    const sku = await knownSku(this.tenantDb, rawSku);
    await new Locations(this.tenantDb).require(locationId);
    return this.valuation(sku, locationId, method);
  }

  async valuation(sku: string, locationId: string, method: ValuationMethod): Promise<Valuation> {
    const [receipts, onHand, facts] = await Promise.all([
      this.receipts(sku, locationId),
      new Ledger(this.tenantDb).onHand(sku, locationId),
      skuFacts(this.tenantDb, [sku]),
    ]);
    const valued = valueOnHand(receipts, onHand, method, facts.get(sku)?.cost ?? 0);
    return {
      sku,
      locationId,
      method,
      quantity: valued.quantity,
      totalValue: valued.totalValue,
      unitCost: valued.unitCost,
      lots: valued.lots.map((l) => ({
        lotNumber: l.lotNumber,
        receivedAt: l.receivedAt,
        remaining: l.remaining,
        costPerUnit: l.costPerUnit,
        value: l.value,
      })),
    };
  }
}

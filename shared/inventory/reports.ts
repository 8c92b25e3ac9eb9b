import type { TenantDb } from '../db/tenant-db';
import { Locations, locations } from '../locations/locations';
import { badRequest } from './adjustments';
import { stockLevels, stockMovements, type StockLevel, type StockMovement } from './collections';
import { DEFAULT_MIN_ALERT_STOCK, Lots, roundMoney, skuFacts, type SkuFacts } from './lots';
import { calculatedAmong, levelsAt } from './stock-view';

/**
 * Inventory statistics and synchronous reports, read from the ledger's balances and movements and
 * the catalog (names, minAlertStock, cost).
 *
 * Stock status is judged per SKU over the scope (the whole tenant, or one location when a report
 * names one), over the SKUs that have a balance somewhere (the stock-tracked ones):
 * out of stock when the total on hand is 0, low stock when it is above 0 and at most the SKU's
 * minAlertStock (the variant's, else the product's, else 5).
 *
 * The reports show the stock the stock reads show (GET /inventory/items/{sku}): no balance of a
 * SKU no longer in the catalog (a deleted product's 0 rows) or at a deleted location, and a
 * calculated bundle's SKUs by what their components make up (stock-view.ts), never by the hidden
 * balance of their own. The units totals count the units held: a calculated bundle's units are its
 * components', counted once, under them.
 */
export const REPORT_TYPES = ['stock-levels', 'low-stock', 'out-of-stock', 'valuation', 'movements'] as const;
export type ReportType = (typeof REPORT_TYPES)[number];

/** Rows of a movements report at most; `truncated` says when the period held more. */
export const MAX_MOVEMENT_ROWS = 5000;

/** A report request as the API's schema lets it through (reportBody in input-schemas.ts). */
export interface ReportInput {
  reportType: ReportType;
  locationId?: string | null;
  /** ISO 8601 dates or date-times. */
  from?: string | null;
  to?: string | null;
}

export interface ReportRequest {
  reportType: ReportType;
  locationId: string | null;
  from: Date | null;
  to: Date | null;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The request as a report reads it: a blank location is every location; the period must not end before it starts. */
export function reportRequest(input: ReportInput): ReportRequest {
  const date = (v: string | null | undefined) => (v ? new Date(Date.parse(v)) : null);
  const from = date(input.from);
  // a date-only `to` names a whole day (UTC), so from = to = one date is that day, not an instant
  const to = input.to && DATE_ONLY.test(input.to) ? new Date(Date.parse(input.to) + DAY_MS - 1) : date(input.to);
  if (from && to && from > to) throw badRequest('bad-request', 'from must not be after to', 'from');
  return { reportType: input.reportType, locationId: input.locationId?.trim() || null, from, to };
}

export type StockStatus = 'in-stock' | 'low-stock' | 'out-of-stock';

export function stockStatus(onHand: number, minAlertStock: number): StockStatus {
  if (onHand <= 0) return 'out-of-stock';
  return onHand <= minAlertStock ? 'low-stock' : 'in-stock';
}

/** A balance as the reports show it (`Reports.shown`). */
interface ShownLevel {
  sku: string;
  locationId: string;
  onHand: number;
  updatedAt: Date | null;
  /** A calculated bundle's SKU: what its components make up there. */
  calculated?: true;
}

interface SkuTotal {
  sku: string;
  onHand: number;
  locations: { locationId: string; onHand: number }[];
  calculated?: true;
}

function totalsBySku(levels: ShownLevel[]): SkuTotal[] {
  const by = new Map<string, SkuTotal>();
  for (const l of levels) {
    const t = by.get(l.sku) ?? {
      sku: l.sku,
      onHand: 0,
      locations: [],
      ...(l.calculated ? { calculated: l.calculated } : {}),
    };
    t.onHand += l.onHand;
    t.locations.push({ locationId: l.locationId, onHand: l.onHand });
    by.set(l.sku, t);
  }
  return [...by.values()].sort((a, b) => a.sku.localeCompare(b.sku));
}

/** Units held: a calculated bundle's rows are its components' units again. */
const heldUnits = (rows: { onHand: number; calculated?: true }[]) =>
  rows.reduce((s, r) => s + (r.calculated ? 0 : r.onHand), 0);

const bySkuThenLocation = (a: ShownLevel, b: ShownLevel) =>
  a.sku.localeCompare(b.sku) || a.locationId.localeCompare(b.locationId);

function describe(facts: Map<string, SkuFacts>, sku: string) {
  const f = facts.get(sku);
  return {
    productId: f?.productId ?? null,
    name: f?.name ?? null,
    minAlertStock: f?.minAlertStock ?? DEFAULT_MIN_ALERT_STOCK,
  };
}

export class Reports {
  constructor(private readonly tenantDb: TenantDb) {}

  /** The ledger's balances in the scope, at locations that exist (a deleted location's are 0 rows). */
  private async levels(locationId: string | null): Promise<StockLevel[]> {
    const docs = await this.tenantDb
      .collection(stockLevels)
      .find(await levelsAt(this.tenantDb, locationId), { projection: { recent: 0 } })
      .toArray();
    return (docs as StockLevel[]).sort(bySkuThenLocation);
  }

  /**
   * The balances in the scope as the stock reads show them, by SKU then location, with the
   * catalog's facts of their SKUs: a SKU the catalog no longer has is left out (its product was
   * deleted, which needed its balances at 0); a calculated bundle's SKU shows, at each location
   * where it has a balance or its components make some up, what they make up there.
   */
  private async shown(locationId: string | null): Promise<{ rows: ShownLevel[]; facts: Map<string, SkuFacts> }> {
    const levels = await this.levels(locationId);
    const skus = [...new Set(levels.map((l) => l.sku))];
    const [facts, calculated] = await Promise.all([
      skuFacts(this.tenantDb, skus),
      calculatedAmong(this.tenantDb, skus, locationId ?? undefined),
    ]);
    const rows: ShownLevel[] = levels
      .filter((l) => facts.has(l.sku) && !calculated.has(l.sku))
      .map((l) => ({ sku: l.sku, locationId: l.locationId, onHand: l.onHand, updatedAt: l.updatedAt }));
    for (const [sku, made] of calculated) {
      if (!facts.has(sku)) continue;
      const places = new Set([
        ...levels.filter((l) => l.sku === sku).map((l) => l.locationId),
        ...made.byLocation.map((b) => b.locationId),
      ]);
      for (const at of places)
        rows.push({
          sku,
          locationId: at,
          onHand: made.byLocation.find((b) => b.locationId === at)?.onHand ?? 0,
          updatedAt: null,
          calculated: true,
        });
    }
    return { rows: rows.sort(bySkuThenLocation), facts };
  }

  /** `{totalSkus, totalUnits, locations, lowStock, outOfStock}` over the whole tenant. */
  async stats() {
    // the system location is made on first use: counted as the locations list counts it
    await new Locations(this.tenantDb).systemRaw();
    const [{ rows, facts }, locationCount] = await Promise.all([
      this.shown(null),
      this.tenantDb.collection(locations).countDocuments({}),
    ]);
    const totals = totalsBySku(rows);
    const statuses = totals.map((t) => stockStatus(t.onHand, describe(facts, t.sku).minAlertStock));
    return {
      totalSkus: totals.length,
      totalUnits: heldUnits(rows),
      locations: locationCount,
      lowStock: statuses.filter((s) => s === 'low-stock').length,
      outOfStock: statuses.filter((s) => s === 'out-of-stock').length,
    };
  }

  async run(input: ReportInput) {
    const req = reportRequest(input);
    if (req.locationId) await new Locations(this.tenantDb).require(req.locationId);
    const head = {
      reportType: req.reportType,
      generatedAt: new Date(),
      locationId: req.locationId,
      from: req.from,
      to: req.to,
    };
    switch (req.reportType) {
      case 'stock-levels':
        return { ...head, ...(await this.stockLevels(req.locationId)) };
      case 'low-stock':
        return { ...head, ...(await this.byStatus(req.locationId, 'low-stock')) };
      case 'out-of-stock':
        return { ...head, ...(await this.byStatus(req.locationId, 'out-of-stock')) };
      case 'valuation':
        return { ...head, ...(await this.valuation(req.locationId)) };
      case 'movements':
        return { ...head, ...(await this.movements(req)) };
    }
  }

  /** One row per balance (SKU × location). */
  private async stockLevels(locationId: string | null) {
    const { rows: levels, facts } = await this.shown(locationId);
    const rows = levels.map((l) => {
      const d = describe(facts, l.sku);
      return {
        sku: l.sku,
        productId: d.productId,
        name: d.name,
        locationId: l.locationId,
        onHand: l.onHand,
        minAlertStock: d.minAlertStock,
        status: stockStatus(l.onHand, d.minAlertStock),
        updatedAt: l.updatedAt,
        ...(l.calculated ? { calculated: l.calculated } : {}),
      };
    });
    return {
      rows,
      totals: {
        rows: rows.length,
        skus: new Set(levels.map((l) => l.sku)).size,
        units: heldUnits(levels),
      },
    };
  }

  /** One row per SKU of that status over the scope, with its balance at each location. */
  private async byStatus(locationId: string | null, status: 'low-stock' | 'out-of-stock') {
    const { rows: levels, facts } = await this.shown(locationId);
    const totals = totalsBySku(levels);
    const rows = totals.flatMap((t) => {
      const d = describe(facts, t.sku);
      if (stockStatus(t.onHand, d.minAlertStock) !== status) return [];
      return [
        {
          sku: t.sku,
          productId: d.productId,
          name: d.name,
          onHand: t.onHand,
          minAlertStock: d.minAlertStock,
          shortfall: Math.max(0, d.minAlertStock - t.onHand),
          locations: t.locations,
          ...(t.calculated ? { calculated: t.calculated } : {}),
        },
      ];
    });
    return {
      rows,
      totals: {
        skus: rows.length,
        units: heldUnits(rows),
        shortfall: rows.reduce((s, r) => s + r.shortfall, 0),
      },
    };
  }

  /**
   * Average-cost valuation, one row per balance with stock: on hand × the weighted average cost
   * of the receipts (lots) of that SKU at that location; a balance with no receipt is valued at
   * the catalog's current cost. Only stock held is valued: a calculated bundle's SKUs hold none
   * (what they make up is their components' stock, valued under them).
   */
  private async valuation(locationId: string | null) {
    const shown = await this.shown(locationId);
    const levels = shown.rows.filter((l) => !l.calculated && l.onHand > 0);
    const receiptDocs = await this.tenantDb
      .collection(stockMovements)
      .find(Lots.receiptFilter(locationId ? { locationId } : {}), { sort: { createdAt: 1, _id: 1 } })
      .toArray();
    const receipts = await new Lots(this.tenantDb).present(receiptDocs as StockMovement[]);
    const basis = new Map<string, { units: number; cost: number }>();
    for (const r of receipts) {
      const k = `${r.locationId}\u0000${r.sku}`;
      const b = basis.get(k) ?? { units: 0, cost: 0 };
      b.units += r.quantity;
      b.cost += r.quantity * r.costPerUnit;
      basis.set(k, b);
    }
    const facts = shown.facts;
    const rows = levels.map((l) => {
      const b = basis.get(`${l.locationId}\u0000${l.sku}`);
      const unitCost = b && b.units > 0 ? b.cost / b.units : (facts.get(l.sku)?.cost ?? 0);
      const d = describe(facts, l.sku);
      return {
        sku: l.sku,
        productId: d.productId,
        name: d.name,
        locationId: l.locationId,
        onHand: l.onHand,
        unitCost: Math.round(unitCost * 10000) / 10000,
        value: roundMoney(l.onHand * unitCost),
        costSource: b && b.units > 0 ? ('receipts' as const) : ('catalog' as const),
      };
    });
    return {
      method: 'average' as const,
      rows,
      totals: {
        rows: rows.length,
        skus: new Set(rows.map((r) => r.sku)).size,
        units: rows.reduce((s, r) => s + r.onHand, 0),
        value: roundMoney(rows.reduce((s, r) => s + r.value, 0)),
      },
    };
  }

  /** Applied ledger entries in the period (oldest first), at most MAX_MOVEMENT_ROWS. */
  private async movements(req: ReportRequest) {
    const createdAt = { ...(req.from ? { $gte: req.from } : {}), ...(req.to ? { $lte: req.to } : {}) };
    const filter = {
      status: 'applied' as const,
      ...(req.locationId ? { locationId: req.locationId } : {}),
      ...(req.from || req.to ? { createdAt } : {}),
    };
    const docs = (await this.tenantDb
      .collection(stockMovements)
      .find(filter, { sort: { createdAt: 1, _id: 1 }, limit: MAX_MOVEMENT_ROWS + 1 })
      .toArray()) as StockMovement[];
    const truncated = docs.length > MAX_MOVEMENT_ROWS;
    const rows = docs.slice(0, MAX_MOVEMENT_ROWS).map((m) => ({
      movementId: m.idempotencyKey,
      sku: m.sku,
      locationId: m.locationId,
      delta: m.delta,
      reason: m.reason,
      reference: m.reference,
      actor: m.actor,
      balanceAfter: m.balanceAfter,
      createdAt: m.createdAt,
    }));
    const unitsIn = rows.reduce((s, r) => s + Math.max(0, r.delta), 0);
    const unitsOut = rows.reduce((s, r) => s + Math.max(0, -r.delta), 0);
    return { rows, truncated, totals: { movements: rows.length, unitsIn, unitsOut, net: unitsIn - unitsOut } };
  }
}

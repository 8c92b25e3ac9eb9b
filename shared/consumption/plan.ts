import { componentSteps, modifierSteps, substituteSteps } from '../bom/requirements';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { fromMinor, findUnit, MAX_MINOR } from '../materials/quantity';
import { kindOf, stockRecordsBySku, unitsOf, type StockRecord } from '../materials/records';
import { availableMinor } from '../materials/stock-changes';
import { rememberedStock } from '../materials/stock';
import { materialStock, recordId, type StockDoc } from '../materials/collections';
import { decodeStock } from '../materials/stock-codec';
import type { PlannedLine, Shortfall } from './collections';

/**
 * A requirement no stock can hold (a tiny yield, a huge quantity: beyond 15 digits it is not even
 * exact, and past 1e308 it is Infinity): to a BOM run the request's fault, 400 naming the quantity.
 * It carries the shortfall it is too, so that a caller whose contract calls it a shortage (an
 * order's acceptance: 409 orders:insufficient_stock) can answer that instead.
 */
export class BeyondAnyStock extends AppError {
  constructor(readonly shortfall: Shortfall) {
    super(
      400,
      'bad-request',
      `quantity needs more of ${shortfall.materialSku} than a stock can hold (more than ${MAX_MINOR} of its smallest unit); produce less at a time`,
      { parameter: 'quantity', field: 'quantity' },
    );
  }
}

/** A bill of materials as stored on a product (shared/products/schema.ts). */
export interface StoredBom {
  consumptionMode: 'on_sale' | 'on_production' | 'manual';
  yield: { quantity: number; unit: string };
  components: {
    materialSku: string;
    quantity: number;
    unit: string;
    required?: boolean;
    sequence?: number;
    substitutes?: { materialSku: string; conversionFactor: number }[];
  }[];
  wastagePercent?: number;
}

/** A material a selected modifier consumes per unit of the product, and how many times the modifier was selected. */
export interface ModifierMaterial {
  sku: string;
  quantity: number;
  unit: string;
  times: number;
}

export interface PlanInput {
  bom: StoredBom | null;
  modifierMaterials: ModifierMaterial[];
  /** How much of the product: BOM quantities scale by quantity / yield, modifier ones by quantity. */
  quantity: number;
  locationId: string;
  allowSubstitutes: boolean;
  /**
   * Start from the stock documents this process last wrote where it has them (a run, whose every
   * take a guarded write confirms); a plan that finds a shortfall on them is made again on a
   * fresh read. Otherwise (a check, an estimate) every document is read.
   */
  fromMemory?: boolean;
  /**
   * Base steps per SKU that earlier plans of the same run (an order's other lines) take first: an
   * optional component is left out when what they leave cannot cover it.
   */
  takenBefore?: ReadonlyMap<string, number>;
  /**
   * Which needs to plan (default all): 'required' the required components and the modifiers'
   * materials, 'optional' the optional components only. An order plans the required needs of all
   * its lines before any line's optional parts, so that one line's optional part gives way to
   * another line's required need as it does within one BOM.
   */
  parts?: 'all' | 'required' | 'optional';
}

/** One need of the product, as the check and the BOM run's answer show it. */
export interface Demand {
  materialSku: string;
  source: 'bom' | 'modifier';
  quantity: number;
  unit: string;
  required: boolean;
  /** The substitute that stands in for (part of) it, when the primary is short. */
  substitute?: { materialSku: string; quantity: number; unit: string };
  /** An optional component left out because its stock is short. */
  skipped?: boolean;
}

export interface Plan {
  lines: PlannedLine[];
  /** What each demand needs of its own material (no substitutes), whether or not the stock covers it. */
  wanted: PlannedLine[];
  demands: Demand[];
  shortfalls: Shortfall[];
  /** Per SKU: base steps required and available at the location. */
  bySku: Map<string, { record: StockRecord; required: number; available: number }>;
  records: Map<string, StockRecord>;
  /** The stock documents read (null: none; a tombstone as stored), by SKU: where applying the plan starts from. */
  stocks: Map<string, StockDoc | null>;
}

function unknownSku(sku: string, where: string): AppError {
  return new AppError(400, 'validation-error', `${where} names ${sku}, which is no material or supply of the tenant`, {
    details: { materialSku: sku },
  });
}

function unitOf(record: StockRecord, unit: string, where: string): number {
  const u = findUnit(unitsOf(record), unit);
  if (!u)
    throw new AppError(400, 'validation-error', `${where}: unit '${unit}' is not a unit of ${record.sku}`, {
      details: { materialSku: record.sku, unit },
    });
  return u.conversionFactor;
}

/**
 * What a product's consumption takes at a location: each BOM component scaled to the quantity and
 * wastage, each selected modifier's materials, in base-unit steps. A short primary is completed
 * by the first substitute that can cover the rest (when allowed); a short optional component is
 * left out; any other shortage is a shortfall (and the plan must not be applied).
 */
export async function planConsumption(tenantDb: TenantDb, input: PlanInput): Promise<Plan> {
  const bom = input.bom;
  const skus = [
    ...new Set(
      [
        ...(bom?.components ?? []).flatMap((c) => [c.materialSku, ...(c.substitutes ?? []).map((s) => s.materialSku)]),
        ...input.modifierMaterials.map((m) => m.sku),
      ].map((s) => s.toUpperCase()),
    ),
  ];
  const remembered = input.fromMemory ? skus.flatMap((s) => rememberedStock(tenantDb, s) ?? []) : [];
  const unknown = skus.filter((s) => !remembered.some((d) => d.sku === s));
  // a stock document's _id is its record's: both are read at once
  const [records, stockDocs] = await Promise.all([
    stockRecordsBySku(tenantDb, skus),
    tenantDb
      .collection(materialStock)
      .findByIds(unknown.map((s) => recordId(tenantDb.tenantId, s)))
      .then((docs) => docs.map(decodeStock)),
  ]);
  const stocks = new Map<string, StockDoc | null>([...records.values()].map((r) => [r.sku, null]));
  for (const d of [...remembered, ...stockDocs]) if (records.has(d.sku)) stocks.set(d.sku, d);
  /** Whether a shortage decided anything besides shortfalls: an optional component left out, a substitute. */
  let decidedOnShortage = false;
  const now = new Date();
  const availableOf = (sku: string) => {
    const stock = stocks.get(sku);
    // a deleted record's tombstone holds no stock
    const loc = stock && !stock.retired ? stock.locations.find((l) => l.locationId === input.locationId) : undefined;
    return loc ? availableMinor(loc, now) : 0;
  };
  const left = new Map<string, number>();
  const leftOf = (sku: string) => left.get(sku) ?? availableOf(sku) - (input.takenBefore?.get(sku) ?? 0);
  const keepable = (steps: number, record: StockRecord) => {
    if (steps <= MAX_MINOR) return;
    const base = unitsOf(record).base;
    const required = fromMinor(steps, base.precision);
    const available = fromMinor(availableOf(record.sku), base.precision);
    throw new BeyondAnyStock({
      materialSku: record.sku,
      required,
      available,
      unit: base.code,
      error: `Not enough ${record.sku} at ${input.locationId}: ${available} ${base.code} available, ${required} ${base.code} required (more than a stock can hold)`,
    });
  };
  const parts = input.parts ?? 'all';
  const lines: PlannedLine[] = [];
  const demands: Demand[] = [];
  const needs = new Map<string, number>();
  const short = new Set<string>();
  const wanted: PlannedLine[] = [];
  const lineOf = (record: StockRecord, minor: number, source: PlannedLine['source'], componentSku?: string) => {
    const units = unitsOf(record);
    return {
      sku: record.sku,
      kind: kindOf(record),
      minor,
      unit: units.base.code,
      precision: units.base.precision,
      source,
      ...(componentSku ? { componentSku } : {}),
    };
  };
  const take = (record: StockRecord, minor: number, source: PlannedLine['source'], componentSku?: string) => {
    left.set(record.sku, leftOf(record.sku) - minor);
    lines.push(lineOf(record, minor, source, componentSku));
  };
  const show = (record: StockRecord, minor: number) => {
    const base = unitsOf(record).base;
    return { quantity: fromMinor(minor, base.precision), unit: base.code };
  };

  // what is required is planned first (the required components in the BOM's order, then the
  // modifiers' materials), the optional components last: an optional part is what gives way when
  // the stock cannot cover everything, never a required need of the same material
  const components = (bom?.components ?? []).map((c, i) => ({ c, i }));
  const bomDemands: Demand[] = [];
  const planComponent = ({ c, i }: { c: StoredBom['components'][number]; i: number }) => {
    const where = `billOfMaterials.components.${i}`;
    const record = records.get(c.materialSku.toUpperCase());
    if (!record) throw unknownSku(c.materialSku, where);
    const precision = unitsOf(record).base.precision;
    const need = componentSteps({
      quantity: c.quantity,
      conversionFactor: unitOf(record, c.unit, where),
      produce: input.quantity,
      yieldQuantity: bom!.yield.quantity,
      wastagePercent: bom!.wastagePercent ?? 0,
      precision,
    });
    keepable(need, record);
    const required = c.required !== false;
    const demand: Demand = { materialSku: record.sku, source: 'bom', ...show(record, need), required };
    bomDemands[i] = demand;
    if (need <= 0) return;
    needs.set(record.sku, (needs.get(record.sku) ?? 0) + need);
    keepable(needs.get(record.sku)!, record);
    const have = Math.max(0, leftOf(record.sku));
    if (required || have >= need) wanted.push(lineOf(record, need, 'component'));
    if (have >= need) {
      take(record, need, 'component');
      return;
    }
    const substitute = input.allowSubstitutes
      ? (c.substitutes ?? []).flatMap((s) => {
          const sub = records.get(s.materialSku.toUpperCase());
          if (!sub) return [];
          const steps = substituteSteps(need - have, precision, s.conversionFactor, unitsOf(sub).base.precision);
          return leftOf(sub.sku) >= steps ? [{ sub, steps }] : [];
        })[0]
      : undefined;
    if (!substitute && !required) {
      // an optional component short of stock (with no substitute to cover it) is left out
      demand.skipped = true;
      decidedOnShortage = true;
      return;
    }
    if (!substitute) {
      short.add(record.sku);
      return;
    }
    if (have > 0) take(record, have, 'component');
    take(substitute.sub, substitute.steps, 'substitute', record.sku);
    decidedOnShortage = true;
    demand.substitute = { materialSku: substitute.sub.sku, ...show(substitute.sub, substitute.steps) };
  };
  if (parts !== 'optional') for (const x of components) if (x.c.required !== false) planComponent(x);

  const modifierDemands: Demand[] = [];
  for (const [i, m] of parts === 'optional' ? [] : input.modifierMaterials.entries()) {
    const where = `selectedModifiers materials.${i}`;
    const record = records.get(m.sku.toUpperCase());
    if (!record) throw unknownSku(m.sku, where);
    const factor = unitOf(record, m.unit, where);
    const need = modifierSteps(m.quantity, factor, m.times, unitsOf(record).base.precision, input.quantity);
    keepable(need, record);
    modifierDemands.push({ materialSku: record.sku, source: 'modifier', ...show(record, need), required: true });
    if (need <= 0) continue;
    needs.set(record.sku, (needs.get(record.sku) ?? 0) + need);
    keepable(needs.get(record.sku)!, record);
    wanted.push(lineOf(record, need, 'modifier'));
    if (Math.max(0, leftOf(record.sku)) >= need) take(record, need, 'modifier');
    else short.add(record.sku);
  }
  if (parts !== 'required') for (const x of components) if (x.c.required === false) planComponent(x);
  demands.push(...bomDemands.filter(Boolean), ...modifierDemands);

  const bySku = new Map<string, { record: StockRecord; required: number; available: number }>();
  for (const l of lines) {
    const at = bySku.get(l.sku);
    if (at) at.required += l.minor;
    else bySku.set(l.sku, { record: records.get(l.sku)!, required: l.minor, available: availableOf(l.sku) });
  }
  const shortfalls: Shortfall[] = [];
  for (const sku of short) {
    const record = records.get(sku)!;
    const base = unitsOf(record).base;
    // its own needs and what it gives as a substitute for another component
    const asSubstitute = lines
      .filter((l) => l.sku === sku && l.source === 'substitute')
      .reduce((n, l) => n + l.minor, 0);
    const required = (needs.get(sku) ?? 0) + asSubstitute;
    const available = availableOf(sku);
    bySku.set(sku, { record, required, available });
    shortfalls.push({
      materialSku: sku,
      required: fromMinor(required, base.precision),
      available: fromMinor(available, base.precision),
      unit: base.code,
      error: `Not enough ${sku} at ${input.locationId}: ${fromMinor(available, base.precision)} ${base.code} available, ${fromMinor(required, base.precision)} ${base.code} required`,
    });
  }
  // a shortage seen in this process's copies of the stock may be stale (another process received
  // since): what it decided (a shortfall, an optional component left out, a substitute) is
  // decided again on a fresh read
  if ((shortfalls.length || decidedOnShortage) && remembered.length)
    return planConsumption(tenantDb, { ...input, fromMemory: false });
  return { lines, wanted, demands, shortfalls, bySku, records, stocks };
}

import { costMicros, findUnit, MAX_MINOR, unitCodes, valueOf, type UnitSystem } from '../materials/quantity';
import type { StockDoc } from '../materials/collections';
import { costNow, unitsOf, type StockRecord } from '../materials/records';
import { componentSteps } from './requirements';

/**
 * A bill of materials as the API shows it: as stored, plus `calculatedCost`, which is never
 * stored but computed from the components' current costs whenever the BOM is read (so a new
 * receipt of a material changes it at once). Pure: the caller reads the records and stock.
 */

export interface BomComponent {
  materialSku: string;
  quantity: number;
  unit: string;
  required?: boolean;
  sequence?: number;
  substitutes?: { materialSku: string; conversionFactor: number }[];
  notes?: string;
}

export interface BillOfMaterials {
  consumptionMode: 'on_sale' | 'on_production' | 'manual';
  yield: { quantity: number; unit: string };
  components: BomComponent[];
  wastagePercent?: number;
  preparationNotes?: { value: string };
  prepTimeMinutes?: number;
}

/** What costing needs of a component's material or supply. */
export interface CostedStock {
  currency: string;
  units: UnitSystem;
  /** Cost of one base unit now, in `currency`. */
  costPerBaseUnit: number;
}

export interface CalculatedCost {
  /** null when the components cannot be priced together (see `note`). */
  value: number | null;
  currency: string | null;
  calculatedAt: string;
  /** Why value is null. */
  note?: string;
}

/**
 * The current cost of one base unit of a record: a material's is its costing method's over the
 * lots live now (costNow: fifo, lifo, average, last_purchase) or, before any receipt, its
 * initialCost; a supply has no costing, so its price (per consumptionUnit), 0 without one.
 */
export function costedOf(record: StockRecord, stock: StockDoc | null): CostedStock {
  const cost = costNow(record, stock);
  return { currency: record.currency, units: unitsOf(record), costPerBaseUnit: cost };
}

/** One component's share of a run of the BOM, in cents; or why it has none. */
export function componentCents(
  bom: Pick<BillOfMaterials, 'yield' | 'wastagePercent'>,
  c: Pick<BomComponent, 'materialSku' | 'quantity' | 'unit'>,
  stock: CostedStock | undefined,
): { cents: number; currency: string } | { problem: string } {
  if (!stock) return { problem: `${c.materialSku} is not a material or supply of the tenant` };
  const unit = findUnit(stock.units, c.unit);
  if (!unit)
    return {
      problem: `unit ${c.unit} is not a unit of ${c.materialSku} (known: ${unitCodes(stock.units).join(', ')})`,
    };
  const precision = stock.units.base.precision;
  const steps = componentSteps({
    quantity: c.quantity,
    conversionFactor: unit.conversionFactor,
    produce: bom.yield.quantity,
    yieldQuantity: bom.yield.quantity,
    wastagePercent: bom.wastagePercent ?? 0,
    precision,
  });
  if (!(steps <= MAX_MINOR))
    return { problem: `${c.quantity} ${c.unit} of ${c.materialSku} is more than a stock can hold, so it has no cost` };
  const value = valueOf(steps, precision, costMicros(stock.costPerBaseUnit));
  return { cents: Math.round(value * 100), currency: stock.currency };
}

/**
 * The cost of ONE run of the BOM (what produces yield.quantity yield.unit): for each component,
 * the base-unit steps one run takes (quantity × its unit's factor × (1 + wastage/100), rounded
 * half away from zero to the base unit's precision, exactly as a consumption deducts them) at the
 * component's current cost per base unit, rounded to cents; the components' cents summed.
 * Substitutes do not count (they stand in only when a consumption allows them). Components in
 * different currencies have no single cost: value and currency null and a note naming them. A
 * component whose material or unit is gone (a unit removed from the material since) gives the
 * same null with a note: reading a BOM never fails on its cost.
 */
export function bomCost(
  bom: Pick<BillOfMaterials, 'yield' | 'wastagePercent' | 'components'>,
  stocks: ReadonlyMap<string, CostedStock>,
  now: Date = new Date(),
): CalculatedCost {
  const calculatedAt = now.toISOString();
  const problems: string[] = [];
  const currencies = new Set<string>();
  let cents = 0;
  for (const c of bom.components) {
    const share = componentCents(bom, c, stocks.get(c.materialSku.toUpperCase()));
    if ('problem' in share) problems.push(share.problem);
    else {
      cents += share.cents;
      currencies.add(share.currency);
    }
  }
  if (currencies.size > 1)
    problems.unshift(`components are priced in different currencies (${[...currencies].sort().join(', ')})`);
  if (problems.length)
    return { value: null, currency: null, calculatedAt, note: `No single cost: ${problems.join('; ')}` };
  return { value: cents / 100, currency: [...currencies][0] ?? null, calculatedAt };
}

/** The BOM as stored, with its cost now. */
export function presentBom(bom: BillOfMaterials, calculatedCost: CalculatedCost) {
  return { ...bom, calculatedCost };
}

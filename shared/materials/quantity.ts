/**
 * Exact quantities and costs. A balance is stored as an integer count of the base unit's smallest
 * step (`precision` decimals: 12.345 kg at precision 3 is 12345), so adding and taking never
 * drifts (0.1 + 0.2 is 3 steps of 0.1, not 0.30000000000000004). Numbers the client sends are read
 * as the decimals they were written as (their shortest text), multiplied and rounded in BigInt.
 * Pure: safe to import anywhere.
 */

/** Costs per base unit are kept to this many decimals (micro-units of the currency). */
export const COST_DECIMALS = 6;
/**
 * The largest stored count: 15 digits, so that every count below it is an exact integer and
 * shows back as the same decimal at any precision (at 16 digits a count over 10^6 loses its last digit).
 */
export const MAX_MINOR = 999_999_999_999_999;

interface Decimal {
  digits: bigint;
  scale: number;
}

/** The decimal a finite number was written as: `0.1` is 1×10⁻¹, `1e-7` is 1×10⁻⁷. */
export function decimalOf(value: number): Decimal {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
  const [mantissa, exp = '0'] = value.toString().toLowerCase().split('e');
  const negative = mantissa.startsWith('-');
  const [int, frac = ''] = mantissa.replace('-', '').split('.');
  let digits = BigInt(int + frac);
  let scale = frac.length - Number(exp);
  if (scale < 0) {
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { digits: negative ? -digits : digits, scale };
}

/** `n / 10^shift` rounded half away from zero. */
function shiftRound(n: bigint, shift: number): bigint {
  if (shift <= 0) return n * 10n ** BigInt(-shift);
  const div = 10n ** BigInt(shift);
  const q = n / div;
  const r = n % div;
  const twice = (r < 0n ? -r : r) * 2n;
  if (twice >= div) return n < 0n ? q - 1n : q + 1n;
  return q;
}

/** `value × factor` in steps of 10^-precision, rounded half away from zero. */
export function scaledProduct(value: number, factor: number, precision: number): bigint {
  const a = decimalOf(value);
  const b = decimalOf(factor);
  return shiftRound(a.digits * b.digits, a.scale + b.scale - precision);
}

/** A stored count as the decimal it stands for: 12345 at precision 3 is 12.345. */
export function fromMinor(minor: number, precision: number): number {
  // an integer over a power of ten, both exact: IEEE division gives the double nearest that decimal
  return minor / 10 ** precision;
}

/** A decimal quantity in steps of 10^-precision (rounded half away from zero). */
export function toMinor(value: number, precision: number): number {
  return Number(scaledProduct(value, 1, precision));
}

/** A cost per unit kept to COST_DECIMALS, as an integer count of micro-units. */
export function costMicros(cost: number): bigint {
  return scaledProduct(cost, 1, COST_DECIMALS);
}

export function fromMicros(micros: bigint): number {
  return Number(micros) / 10 ** COST_DECIMALS;
}

/** A cost per unit rounded to COST_DECIMALS. */
export function roundCost(cost: number): number {
  return fromMicros(costMicros(cost));
}

/** What `minor` steps at `costPerUnit` each are worth, rounded to cents. */
export function valueOf(minor: number, precision: number, micros: bigint): number {
  return Number(shiftRound(BigInt(minor) * micros, precision + COST_DECIMALS - 2)) / 100;
}

/** What layers of `minor` steps at `micros` each are worth together, rounded once to cents. */
export function valueOfLayers(layers: { minor: number; micros: bigint }[], precision: number): number {
  const total = layers.reduce((sum, l) => sum + BigInt(l.minor) * l.micros, 0n);
  return Number(shiftRound(total, precision + COST_DECIMALS - 2)) / 100;
}

/** The weighted average cost of layers (Σ qty·cost / Σ qty), to COST_DECIMALS; null when they hold nothing. */
export function averageMicros(layers: { minor: number; micros: bigint }[]): bigint | null {
  let units = 0n;
  let total = 0n;
  for (const l of layers) {
    units += BigInt(l.minor);
    total += BigInt(l.minor) * l.micros;
  }
  if (units === 0n) return null;
  // half away from zero: (2·total + units) / (2·units)
  return (2n * total + units) / (2n * units);
}

/** A unit a quantity may be given in: the base unit (factor 1) or an alternative. */
export interface UnitFactor {
  code: string;
  /** How many base units one of this unit is. */
  conversionFactor: number;
}

export interface UnitSystem {
  base: { code: string; precision: number };
  alternatives: UnitFactor[];
}

/** The unit named `code` (any case), or null. */
export function findUnit(units: UnitSystem, code: string): UnitFactor | null {
  const want = code.trim().toLowerCase();
  if (units.base.code.toLowerCase() === want) return { code: units.base.code, conversionFactor: 1 };
  return units.alternatives.find((u) => u.code.toLowerCase() === want) ?? null;
}

export function unitCodes(units: UnitSystem): string[] {
  return [units.base.code, ...units.alternatives.map((u) => u.code)];
}

/**
 * A quantity sent in `unit` (default the base unit) as a count of base-unit steps:
 * converted, then rounded to the base unit's precision. Null when the unit is unknown.
 */
export function quantityInBase(units: UnitSystem, quantity: number, unit?: string): number | null {
  const u = unit === undefined ? { code: units.base.code, conversionFactor: 1 } : findUnit(units, unit);
  if (!u) return null;
  return Number(scaledProduct(quantity, u.conversionFactor, units.base.precision));
}

import { decimalOf } from '../materials/quantity';

/**
 * How much of each component a bill of materials needs, exactly. Every number is read as the
 * decimal it was written as and the whole product is formed as one fraction of BigInts, rounded
 * once, half away from zero, to the material's base-unit steps: 0.1 kg × 3 runs × 110 % is
 * exactly 0.33 kg, never 0.33000000000000007. Pure: safe to import anywhere, workflows included.
 */

interface Fraction {
  num: bigint;
  den: bigint;
}

function fractionOf(value: number): Fraction {
  const d = decimalOf(value);
  return { num: d.digits, den: 10n ** BigInt(d.scale) };
}

function times(a: Fraction, b: Fraction): Fraction {
  return { num: a.num * b.num, den: a.den * b.den };
}

/** `num / den` rounded half away from zero (den > 0). */
function roundedQuotient({ num, den }: Fraction): bigint {
  const q = num / den;
  const r = num % den;
  const twice = (r < 0n ? -r : r) * 2n;
  if (twice >= den) return num < 0n ? q - 1n : q + 1n;
  return q;
}

/** 1 + percent/100, as an exact fraction. */
function wastageFactor(percent: number): Fraction {
  const p = fractionOf(percent);
  return { num: p.den * 100n + p.num, den: p.den * 100n };
}

export interface ComponentNeed {
  /** The component's quantity for one run of the BOM, in `unit`. */
  quantity: number;
  /** Base units of the material in one `unit` (1 when the component is written in the base unit). */
  conversionFactor: number;
  /** What to produce, in the BOM's yield unit. */
  produce: number;
  /** What one run of the BOM produces. */
  yieldQuantity: number;
  /** 0–100. */
  wastagePercent: number;
  /** Decimals of the material's base unit. */
  precision: number;
  /** One more factor: a substitute's conversionFactor, or how many times a modifier was selected. */
  substituteFactor?: number;
}

/**
 * Base-unit steps of a material needed to produce `produce`:
 * quantity × conversionFactor × (produce / yield) × (1 + wastage / 100) [× substituteFactor].
 */
export function componentSteps(n: ComponentNeed): number {
  let f = times(fractionOf(n.quantity), fractionOf(n.conversionFactor));
  f = times(f, fractionOf(n.produce));
  const y = fractionOf(n.yieldQuantity);
  f = { num: f.num * y.den, den: f.den * y.num };
  f = times(f, wastageFactor(n.wastagePercent));
  if (n.substituteFactor !== undefined) f = times(f, fractionOf(n.substituteFactor));
  f = { num: f.num * 10n ** BigInt(n.precision), den: f.den };
  return Number(roundedQuotient(f));
}

/**
 * Base-unit steps of a substitute standing in for `primarySteps` of a primary (precision
 * `primaryPrecision`): primary base units × conversionFactor, in the substitute's steps. A
 * shortfall is covered by at least one step: rounded to none, it would be covered by nothing.
 */
export function substituteSteps(
  primarySteps: number,
  primaryPrecision: number,
  conversionFactor: number,
  precision: number,
): number {
  const c = fractionOf(conversionFactor);
  const f: Fraction = {
    num: BigInt(primarySteps) * c.num * 10n ** BigInt(precision),
    den: c.den * 10n ** BigInt(primaryPrecision),
  };
  const steps = Number(roundedQuotient(f));
  return primarySteps > 0 ? Math.max(1, steps) : steps;
}

/**
 * A modifier's consumption in base steps: quantity × conversionFactor × times selected, for
 * `produce` units of the product (default one).
 */
export function modifierSteps(
  quantity: number,
  conversionFactor: number,
  times: number,
  precision: number,
  produce = 1,
): number {
  return componentSteps({
    quantity,
    conversionFactor,
    produce,
    yieldQuantity: 1,
    wastagePercent: 0,
    precision,
    substituteFactor: times,
  });
}

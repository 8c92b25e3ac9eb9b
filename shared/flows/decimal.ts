/**
 * Exact decimal arithmetic for `calculate`. Each number is taken as the decimal JavaScript prints
 * for it (1.1 is exactly 11/10, not the binary 1.100000000000000088…), the operation is done on
 * fractions of BigInts, and the result is rounded once, in decimal, then turned back into the
 * nearest JavaScript number. So 10 × 1.1 is 11 and 19.99 + 0.01 is 20, never 11.000000000000002.
 */

import type { Calculation, Rounding } from './definition';

/** n / d, d > 0. */
interface Fraction {
  n: bigint;
  d: bigint;
}

const TEN = 10n;
const ZERO = 0n;
const ONE = 1n;
const TWO = 2n;
const pow10 = (k: number) => TEN ** BigInt(k);

/** The decimal a number prints as: digits and the count of them after the point (1.25 → 125, 2). */
export function decimalOf(x: number): { digits: bigint; scale: number } {
  if (!Number.isFinite(x)) throw new RangeError(`${x} is not a finite number`);
  const [mantissa, exp = '0'] = String(x).split('e');
  const [whole, frac = ''] = mantissa.split('.');
  let digits = BigInt(whole + frac); // keeps the sign of `whole`
  let scale = frac.length - Number(exp);
  if (scale < 0) {
    digits *= pow10(-scale);
    scale = 0;
  }
  return { digits, scale };
}

function fraction(x: number): Fraction {
  const { digits, scale } = decimalOf(x);
  return { n: digits, d: pow10(scale) };
}

export class DivisionByZero extends Error {
  override name = 'DivisionByZero';
}

function apply(a: Fraction, op: Calculation, b: Fraction): Fraction {
  switch (op) {
    case 'add':
      return { n: a.n * b.d + b.n * a.d, d: a.d * b.d };
    case 'subtract':
      return { n: a.n * b.d - b.n * a.d, d: a.d * b.d };
    case 'multiply':
      return { n: a.n * b.n, d: a.d * b.d };
    case 'divide':
      if (b.n === ZERO) throw new DivisionByZero('division by zero');
      return b.n < ZERO ? { n: -a.n * b.d, d: a.d * -b.n } : { n: a.n * b.d, d: a.d * b.n };
  }
}

/** n / d rounded to the nearest integer, halves away from zero (money rounding: 0.125 → 0.13). */
function roundHalfAway(n: bigint, d: bigint): bigint {
  const q = n / d; // truncates toward zero
  const r = n % d;
  const twice = (r < ZERO ? -r : r) * TWO;
  return twice >= d ? q + (n < ZERO ? -ONE : ONE) : q;
}

function floorDiv(n: bigint, d: bigint): bigint {
  const q = n / d;
  return n % d !== ZERO && n < ZERO ? q - ONE : q;
}
const ceilDiv = (n: bigint, d: bigint) => -floorDiv(-n, d);

/** The number `digits × 10^-scale` is, exactly as printed in decimal, then parsed. */
function toNumber(digits: bigint, scale: number): number {
  const negative = digits < ZERO;
  const abs = (negative ? -digits : digits).toString().padStart(scale + 1, '0');
  const text = scale ? `${abs.slice(0, -scale)}.${abs.slice(-scale)}` : abs;
  return Number(negative ? `-${text}` : text);
}

/**
 * Rounds a fraction:
 * - `{decimals}`: to that many decimals (halves away from zero);
 * - `{step}`: to the nearest multiple of the step (0.05: 12.33 → 12.35; halves away from zero);
 * - `{ending}`: up to the nearest price whose cents are the ending, at or above the value
 *   (0.99: 12.30 → 12.99, 12.99 → 12.99, 13.00 → 13.99; 0: whole numbers, rounded up).
 */
function round(x: Fraction, rounding: Rounding): number {
  if ('step' in rounding) {
    const step = decimalOf(rounding.step);
    const multiples = roundHalfAway(x.n * pow10(step.scale), x.d * step.digits);
    return toNumber(multiples * step.digits, step.scale);
  }
  if ('ending' in rounding) {
    const ending = decimalOf(rounding.ending);
    const unit = pow10(ending.scale);
    // the smallest whole k with k + ending ≥ x
    const k = ceilDiv(x.n * unit - ending.digits * x.d, x.d * unit);
    return toNumber(k * unit + ending.digits, ending.scale);
  }
  return toNumber(roundHalfAway(x.n * pow10(rounding.decimals), x.d), rounding.decimals);
}

/** `a op b`, exactly, rounded once. Throws DivisionByZero; the result may be ±Infinity only past 1e308. */
export function calculate(a: number, op: Calculation, b: number, rounding: Rounding): number {
  return round(apply(fraction(a), op, fraction(b)), rounding);
}

/** The count of decimals a number is written with (0.05 → 2), for validating steps and endings. */
export function decimalsOf(x: number): number {
  return decimalOf(x).scale;
}

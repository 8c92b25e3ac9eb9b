import {
  averageMicros,
  COST_DECIMALS,
  costMicros,
  decimalOf,
  findUnit,
  fromMicros,
  fromMinor,
  MAX_MINOR,
  quantityInBase,
  roundCost,
  scaledProduct,
  toMinor,
  unitCodes,
  valueOf,
  type UnitSystem,
} from '../../shared/materials/quantity';

/** kg at `precision`, with a 25 kg bag, grams and pounds. */
const kg = (precision = 3): UnitSystem => ({
  base: { code: 'kg', precision },
  alternatives: [
    { code: 'bag25', conversionFactor: 25 },
    { code: 'g', conversionFactor: 0.001 },
    { code: 'lb', conversionFactor: 0.453592 },
  ],
});

describe('quantityInBase: conversion to base-unit steps, half away from zero', () => {
  test.each([
    // [what, precision, quantity, unit, steps]
    ['base unit, no unit given', 3, 12.345, undefined, 12345],
    ['base unit named', 3, 12.345, 'kg', 12345],
    ['base unit, any case', 3, 1.5, 'KG', 1500],
    ['alternative, any case and padded', 3, 2, ' Bag25 ', 50000],
    ['25 kg bag ×1', 3, 1, 'bag25', 25000],
    ['25 kg bag ×0.5', 3, 0.5, 'bag25', 12500],
    ['25 kg bag ×0.1 (no drift)', 3, 0.1, 'bag25', 2500],
    ['25 kg bag ×1.00002 → 25.0005 → half up', 3, 1.00002, 'bag25', 25001],
    ['25 kg bag ×0.33333 → 8.33325', 3, 0.33333, 'bag25', 8333],
    ['1 g = 0.001 kg', 3, 1, 'g', 1],
    ['0.5 g = 0.0005 kg → exactly half a step → 1', 3, 0.5, 'g', 1],
    ['0.49 g = 0.00049 kg → 0', 3, 0.49, 'g', 0],
    ['1234.5 g → 1.2345 kg → 1.235', 3, 1234.5, 'g', 1235],
    ['1234.4 g → 1.2344 kg → 1.234', 3, 1234.4, 'g', 1234],
    ['1 lb = 0.453592 kg → 0.454', 3, 1, 'lb', 454],
    ['2.5 lb = 1.13398 kg → 1.134', 3, 2.5, 'lb', 1134],
    ['1 lb at precision 6 is exact', 6, 1, 'lb', 453592],
    ['1 lb at precision 0 → 0', 0, 1, 'lb', 0],
    ['10 lb = 4.53592 at precision 0 → 5', 0, 10, 'lb', 5],
    ['0.0005 kg at precision 3 → 1 step', 3, 0.0005, undefined, 1],
    ['0.00049 kg at precision 3 → 0', 3, 0.00049, undefined, 0],
    ['0.0015 at precision 3 → 2 (not 1: no binary error)', 3, 0.0015, undefined, 2],
    ['1.005 at precision 2 → 101 (Math.round(100.49999) would say 100)', 2, 1.005, undefined, 101],
    ['-2.5 at precision 0 → -3 (away from zero)', 0, -2.5, undefined, -3],
    ['-0.0005 at precision 3 → -1', 3, -0.0005, undefined, -1],
  ])('%s: precision %i, %p %s → %i steps', (_what, precision, quantity, unit, steps) => {
    expect(quantityInBase(kg(precision), quantity, unit)).toBe(steps);
  });

  test.each([
    // [precision, quantity, steps]: 2.5 and friends at every precision 0..6
    [0, 2.5, 3],
    [0, 2.4, 2],
    [0, 3.5, 4],
    [1, 0.25, 3],
    [1, 0.35, 4],
    [2, 0.125, 13],
    [2, 0.005, 1],
    [3, 0.0025, 3],
    [4, 0.00025, 3],
    [5, 0.000025, 3],
    [6, 0.0000025, 3],
    [6, 0.0000024, 2],
    [6, 0.1, 100000],
  ])('precision %i: %p → %i steps', (precision, quantity, steps) => {
    expect(quantityInBase(kg(precision), quantity)).toBe(steps);
  });

  test.each([
    // written in exponent notation: read as the decimal it stands for
    ['1e-7 at precision 6 → 0', 6, 1e-7, undefined, 0],
    ['5e-7 at precision 6 → exactly half → 1', 6, 5e-7, undefined, 1],
    ['4.9e-7 at precision 6 → 0', 6, 4.9e-7, undefined, 0],
    ['1.5e-7 bags of 25 = 3.75e-6 at precision 6 → 4', 6, 1.5e-7, 'bag25', 4],
    ['1e-7 g at precision 6 → 0', 6, 1e-7, 'g', 0],
    ['5e-4 g at precision 6 → 5e-7 → 1', 6, 5e-4, 'g', 1],
    ['1e21 at precision 0', 0, 1e21, undefined, 1e21],
  ])('exponent notation: %s', (_what, precision, quantity, unit, steps) => {
    expect(quantityInBase(kg(precision), quantity, unit)).toBe(steps);
  });

  test('1.5e21 kg is far beyond what can be stored exactly: the count says so (the store refuses it)', () => {
    const steps = quantityInBase(kg(3), 1.5e21)!;
    expect(steps).toBe(1.5e24);
    expect(steps > MAX_MINOR).toBe(true);
    expect(quantityInBase(kg(0), 1.5e21, 'bag25')! > MAX_MINOR).toBe(true);
    // the largest count still exact
    expect(quantityInBase(kg(0), MAX_MINOR)).toBe(MAX_MINOR);
  });

  test.each(['lbs', 'bag', '', 'k g', 'gram'])('unknown unit %p → null', (unit) => {
    expect(quantityInBase(kg(), 1, unit)).toBeNull();
  });

  test('findUnit: base as factor 1, alternatives as stored, any case; unitCodes lists them base first', () => {
    expect(findUnit(kg(), 'Kg')).toEqual({ code: 'kg', conversionFactor: 1 });
    expect(findUnit(kg(), 'LB')).toEqual({ code: 'lb', conversionFactor: 0.453592 });
    expect(findUnit(kg(), 'oz')).toBeNull();
    expect(unitCodes(kg())).toEqual(['kg', 'bag25', 'g', 'lb']);
  });
});

describe('decimalOf: the decimal a number was written as', () => {
  test.each([
    [0, 0n, 0],
    [1, 1n, 0],
    [0.1, 1n, 1],
    [12.345, 12345n, 3],
    [-12.345, -12345n, 3],
    [0.453592, 453592n, 6],
    [1e-7, 1n, 7],
    [1.5e-7, 15n, 8],
    [-1.5e-7, -15n, 8],
    [1.5e21, 1500000000000000000000n, 0],
    [1e21, 1000000000000000000000n, 0],
    [2500, 2500n, 0],
    [0.1 + 0.2, 30000000000000004n, 17],
  ])('%p → %p × 10^-%i', (value, digits, scale) => {
    expect(decimalOf(value)).toEqual({ digits, scale });
  });

  test.each([NaN, Infinity, -Infinity])('%p is refused', (value) => {
    expect(() => decimalOf(value)).toThrow(RangeError);
  });

  test('scaledProduct multiplies the written decimals: 0.1 × 3 at 1 decimal is 3 steps, 1.1 × 1.1 at 2 is 121', () => {
    expect(scaledProduct(0.1, 3, 1)).toBe(3n);
    expect(scaledProduct(1.1, 1.1, 2)).toBe(121n);
    expect(scaledProduct(1.1, 1.1, 1)).toBe(12n);
    expect(scaledProduct(0.15, 0.1, 2)).toBe(2n); // 0.015 → 0.02
    expect(scaledProduct(-0.15, 0.1, 2)).toBe(-2n);
  });
});

describe('toMinor / fromMinor: exact counts', () => {
  test.each([
    [12.345, 3, 12345],
    [0.1, 1, 1],
    [0.1, 6, 100000],
    [0.1 + 0.2, 1, 3],
    [0.1 + 0.2, 6, 300000],
    [2.5, 0, 3],
    [0.0005, 3, 1],
    [0.00049, 3, 0],
    [7, 0, 7],
  ])('toMinor(%p, %i) → %i', (value, precision, minor) => {
    expect(toMinor(value, precision)).toBe(minor);
  });

  test.each([
    [12345, 3, 12.345],
    [3, 1, 0.3],
    [1, 6, 0.000001],
    [0, 4, 0],
    [7, 0, 7],
    [100000, 5, 1],
  ])('fromMinor(%i, %i) → %p', (minor, precision, value) => {
    expect(fromMinor(minor, precision)).toBe(value);
  });

  test('0.1 + 0.2 as steps is exactly 0.3; ten receipts of 0.1 are exactly 1', () => {
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(fromMinor(toMinor(0.1, 3) + toMinor(0.2, 3), 3)).toBe(0.3);
    let steps = 0;
    for (let i = 0; i < 10; i++) steps += toMinor(0.1, 3);
    expect(fromMinor(steps, 3)).toBe(1);
  });

  test.each([0, 1, 2, 3, 4, 5, 6])('precision %i: every count shown round-trips to itself', (precision) => {
    const counts = [0, 1, 3, 7, 9, 10, 99, 101, 12345, 999999, 1000001, 123456789, 10 ** 12 + 1, 999_999_999_999_999];
    for (const minor of counts) expect(toMinor(fromMinor(minor, precision), precision)).toBe(minor);
    for (let minor = 1; minor <= 2000; minor += 7) expect(toMinor(fromMinor(minor, precision), precision)).toBe(minor);
  });
});

describe('costs to 6 decimals, values to cents', () => {
  test.each([
    [2, 2_000_000n, 2],
    [0.1 + 0.2, 300_000n, 0.3],
    [1.2345675, 1_234_568n, 1.234568],
    [1.2345674, 1_234_567n, 1.234567],
    [0.0000005, 1n, 0.000001],
    [0.0000004, 0n, 0],
    [3.333333333, 3_333_333n, 3.333333],
    [1e-7, 0n, 0],
    [0, 0n, 0],
  ])('cost %p → %p micros → roundCost %p', (cost, micros, rounded) => {
    expect(COST_DECIMALS).toBe(6);
    expect(costMicros(cost)).toBe(micros);
    expect(roundCost(cost)).toBe(rounded);
    expect(fromMicros(micros)).toBe(rounded);
  });

  test.each([
    // [what, minor, precision, cost, cents value]
    ['10 kg @ 2', 10000, 3, 2, 20],
    ['12.345 kg @ 1.5 = 18.5175 → 18.52', 12345, 3, 1.5, 18.52],
    ['0.001 kg @ 4.99 = 0.00499 → 0', 1, 3, 4.99, 0],
    ['1 @ 0.005 → exactly half a cent → 0.01', 1, 0, 0.005, 0.01],
    ['1 @ 0.004999 → 0', 1, 0, 0.004999, 0],
    ['3 @ 0.333333 = 0.999999 → 1', 3, 0, 0.333333, 1],
    ['0.1 + 0.2 kg (300 steps) @ 10 = 3', 300, 3, 10, 3],
    ['1 step at precision 6 @ 1,000,000 = 1', 1, 6, 1_000_000, 1],
    ['nothing', 0, 3, 9.99, 0],
  ])('valueOf: %s', (_what, minor, precision, cost, cents) => {
    expect(valueOf(minor, precision, costMicros(cost))).toBe(cents);
  });
});

describe('averageMicros: weighted average to 6 decimals', () => {
  const layer = (minor: number, cost: number) => ({ minor, micros: costMicros(cost) });

  test.each([
    ['10 @ 2 and 10 @ 4 → 3', [layer(10, 2), layer(10, 4)], 3_000_000n],
    ['10 @ 2 and 30 @ 4 → 3.5', [layer(10, 2), layer(30, 4)], 3_500_000n],
    ['1 @ 1 and 2 @ 2 → 1.6666666… → 1.666667', [layer(1, 1), layer(2, 2)], 1_666_667n],
    ['2 @ 1 and 1 @ 2 → 1.3333333… → 1.333333', [layer(2, 1), layer(1, 2)], 1_333_333n],
    ['1 @ 0.000001 and 1 @ 0.000002 → 1.5 micros, half away → 2', [layer(1, 0.000001), layer(1, 0.000002)], 2n],
    ['3 @ 0.000001 and 1 @ 0.000003 → 1.5 micros → 2', [layer(3, 0.000001), layer(1, 0.000003)], 2n],
    ['1 @ 0 and 1 @ 0.000001 → 0.5 micros → 1', [layer(1, 0), layer(1, 0.000001)], 1n],
    ['empty layers count for nothing: 0 @ 100 and 5 @ 2 → 2', [layer(0, 100), layer(5, 2)], 2_000_000n],
    ['one layer → its cost', [layer(7, 1.234567)], 1_234_567n],
  ])('%s', (_what, layers, micros) => {
    expect(averageMicros(layers)).toBe(micros);
  });

  test('nothing to average → null', () => {
    expect(averageMicros([])).toBeNull();
    expect(averageMicros([layer(0, 5), layer(0, 7)])).toBeNull();
  });
});

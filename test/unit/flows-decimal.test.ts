import fc from 'fast-check';
import { calculate, decimalOf, DivisionByZero } from '../../shared/flows/decimal';

/**
 * calculate's arithmetic against integer oracles: prices in cents and percentages are whole
 * numbers, so the exact answer is integer arithmetic, and the result must be the number that
 * answer prints as, with no binary drift.
 */

const cents = fc.integer({ min: 0, max: 10_000_000 });
const asNumber = (wholeCents: number) => Number((wholeCents / 100).toFixed(2));

describe('exact decimal arithmetic', () => {
  test('decimalOf reads the number as JavaScript prints it', () => {
    expect(decimalOf(1.1)).toEqual({ digits: 11n, scale: 1 });
    expect(decimalOf(-0.05)).toEqual({ digits: -5n, scale: 2 });
    expect(decimalOf(1.5e-7)).toEqual({ digits: 15n, scale: 8 });
    expect(decimalOf(1e21)).toEqual({ digits: 10n ** 21n, scale: 0 });
    expect(() => decimalOf(NaN)).toThrow(RangeError);
  });

  test('adding and subtracting prices is exact', () => {
    fc.assert(
      fc.property(cents, cents, (a, b) => {
        expect(calculate(a / 100, 'add', b / 100, { decimals: 2 })).toBe(asNumber(a + b));
        expect(calculate(a / 100, 'subtract', b / 100, { decimals: 2 })).toBe(asNumber(a - b));
      }),
    );
  });

  test('a percentage rise rounds half away from zero to the cent', () => {
    fc.assert(
      fc.property(cents, fc.integer({ min: 0, max: 300 }), (a, pct) => {
        // a cents × (100 + pct)% = a × (100 + pct) / 100 cents, rounded half up (all positive)
        const exact = a * (100 + pct);
        const rounded = Math.floor((exact + 50) / 100);
        expect(calculate(a / 100, 'multiply', (100 + pct) / 100, { decimals: 2 })).toBe(asNumber(rounded));
      }),
    );
  });

  test('a step and an ending land on their grid', () => {
    fc.assert(
      fc.property(cents, (a) => {
        const stepped = calculate(a / 100, 'multiply', 1, { step: 0.05 });
        expect(Math.round(stepped * 100) % 5).toBe(0);
        expect(Math.abs(stepped - a / 100)).toBeLessThanOrEqual(0.025 + 1e-9);
        const ended = calculate(a / 100, 'multiply', 1, { ending: 0.99 });
        expect(Math.round(ended * 100) % 100).toBe(99);
        expect(ended).toBeGreaterThanOrEqual(a / 100);
        expect(ended - a / 100).toBeLessThan(1);
      }),
    );
  });

  test('division by zero is an error, never NaN or Infinity', () => {
    expect(() => calculate(1, 'divide', 0, { decimals: 2 })).toThrow(DivisionByZero);
    expect(calculate(1, 'divide', -4, { decimals: 2 })).toBe(-0.25);
    expect(calculate(-1.005, 'multiply', 1, { decimals: 2 })).toBe(-1.01);
  });
});

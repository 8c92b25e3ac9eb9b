import { componentSteps, modifierSteps, substituteSteps, type ComponentNeed } from '../../shared/bom/requirements';
import { bomCost, costedOf, type CostedStock } from '../../shared/bom/present';
import type { MaterialDoc, StockDoc, SupplyDoc } from '../../shared/materials/collections';
import type { UnitSystem } from '../../shared/materials/quantity';

/**
 * The arithmetic of bills of materials, as worked examples: how many base-unit steps a component,
 * a substitute or a modifier takes (exact decimals, rounded once, half away from zero), and what
 * one run of a BOM costs at the components' current costs.
 */

const KG_G: UnitSystem = {
  base: { code: 'kg', precision: 3 },
  alternatives: [
    { code: 'g', conversionFactor: 0.001 },
    { code: 'bag', conversionFactor: 25 },
  ],
};
const G_KG: UnitSystem = { base: { code: 'g', precision: 0 }, alternatives: [{ code: 'kg', conversionFactor: 1000 }] };

const need = (n: Partial<ComponentNeed>): ComponentNeed => ({
  quantity: 1,
  conversionFactor: 1,
  produce: 1,
  yieldQuantity: 1,
  wastagePercent: 0,
  precision: 3,
  ...n,
});

describe('componentSteps: quantity × unit factor × (produce / yield) × (1 + wastage/100), in base-unit steps', () => {
  test.each<[string, Partial<ComponentNeed>, number]>([
    [
      '250 g for 12 of a yield of 12 with 5% wastage is 0.2625 kg → 263 steps (half away from zero)',
      { quantity: 250, conversionFactor: 0.001, produce: 12, yieldQuantity: 12, wastagePercent: 5 },
      263,
    ],
    ['0.1 kg × 3 runs × 110% is exactly 0.33 kg → 330', { quantity: 0.1, produce: 3, wastagePercent: 10 }, 330],
    [
      '0.1 kg × 3 at precision 1 is exactly 3 steps (0.1 × 3 in floats is 0.30000000000000004)',
      { quantity: 0.1, produce: 3, precision: 1 },
      3,
    ],
    [
      '0.115 kg at precision 2 is 12 steps (the decimal 11.5 rounds up; 0.115 × 100 in floats is 11.499…)',
      { quantity: 0.115, precision: 2 },
      12,
    ],
    ['1.005 kg at precision 2 is 101 steps (floats give 100.49999999999999)', { quantity: 1.005, precision: 2 }, 101],
    ['0.0005 kg at precision 3 is half a step → 1', { quantity: 0.0005 }, 1],
    ['0.0004 kg at precision 3 is less than half a step → 0', { quantity: 0.0004 }, 0],
    [
      '200 g for 5 of a yield of 2 is 0.5 kg → 500',
      { quantity: 200, conversionFactor: 0.001, produce: 5, yieldQuantity: 2 },
      500,
    ],
    ['1 kg for 1 of a yield of 3 is 0.333… kg → 333', { quantity: 1, yieldQuantity: 3 }, 333],
    ['2 kg for 1 of a yield of 3 is 0.666… kg → 667', { quantity: 2, yieldQuantity: 3 }, 667],
    ['0.2 kg with 12.5% wastage is 0.225 kg → 225', { quantity: 0.2, wastagePercent: 12.5 }, 225],
    ['0.2 kg with 100% wastage is 0.4 kg → 400', { quantity: 0.2, wastagePercent: 100 }, 400],
    ['0.5 bag of 25 kg is 12.5 kg → 12500', { quantity: 0.5, conversionFactor: 25 }, 12500],
    [
      '0.0125 kg of a material counted in whole grams is 12.5 g → 13',
      { quantity: 0.0125, conversionFactor: 1000, precision: 0 },
      13,
    ],
    ['a substitute at 0.8 of 0.05 kg is 0.04 kg → 40', { quantity: 0.05, substituteFactor: 0.8 }, 40],
    ['half a yield (produce 0.5 of yield 1) of 0.001 kg is 0.0005 → 1', { quantity: 0.001, produce: 0.5 }, 1],
  ])('%s', (_name, n, steps) => {
    expect(componentSteps(need(n))).toBe(steps);
  });
});

describe('substituteSteps: primary base units × conversionFactor, in the substitute’s steps', () => {
  test.each<[string, [number, number, number, number], number]>([
    ['0.263 kg of butter → margarine at 0.8 is 0.2104 kg → 210', [263, 3, 0.8, 3], 210],
    ['0.263 kg → a substitute counted in whole grams at 1000 g/kg is 263', [263, 3, 1000, 0], 263],
    ['5 pieces at 0.5 is 2.5 → 3 (half away from zero)', [5, 0, 0.5, 0], 3],
    ['0.01 at 0.5 is 0.005 → half a step at precision 2 → 1', [1, 2, 0.5, 2], 1],
    ['0.3 at 1 is exactly 0.3 at precision 1 → 3', [3, 1, 1, 1], 3],
    ['1 kg at 1.1 with the substitute at precision 2 is 1.1 → 110', [1000, 3, 1.1, 2], 110],
    ['1 g short, a substitute in whole kg at 1 is 0.001 kg: still one step, never none', [1, 3, 1, 0], 1],
    ['0.4 of a piece at 1 rounds to none, but covering a shortfall takes one', [4, 1, 1, 0], 1],
  ])('%s', (_name, [primary, primaryPrecision, factor, precision], steps) => {
    expect(substituteSteps(primary, primaryPrecision, factor, precision)).toBe(steps);
  });
});

describe('modifierSteps: quantity × unit factor × times selected, in base-unit steps', () => {
  test.each<[string, [number, number, number, number], number]>([
    ['30 g twice of a material in kg is 0.06 kg → 60', [30, 0.001, 2, 3], 60],
    ['0.1 kg three times at precision 1 is exactly 3 steps', [0.1, 1, 3, 1], 3],
    ['1.005 kg once at precision 2 is 101 steps', [1.005, 1, 1, 2], 101],
    ['0.5 piece three times is 1.5 → 2', [0.5, 1, 3, 0], 2],
    ['half a bag of 25 kg twice is 25 kg → 25000', [0.5, 25, 2, 3], 25000],
  ])('%s', (_name, [quantity, factor, times, precision], steps) => {
    expect(modifierSteps(quantity, factor, times, precision)).toBe(steps);
  });
});

const NOW = new Date('2024-05-01T12:00:00.000Z');
const costed = (units: UnitSystem, costPerBaseUnit: number, currency = 'USD'): CostedStock => ({
  units,
  costPerBaseUnit,
  currency,
});
const PIECE: UnitSystem = { base: { code: 'pza', precision: 0 }, alternatives: [] };
const stocks = new Map<string, CostedStock>([
  ['FLOUR', costed(KG_G, 0.8)],
  ['SUGAR', costed(KG_G, 1.2)],
  ['HONEY', costed(KG_G, 100)],
  ['BOX', costed(PIECE, 0.35)],
  ['SALT', costed(KG_G, 5)],
  ['PEPPER', costed(KG_G, 5)],
  ['CUMIN', costed(KG_G, 5)],
  ['A', costed(KG_G, 1)],
  ['B', costed(KG_G, 1)],
  ['CHEESE-G', costed(G_KG, 0.012)],
  ['LABEL', costed(PIECE, 0)],
  ['LIME-MXN', costed(KG_G, 30, 'MXN')],
]);

type Line = [sku: string, quantity: number, unit: string];
const bom = (
  lines: Line[],
  opts: { yieldQuantity?: number; wastagePercent?: number; substitutes?: string[] } = {},
) => ({
  yield: { quantity: opts.yieldQuantity ?? 1, unit: 'pza' },
  wastagePercent: opts.wastagePercent,
  components: lines.map(([materialSku, quantity, unit]) => ({
    materialSku,
    quantity,
    unit,
    substitutes: (opts.substitutes ?? []).map((s) => ({ materialSku: s, conversionFactor: 1 })),
  })),
});

describe('bomCost: one run of the BOM at the current costs, each component rounded to cents, then summed', () => {
  test.each<[string, ReturnType<typeof bom>, number]>([
    [
      '250 g of flour at 0.80/kg ×12/12 with 5% wastage is 0.2625 kg → 0.263 kg × 0.80 = 0.2104 → 0.21',
      bom([['FLOUR', 250, 'g']], { yieldQuantity: 12, wastagePercent: 5 }),
      0.21,
    ],
    [
      'the yield does not scale it: the same 250 g for a yield of 1 is still 0.21',
      bom([['FLOUR', 250, 'g']], { wastagePercent: 5 }),
      0.21,
    ],
    [
      '250 g flour (0.20) + 0.05 kg sugar at 1.20 (0.06) + 1 box at 0.35 is 0.61',
      bom([
        ['FLOUR', 250, 'g'],
        ['SUGAR', 0.05, 'kg'],
        ['BOX', 1, 'pza'],
      ]),
      0.61,
    ],
    [
      'substitutes do not count: sugar with honey at 100/kg as its substitute is still 0.06',
      bom([['SUGAR', 0.05, 'kg']], { substitutes: ['HONEY'] }),
      0.06,
    ],
    [
      'three components of 1 g at 5/kg are 0.005 each → 0.01 each: 0.03 (rounded per component, then summed)',
      bom([
        ['SALT', 1, 'g'],
        ['PEPPER', 1, 'g'],
        ['CUMIN', 1, 'g'],
      ]),
      0.03,
    ],
    [
      '0.1 kg + 0.2 kg at 1.00/kg is exactly 0.30',
      bom([
        ['A', 0.1, 'kg'],
        ['B', 0.2, 'kg'],
      ]),
      0.3,
    ],
    ['2 bags of 25 kg of flour at 0.80/kg is 40.00', bom([['FLOUR', 2, 'bag']]), 40],
    ['units in any case: 250 G is 250 g', bom([['FLOUR', 250, 'G']]), 0.2],
    [
      '0.25 kg of a cheese counted in grams at 0.012/g with 10% wastage is 275 g → 3.30',
      bom([['CHEESE-G', 0.25, 'kg']], { wastagePercent: 10 }),
      3.3,
    ],
    ['a supply without a price costs 0', bom([['LABEL', 3, 'pza']]), 0],
    ['SKUs in any case find their material', bom([['flour', 1, 'kg']]), 0.8],
  ])('%s', (_name, b, value) => {
    expect(bomCost(b, stocks, NOW)).toEqual({ value, currency: 'USD', calculatedAt: NOW.toISOString() });
  });

  test('components in different currencies: value and currency null, a note naming them', () => {
    const got = bomCost(
      bom([
        ['FLOUR', 1, 'kg'],
        ['LIME-MXN', 0.1, 'kg'],
      ]),
      stocks,
      NOW,
    );
    expect(got).toEqual({ value: null, currency: null, calculatedAt: NOW.toISOString(), note: expect.any(String) });
    expect(got.note).toContain('different currencies (MXN, USD)');
  });

  test('a unit the material no longer has, a quantity no stock can hold, or a material that is gone: null with a note, never a throw', () => {
    const lb = bomCost(bom([['FLOUR', 1, 'lb']]), stocks, NOW);
    expect(lb).toMatchObject({ value: null, currency: null });
    expect(lb.note).toContain('unit lb is not a unit of FLOUR (known: kg, g, bag)');
    const huge = bomCost(bom([['FLOUR', 1e300, 'kg']]), stocks, NOW);
    expect(huge).toMatchObject({ value: null, currency: null });
    expect(huge.note).toContain('more than a stock can hold');
    const gone = bomCost(bom([['GONE', 1, 'kg']]), stocks, NOW);
    expect(gone).toMatchObject({ value: null, currency: null });
    expect(gone.note).toContain('GONE');
  });
});

describe('costedOf: the current cost of one base unit of a record', () => {
  const material = {
    sku: 'FLOUR',
    currency: 'USD',
    baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
    alternativeUnits: [{ code: 'g', conversionFactor: 0.001 }],
    costing: { method: 'last_purchase', initialCost: 0.8 },
  } as unknown as MaterialDoc;
  const supply = {
    sku: 'BOX',
    currency: 'MXN',
    consumptionUnit: 'pza',
    unitPrecision: 0,
    alternativeUnits: [],
  } as unknown as SupplyDoc;
  const stock = (costing: unknown) => ({ costing }) as unknown as StockDoc;

  test.each<[string, MaterialDoc | SupplyDoc, StockDoc | null, number]>([
    ['a material before any receipt: its initialCost', material, null, 0.8],
    ['a material with stock: its stock’s currentCost', material, stock({ currentCost: 1.25 }), 1.25],
    ['a material whose stock has no costing yet: its initialCost', material, stock(null), 0.8],
    ['a supply: its price', { ...supply, price: 0.35 } as SupplyDoc, null, 0.35],
    ['a supply without a price: 0', supply, null, 0],
  ])('%s', (_name, record, stockDoc, cost) => {
    expect(costedOf(record, stockDoc).costPerBaseUnit).toBe(cost);
  });

  test('units and currency come from the record', () => {
    expect(costedOf(material, null)).toEqual({
      currency: 'USD',
      units: { base: { code: 'kg', precision: 3 }, alternatives: [{ code: 'g', conversionFactor: 0.001 }] },
      costPerBaseUnit: 0.8,
    });
    expect(costedOf(supply, null).units).toEqual({ base: { code: 'pza', precision: 0 }, alternatives: [] });
  });
});

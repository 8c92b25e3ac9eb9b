import { buildModifiersConfig, patchGroup, type ConfigureInput } from '../../shared/modifiers/configure';
import {
  basePriceFor,
  checkSelection,
  conditionsAt,
  localTime,
  selectionsFromPairs,
  type Modifier,
  type ModifierGroup,
  type ModifierSelection,
  type ModifiersConfig,
  type SelectionContext,
  type SelectionRule,
} from '../../shared/modifiers/selection';
import { modifiersConfigSchema } from '../../shared/products/schema';
import { compile } from '../../shared/validation';

/**
 * The modifiers' pure rules: the selection-rule matrix, price adjustments and materials as worked
 * examples, availability in the tenant's time zone, and the configure conversion.
 */

const ids = (prefix: string) => {
  let n = 0;
  return () => `${prefix}-${++n}`;
};

const mod = (id: string, extra: Partial<Modifier> = {}): Modifier => ({ id, name: `Mod ${id}`, ...extra });
const grp = (id: string, rule: SelectionRule, modifiers: Modifier[], extra: Partial<ModifierGroup> = {}) => ({
  id,
  name: { value: `Group ${id}` },
  selectionRule: rule,
  modifiers,
  ...extra,
});

const CTX: SelectionContext = { basePrice: 10, now: new Date('2024-06-05T12:00:00Z'), timeZone: 'UTC' };
const rules = (r: { errors: { rule: string }[] }) => r.errors.map((e) => e.rule);

describe('the selection-rule matrix', () => {
  /** One group G under test (modifiers a, b, c and d, which is not available) beside an optional group O (x). */
  function config(rule: SelectionRule, o: { enabled?: boolean; active?: boolean } = {}): ModifiersConfig {
    return {
      enabled: o.enabled ?? true,
      groups: [
        grp('G', rule, [mod('a'), mod('b'), mod('c'), mod('d', { available: false })], { active: o.active ?? true }),
        grp('O', { minSelections: 0, maxSelections: 1 }, [mod('x')]),
      ],
    };
  }
  /** `a*2` is a with quantity 2. */
  const pick = (...picks: string[]): ModifierSelection[] => [
    {
      groupId: 'G',
      modifierIds: picks.map((p) => p.split('*')[0]),
      quantities: picks.map((p) => Number(p.split('*')[1] ?? 1)),
    },
  ];
  const r = (min: number, max: number, more: Partial<SelectionRule> = {}): SelectionRule => ({
    minSelections: min,
    maxSelections: max,
    ...more,
  });

  type Row = [string, SelectionRule, ModifierSelection[], string[], { enabled?: boolean; active?: boolean }?];
  const MATRIX: Row[] = [
    ['minSelections met', r(1, 3), pick('a'), []],
    ['a required group mentioned with nothing', r(1, 3), pick(), ['minSelections']],
    ['a required group not mentioned at all', r(1, 3), [], ['minSelections']],
    ['fewer than minSelections', r(2, 3), pick('a'), ['minSelections']],
    ['an optional group left out', r(0, 3), [], []],
    ['maxSelections met', r(0, 2), pick('a', 'b'), []],
    ['more than maxSelections', r(0, 2), pick('a', 'b', 'c'), ['maxSelections']],
    ['quantities count toward maxSelections', r(0, 2, { allowDuplicates: true }), pick('a*3'), ['maxSelections']],
    ['exactlyOne with one', r(1, 1, { exactlyOne: true }), pick('b'), []],
    ['exactlyOne with two', r(1, 1, { exactlyOne: true }), pick('a', 'b'), ['exactlyOne']],
    ['exactlyOne, optional, none chosen', r(0, 1, { exactlyOne: true }), pick(), []],
    ['exactlyOne, quantity 2', r(0, 2, { exactlyOne: true, allowDuplicates: true }), pick('a*2'), ['exactlyOne']],
    ['duplicates allowed', r(0, 5, { allowDuplicates: true }), pick('a*2'), []],
    ['a quantity of 2 without allowDuplicates', r(0, 5), pick('a*2'), ['allowDuplicates']],
    ['listed twice without allowDuplicates', r(0, 5), pick('a', 'a'), ['allowDuplicates']],
    ['maxPerModifier met', r(0, 5, { allowDuplicates: true, maxPerModifier: 2 }), pick('a*2', 'b'), []],
    [
      'maxPerModifier passed (mentions summed)',
      r(0, 5, { allowDuplicates: true, maxPerModifier: 2 }),
      pick('a*2', 'a'),
      ['maxPerModifier'],
    ],
    ['a modifier not available', r(0, 3), pick('d'), ['unavailable']],
    ['an unknown modifier id', r(0, 3), pick('zzz'), ['unknown-modifier']],
    ["another group's modifier", r(0, 3), pick('x'), ['unknown-modifier']],
    ['an unknown group id', r(0, 3), [{ groupId: 'nope', modifierIds: ['a'] }], ['unknown-group']],
    ['a group not active', r(0, 3), pick('a'), ['unavailable'], { active: false }],
    ['an inactive group is not required', r(1, 3), [], [], { active: false }],
    ['a disabled configuration takes no selection', r(0, 3), pick('a'), ['disabled'], { enabled: false }],
    ['a disabled configuration requires nothing', r(1, 3), [], [], { enabled: false }],
    [
      'quantities not parallel to modifierIds',
      r(0, 3),
      [{ groupId: 'G', modifierIds: ['a', 'b'], quantities: [1] }],
      ['quantities'],
    ],
    ['a quantity below 1', r(0, 3), [{ groupId: 'G', modifierIds: ['a'], quantities: [0] }], ['quantities']],
  ];
  // rows as objects: a row without options must not leave jest a fifth parameter to read as `done`
  const rows = MATRIX.map(([name, rule, selections, expected, options]) => ({
    name,
    rule,
    selections,
    expected,
    options,
  }));
  test.each(rows)('$name', ({ rule, selections, expected, options }) => {
    const result = checkSelection(config(rule, options), selections, CTX);
    expect(rules(result)).toEqual(expected);
    expect(result.valid).toBe(expected.length === 0);
    for (const e of result.errors) expect(e.message.length).toBeGreaterThan(0);
  });

  test('errors name the group and modifier; two selections of one group are read as one', () => {
    const cfg = config(r(0, 5, { allowDuplicates: true, maxPerModifier: 2 }));
    const res = checkSelection(
      cfg,
      [
        { groupId: 'G', modifierIds: ['a'] },
        { groupId: 'G', modifierIds: ['a', 'a'] },
      ],
      CTX,
    );
    expect(res.errors).toEqual([
      { groupId: 'G', modifierId: 'a', rule: 'maxPerModifier', message: expect.stringContaining('3 times') },
    ]);
    expect(res.selectedModifiers).toEqual([expect.objectContaining({ modifierId: 'a', quantity: 3 })]);
  });

  test('a product never configured takes an empty selection and refuses any other', () => {
    expect(checkSelection(undefined, [], CTX)).toEqual({
      valid: true,
      errors: [],
      selectedModifiers: [],
      totalPriceAdjustment: 0,
      materialsToConsume: [],
    });
    expect(rules(checkSelection(undefined, [{ groupId: 'G', modifierIds: ['a'] }], CTX))).toEqual(['disabled']);
  });
});

describe('price adjustments and materials, worked', () => {
  const cfg: ModifiersConfig = {
    enabled: true,
    groups: [
      grp('T', { minSelections: 0, maxSelections: 10, allowDuplicates: true }, [
        mod('cheese', {
          priceAdjustment: { type: 'fixed', value: 1.5, currency: 'USD' },
          inventoryConsumption: [{ sku: 'MOZZ', quantity: 0.1, unit: 'kg' }],
        }),
        mod('dime', { priceAdjustment: { type: 'fixed', value: 0.1 } }),
        mod('no-onion', { priceAdjustment: { type: 'fixed', value: -0.5 } }),
        mod('ten', { priceAdjustment: { type: 'percentage', value: 10 } }),
        mod('fifteen', { priceAdjustment: { type: 'percentage', value: 15 } }),
        mod('double-cheese', {
          inventoryConsumption: [
            { sku: 'mozz', quantity: 0.2, unit: 'kg' },
            { sku: 'BOX', quantity: 1, unit: 'pcs' },
          ],
        }),
      ]),
      grp('S', { minSelections: 0, maxSelections: 2, allowDuplicates: true }, [
        mod('large', { priceAdjustment: { type: 'replace', value: 15 } }),
        mod('promo', { priceAdjustment: { type: 'replace', value: 8 } }),
      ]),
    ],
  };
  const T = (...picks: [string, number][]): ModifierSelection => ({
    groupId: 'T',
    modifierIds: picks.map((p) => p[0]),
    quantities: picks.map((p) => p[1]),
  });
  const S = (...picks: [string, number][]): ModifierSelection => ({ ...T(...picks), groupId: 'S' });

  test.each<[string, ModifierSelection[], number | undefined, number, number[]]>([
    // name, selection, variant price (else the product's 10.00), total, each line's amount
    ['fixed 1.50 × 2', [T(['cheese', 2])], undefined, 3, [3]],
    ['fixed 0.10 × 3 is 0.30, not 0.30000000000000004', [T(['dime', 3])], undefined, 0.3, [0.3]],
    ['a negative fixed adjustment', [T(['no-onion', 1])], undefined, -0.5, [-0.5]],
    ['10 % of a variant price 12.50', [T(['ten', 1])], 12.5, 1.25, [1.25]],
    ['15 % of 12.50 = 1.875, rounded half away from zero to 1.88', [T(['fifteen', 1])], 12.5, 1.88, [1.88]],
    ['10 % × 3 of 9.99 = 2.997, rounded once to 3.00', [T(['ten', 3])], 9.99, 3, [3]],
    ['replace 15.00 over 10.00 adds 5.00', [S(['large', 1])], undefined, 5, [5]],
    ['replace counts once whatever the quantity', [S(['large', 2])], undefined, 5, [5]],
    ['replace 8.00 over a variant at 12.50 takes 4.50 off', [S(['promo', 1])], 12.5, -4.5, [-4.5]],
    [
      'fixed 1.50 × 2 + 10 % of 12.50 + replace 15.00',
      [T(['cheese', 2], ['ten', 1]), S(['large', 1])],
      12.5,
      6.75,
      [3, 1.25, 2.5],
    ],
  ])('%s', (_name, selections, variantPrice, total, amounts) => {
    const res = checkSelection(cfg, selections, { ...CTX, basePrice: variantPrice ?? 10 });
    expect(res.errors).toEqual([]);
    expect(res.totalPriceAdjustment).toBe(total);
    expect(res.selectedModifiers.map((m) => m.priceAdjustment?.amount)).toEqual(amounts);
  });

  test('two replacing modifiers in one selection: an error naming the second', () => {
    const res = checkSelection(cfg, [S(['large', 1], ['promo', 1])], CTX);
    expect(res.valid).toBe(false);
    expect(res.errors).toEqual([
      { groupId: 'S', modifierId: 'promo', rule: 'replace', message: expect.stringContaining('at most one') },
    ]);
  });

  test('the selected modifiers as answered', () => {
    const res = checkSelection(cfg, [T(['cheese', 2])], CTX);
    expect(res.selectedModifiers).toEqual([
      {
        groupId: 'T',
        groupName: 'Group T',
        modifierId: 'cheese',
        modifierName: 'Mod cheese',
        quantity: 2,
        priceAdjustment: { type: 'fixed', value: 1.5, currency: 'USD', amount: 3 },
        inventoryConsumption: [{ sku: 'MOZZ', quantity: 0.2, unit: 'kg' }],
      },
    ]);
  });

  test('materials: consumption × quantity, summed per SKU and unit, exactly', () => {
    const res = checkSelection(cfg, [T(['cheese', 3], ['double-cheese', 1], ['dime', 1])], CTX);
    // 0.1 × 3 + 0.2 = 0.5 exactly; the SKU any case is one material
    expect(res.materialsToConsume).toEqual([
      { sku: 'MOZZ', quantity: 0.5, unit: 'kg' },
      { sku: 'BOX', quantity: 1, unit: 'pcs' },
    ]);
    expect(res.selectedModifiers[0].inventoryConsumption).toEqual([{ sku: 'MOZZ', quantity: 0.3, unit: 'kg' }]);
  });

  test('the base price: a variant of the product (any case), the product itself, or null for another SKU', () => {
    const product = { sku: 'BURGER', price: 10, variants: [{ sku: 'BURGER-L', price: 12.5 }] };
    expect(basePriceFor(product)).toBe(10);
    expect(basePriceFor(product, 'burger-l')).toBe(12.5);
    expect(basePriceFor(product, 'Burger')).toBe(10);
    expect(basePriceFor(product, 'OTHER')).toBeNull();
  });
});

describe('availability in the tenant time zone', () => {
  // a Wednesday at 03:30 UTC: Tuesday 21:30 in Mexico City (UTC−6, no daylight saving since 2022)
  const instant = new Date('2024-06-05T03:30:00Z');
  const cfgWith = (conditions: ModifiersConfig['conditions']): ModifiersConfig => ({
    enabled: true,
    groups: [grp('G', { minSelections: 0, maxSelections: 1 }, [mod('a')])],
    conditions,
  });
  const chosen: ModifierSelection[] = [{ groupId: 'G', modifierIds: ['a'] }];

  test('the local weekday and minute', () => {
    expect(localTime(instant, 'UTC')).toEqual({ day: 'wed', minutes: 3 * 60 + 30 });
    expect(localTime(instant, 'America/Mexico_City')).toEqual({ day: 'tue', minutes: 21 * 60 + 30 });
  });

  test.each<[string, ModifiersConfig['conditions'], string, Date, string[]]>([
    [
      '18:00–23:00 is open in Mexico City',
      { availableHours: { start: '18:00', end: '23:00' } },
      'America/Mexico_City',
      instant,
      [],
    ],
    [
      '… and closed in UTC at the same instant',
      { availableHours: { start: '18:00', end: '23:00' } },
      'UTC',
      instant,
      ['hours'],
    ],
    [
      'the end is not included',
      { availableHours: { start: '18:00', end: '21:30' } },
      'America/Mexico_City',
      instant,
      ['hours'],
    ],
    [
      '22:00–02:00 wraps midnight: open at 01:00',
      { availableHours: { start: '22:00', end: '02:00' } },
      'UTC',
      new Date('2024-06-05T01:00:00Z'),
      [],
    ],
    [
      '… open at 22:30',
      { availableHours: { start: '22:00', end: '02:00' } },
      'UTC',
      new Date('2024-06-05T22:30:00Z'),
      [],
    ],
    ['… closed at 03:30', { availableHours: { start: '22:00', end: '02:00' } }, 'UTC', instant, ['hours']],
    [
      'availableDays tue: open on Tuesday evening in Mexico City',
      { availableDays: ['tue'] },
      'America/Mexico_City',
      instant,
      [],
    ],
    ['… closed in UTC, where it is Wednesday', { availableDays: ['tue'] }, 'UTC', instant, ['days']],
    [
      "a Friday night window's hours after midnight belong to Friday",
      { availableHours: { start: '22:00', end: '02:00' }, availableDays: ['fri'] },
      'UTC',
      new Date('2024-06-08T01:00:00Z'), // Saturday 01:00
      [],
    ],
    [
      'outside both hours and days: both errors',
      { availableHours: { start: '09:00', end: '17:00' }, availableDays: ['mon'] },
      'UTC',
      instant,
      ['hours', 'days'],
    ],
    ['no conditions: always open', undefined, 'UTC', instant, []],
  ])('%s', (_name, conditions, timeZone, now, expected) => {
    const res = checkSelection(cfgWith(conditions), chosen, { ...CTX, now, timeZone });
    expect(rules(res)).toEqual(expected);
  });

  test('outside the conditions an empty selection is valid and nothing is required', () => {
    const cfg = cfgWith({ availableHours: { start: '09:00', end: '17:00' } });
    cfg.groups[0].selectionRule.minSelections = 1;
    expect(checkSelection(cfg, [], { ...CTX, now: instant }).valid).toBe(true);
    expect(conditionsAt(cfg.conditions, instant, 'UTC')).toEqual({ hours: false, days: true });
  });

  test('variantSkus: only those variants (any case) may take modifiers', () => {
    const cfg = cfgWith({ variantSkus: ['BURGER-L'] });
    expect(rules(checkSelection(cfg, chosen, { ...CTX, variantSku: 'burger-l' }))).toEqual([]);
    expect(rules(checkSelection(cfg, chosen, { ...CTX, variantSku: 'BURGER-S' }))).toEqual(['variant']);
    expect(rules(checkSelection(cfg, chosen, CTX))).toEqual(['variant']);
    expect(rules(checkSelection(cfgWith({ variantSkus: [] }), chosen, CTX))).toEqual([]);
  });
});

describe('pairs as selections', () => {
  test('grouped by group in order of first mention, quantities parallel (default 1)', () => {
    expect(
      selectionsFromPairs([
        { groupId: 'g1', modifierId: 'a' },
        { groupId: 'g2', modifierId: 'x', quantity: 2 },
        { groupId: 'g1', modifierId: 'b', quantity: 3 },
      ]),
    ).toEqual([
      { groupId: 'g1', modifierIds: ['a', 'b'], quantities: [1, 3] },
      { groupId: 'g2', modifierIds: ['x'], quantities: [2] },
    ]);
    expect(selectionsFromPairs([])).toEqual([]);
  });
});

describe('configure: the input as stored', () => {
  const units = new Map([
    ['MOZZ', { base: { code: 'kg', precision: 3 }, alternatives: [{ code: 'g', conversionFactor: 0.001 }] }],
    ['BOX', { base: { code: 'pcs', precision: 0 }, alternatives: [] }],
  ]);
  const ctx = { units, currency: 'USD', variantSkus: new Set(['BURGER-L']), newId: ids('id') };
  const input: ConfigureInput = {
    enabled: true,
    groups: [
      {
        name: ' Size ',
        displayName: 'Choose a size',
        selectionRule: { minSelections: 1, maxSelections: 1, exactlyOne: true },
        modifiers: [
          { name: 'Small' },
          { name: 'Large', priceAdjustment: { type: 'replace', value: 15 }, sortOrder: 7 },
        ],
        sortOrder: 3,
      },
      {
        name: { value: 'Extras', translations: [{ locale: 'es', value: 'Extras' }] },
        selectionRule: { minSelections: 0, maxSelections: 3, allowDuplicates: true, maxPerModifier: 2 },
        modifiers: [
          {
            name: 'Cheese',
            type: 'addon',
            sku: 'xtra-cheese',
            priceAdjustment: { type: 'fixed', value: 1.5, currency: 'USD' },
            inventoryConsumption: { materialSku: 'mozz', quantity: 30, unit: 'G' },
            isDefault: true,
          },
          { name: 'Box', isAvailable: false, inventoryConsumption: { materialSku: 'BOX', quantity: 1, unit: 'PCS' } },
        ],
        channelBindings: [{ channelId: 'ch1', externalGroupId: 'ext-1', isEnabled: true }],
      },
    ],
    conditions: { variantSkus: ['burger-l'], availableHours: { start: '22:00', end: '02:00' }, availableDays: ['fri'] },
  };

  test('ids, codes, description, position, available and the consumption array', () => {
    const { value, errors } = buildModifiersConfig(input, { ...ctx, newId: ids('id') });
    expect(errors).toEqual([]);
    expect(value).toEqual({
      enabled: true,
      groups: [
        {
          id: 'id-1',
          code: 'group-1',
          name: { value: 'Size', translations: [] },
          description: 'Choose a size',
          selectionRule: { minSelections: 1, maxSelections: 1, exactlyOne: true, allowDuplicates: false },
          modifiers: [
            {
              id: 'id-2',
              code: 'group-1-1',
              name: 'Small',
              type: 'addon',
              inventoryConsumption: [],
              available: true,
              isDefault: false,
              position: 0,
              channelBindings: [],
            },
            {
              id: 'id-3',
              code: 'group-1-2',
              name: 'Large',
              type: 'addon',
              priceAdjustment: { type: 'replace', value: 15, currency: 'USD' },
              inventoryConsumption: [],
              available: true,
              isDefault: false,
              position: 7,
              channelBindings: [],
            },
          ],
          position: 3,
          active: true,
          channelBindings: [],
        },
        {
          id: 'id-4',
          code: 'group-2',
          name: { value: 'Extras', translations: [{ locale: 'es', value: 'Extras' }] },
          selectionRule: {
            minSelections: 0,
            maxSelections: 3,
            exactlyOne: false,
            allowDuplicates: true,
            maxPerModifier: 2,
          },
          modifiers: [
            {
              id: 'id-5',
              code: 'group-2-1',
              name: 'Cheese',
              type: 'addon',
              sku: 'XTRA-CHEESE',
              priceAdjustment: { type: 'fixed', value: 1.5, currency: 'USD' },
              inventoryConsumption: [{ sku: 'MOZZ', quantity: 30, unit: 'g' }],
              available: true,
              isDefault: true,
              position: 0,
              channelBindings: [],
            },
            {
              id: 'id-6',
              code: 'group-2-2',
              name: 'Box',
              type: 'addon',
              inventoryConsumption: [{ sku: 'BOX', quantity: 1, unit: 'pcs' }],
              available: false,
              isDefault: false,
              position: 1,
              channelBindings: [],
            },
          ],
          position: 1,
          active: true,
          channelBindings: [{ channelId: 'ch1', externalGroupId: 'ext-1', isEnabled: true }],
        },
      ],
      conditions: {
        variantSkus: ['BURGER-L'],
        availableHours: { start: '22:00', end: '02:00' },
        availableDays: ['fri'],
      },
    });
    // the stored schema takes it as it is (ids made UUIDs, as the server makes them)
    const real = buildModifiersConfig(input, { ...ctx, newId: undefined }).value;
    const validate = compile(modifiersConfigSchema);
    expect(validate(structuredClone(real))).toBe(true);
    expect(real.groups[0].id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  test.each<[string, (i: ConfigureInput) => void, { field: string; message: RegExp }]>([
    [
      'an unknown material',
      (i) => (i.groups[1].modifiers[0].inventoryConsumption!.materialSku = 'nope'),
      { field: 'groups.1.modifiers.0.inventoryConsumption.materialSku', message: /NOPE/ },
    ],
    [
      'a unit the material does not have',
      (i) => (i.groups[1].modifiers[0].inventoryConsumption!.unit = 'lb'),
      {
        field: 'groups.1.modifiers.0.inventoryConsumption.unit',
        message: /'lb' is not a unit of MOZZ \(its units: kg, g\)/,
      },
    ],
    [
      'minSelections above maxSelections',
      (i) => (i.groups[1].selectionRule = { minSelections: 4, maxSelections: 3 }),
      { field: 'groups.1.selectionRule.maxSelections', message: /at least minSelections/ },
    ],
    [
      'exactlyOne against minSelections 2',
      (i) => (i.groups[0].selectionRule = { minSelections: 2, maxSelections: 2, exactlyOne: true }),
      { field: 'groups.0.selectionRule.exactlyOne', message: /contradicts/ },
    ],
    [
      'maxPerModifier above 1 without allowDuplicates',
      (i) => (i.groups[1].selectionRule.allowDuplicates = false),
      { field: 'groups.1.selectionRule.maxPerModifier', message: /allowDuplicates/ },
    ],
    [
      'another currency',
      (i) => (i.groups[1].modifiers[0].priceAdjustment!.currency = 'MXN'),
      { field: 'groups.1.modifiers.0.priceAdjustment.currency', message: /USD/ },
    ],
    [
      'a fraction of a cent',
      (i) => (i.groups[1].modifiers[0].priceAdjustment!.value = 1.005),
      { field: 'groups.1.modifiers.0.priceAdjustment.value', message: /cents/ },
    ],
    [
      'a negative replacing price',
      (i) => (i.groups[0].modifiers[1].priceAdjustment!.value = -1),
      { field: 'groups.0.modifiers.1.priceAdjustment.value', message: /negative/ },
    ],
    [
      'a variant SKU of another product',
      (i) => (i.conditions!.variantSkus = ['SHIRT-M']),
      { field: 'conditions.variantSkus.0', message: /SHIRT-M/ },
    ],
    [
      'an empty hours window',
      (i) => (i.conditions!.availableHours = { start: '10:00', end: '10:00' }),
      { field: 'conditions.availableHours.end', message: /empty window/ },
    ],
  ])('refused: %s', (_name, spoil, expected) => {
    const bad = structuredClone(input);
    spoil(bad);
    const { errors } = buildModifiersConfig(bad, ctx);
    expect(errors).toHaveLength(1);
    expect(errors[0].field).toBe(expected.field);
    expect(errors[0].message).toMatch(expected.message);
  });

  test('a group patch keeps id and code, merges the rule, converts new modifiers', () => {
    const stored = buildModifiersConfig(input, { ...ctx, newId: ids('id') }).value.groups[1];
    const { value, errors } = patchGroup(
      stored,
      {
        displayName: '',
        selectionRule: { maxSelections: 5 },
        modifiers: [{ name: 'Bacon', inventoryConsumption: { materialSku: 'box', quantity: 2, unit: 'pcs' } }],
        sortOrder: 9,
      },
      { ...ctx, newId: ids('new') },
    );
    expect(errors).toEqual([]);
    expect(value).toMatchObject({
      id: 'id-4',
      code: 'group-2',
      position: 9,
      selectionRule: { minSelections: 0, maxSelections: 5, allowDuplicates: true, maxPerModifier: 2 },
      modifiers: [
        {
          id: 'new-1',
          code: 'group-2-3', // after the group's two: a new modifier never takes a code back
          name: 'Bacon',
          inventoryConsumption: [{ sku: 'BOX', quantity: 2, unit: 'pcs' }],
        },
      ],
    });
    expect(value).not.toHaveProperty('description');
    const bad = patchGroup(stored, { selectionRule: { minSelections: 6 } }, ctx);
    expect(bad.errors.map((e) => e.field)).toEqual(['selectionRule.maxSelections']);
  });
});

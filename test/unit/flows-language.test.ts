import { conditionHolds } from '../../shared/flows/conditions';
import {
  flowSchema,
  type FlowAction,
  type FlowCondition,
  type FlowDefinition,
  type FlowRule,
} from '../../shared/flows/definition';
import {
  clearField,
  fieldSchemaAt,
  isWritableField,
  readField,
  resolveField,
  writeField,
} from '../../shared/flows/fields';
import { isFlowRunFailure, runFlow, type FlowRunFailure, type FlowRunSuccess } from '../../shared/flows/run';
import { flowErrors } from '../../shared/flows/validate';
import { compile, inputFailures } from '../../shared/validation';

/**
 * The rule-flow language as worked examples: the operator matrix, the action matrix, rule order,
 * the validation errors with the path each names, and the schema's refusal of structural junk.
 */

type Obj = Record<string, unknown>;

/** A stored product's content, with a bit of everything the language reaches. */
function product(extra: Obj = {}): Obj {
  return {
    sku: 'TEE-1',
    status: 'active',
    productType: 'physical',
    title: { value: 'Blue Cotton T-Shirt', translations: [{ locale: 'es', value: 'Camiseta azul' }] },
    description: { value: 'Soft cotton tee', translations: [] },
    price: 10,
    compareAtPrice: 15,
    cost: 4,
    currency: 'USD',
    taxable: true,
    brand: 'Acme',
    tags: ['Sale', 'summer'],
    bullets: [],
    category: { name: 'Shirts', path: 'Apparel > Shirts', channels: [], selectable: true },
    seo: { metaTitle: 'Blue tee' },
    shipping: { weight: 0.3, weightUnit: 'kg' },
    media: [],
    options: [],
    bindings: [],
    priceSchemas: [],
    costs: [],
    metafields: [
      { namespace: 'specs', key: 'material', type: 'string', value: 'cotton' },
      { key: 'care', type: 'string', value: 'Wash cold' },
      { namespace: 'specs', key: 'weight_g', type: 'number_decimal', value: 180 },
      { namespace: 'specs', key: 'colors', type: 'json', value: ['blue', 'navy'] },
    ],
    variants: [
      { sku: 'TEE-1-S', title: { value: 'Small', translations: [] }, price: 10, compareAtPrice: 12, position: 0 },
      { sku: 'TEE-1-L', title: { value: 'Large', translations: [] }, price: 12, position: 1 },
    ],
    minAlertStock: 5,
    createdAt: new Date('2024-03-01T10:00:00Z'),
    version: 3,
    ...extra,
  };
}

const flow = (rules: FlowRule[]): FlowDefinition => ({ selection: { all: true }, rules });

function run(rules: FlowRule[], p: Obj = product()): FlowRunSuccess {
  const result = runFlow(flow(rules), p);
  if (isFlowRunFailure(result)) throw new Error(`unexpected failure: ${result.error}`);
  return result;
}
const applied = (actions: FlowAction[], p?: Obj) => run([{ actions }], p).product;
function failure(actions: FlowAction[], p: Obj = product()): FlowRunFailure {
  const result = runFlow(flow([{ actions }]), p);
  if (!isFlowRunFailure(result)) throw new Error('expected a failure');
  return result;
}

/** The paths flowErrors names for a flow of these rules. */
const errorPaths = (rules: FlowRule[]) => flowErrors(flow(rules)).map((e) => e.path);
const actionErrorPaths = (...actions: FlowAction[]) => errorPaths([{ actions }]);
const whenErrorPaths = (when: FlowCondition) =>
  errorPaths([{ when, actions: [{ type: 'add', field: 'tags', values: ['x'] }] }]);

describe('field paths', () => {
  test.each([
    ['price', 'price', 'number', 'product', false],
    ['title', 'title.value', 'text', 'product', false],
    ['title.value', 'title.value', 'text', 'product', false],
    ['seo.metaTitle', 'seo.metaTitle', 'text', 'product', false],
    ['shipping.dimensions.length', 'shipping.dimensions.length', 'number', 'product', false],
    ['category.name', 'category.name', 'text', 'product', false],
    ['tags', 'tags', 'list', 'product', false],
    ['status', 'status', 'text', 'product', false],
    ['taxable', 'taxable', 'boolean', 'product', false],
    ['category', 'category', 'structure', 'product', false],
    ['variants.price', 'variants.price', 'number', 'variant', false],
    ['variants.title', 'variants.title.value', 'text', 'variant', false],
    ['metafields.specs.material', 'metafields.specs.material', 'any', 'metafield', false],
    ['metafields.specs.key.with.dots', 'metafields.specs.key.with.dots', 'any', 'metafield', false],
    ['sku', 'sku', 'text', 'product', true],
    ['variants.sku', 'variants.sku', 'text', 'variant', true],
    ['createdAt', 'createdAt', 'date', 'product', true],
    ['version', 'version', 'number', 'product', true],
    ['bindings', 'bindings', 'structure', 'product', true],
    ['variants', 'variants', 'structure', 'product', true],
    ['variants.parentSku', 'variants.parentSku', 'text', 'variant', true],
  ])('%s is %s, %s on the %s (read-only: %s)', (path, canonical, kind, scope, readOnly) => {
    const info = resolveField(path)!;
    expect([info.path, info.kind, info.scope, info.readOnly]).toEqual([canonical, kind, scope, readOnly]);
    expect(isWritableField(path)).toBe(!readOnly);
  });

  test.each(['nope', 'price.amount', 'media.src', 'metafields.specs', 'seo.', '', '__proto__', 'title.constructor'])(
    '%j names no field',
    (path) => {
      expect(resolveField(path)).toBeNull();
      expect(fieldSchemaAt(path)).toBeNull();
      expect(isWritableField(path)).toBe(false);
    },
  );

  test('fieldSchemaAt answers the leaf schema, aliases resolved', () => {
    expect(fieldSchemaAt('title')).toEqual({ type: 'string', minLength: 1, maxLength: 5000 });
    expect(fieldSchemaAt('seo.metaTitle')).toEqual({ type: 'string', maxLength: 60 });
    expect(fieldSchemaAt('variants.price')).toEqual({ type: 'number', minimum: 0, maximum: 1e12 });
    expect(fieldSchemaAt('metafields.a.b')).toEqual({});
  });

  test('readField: aliases, nested, metafields (namespace "default" for none), variants as a list', () => {
    const p = product();
    expect(readField(p, 'title')).toBe('Blue Cotton T-Shirt');
    expect(readField(p, 'shipping.weight')).toBe(0.3);
    expect(readField(p, 'shipping.dimensions.length')).toBeUndefined();
    expect(readField(p, 'metafields.specs.material')).toBe('cotton');
    expect(readField(p, 'metafields.default.care')).toBe('Wash cold');
    expect(readField(p, 'metafields.specs.care')).toBeUndefined();
    expect(readField(p, 'variants.price')).toEqual([10, 12]);
    expect(readField(p, 'nope')).toBeUndefined();
  });

  test('writeField creates parents with their defaults, writes every variant, refuses read-only and unknown', () => {
    const p = product({ category: undefined, seo: undefined });
    writeField(p, 'category.name', 'Hats');
    expect(p.category).toEqual({ name: 'Hats', channels: [], selectable: true });
    writeField(p, 'seo.metaTitle', 'Hat');
    expect(p.seo).toEqual({ metaTitle: 'Hat' });
    writeField(p, 'variants.compareAtPrice', 20);
    expect(readField(p, 'variants.compareAtPrice')).toEqual([20, 20]);
    writeField(p, 'metafields.specs.fit', 'slim');
    expect((p.metafields as Obj[]).at(-1)).toEqual({ namespace: 'specs', key: 'fit', type: 'string', value: 'slim' });
    expect(() => writeField(p, 'sku', 'X')).toThrow(/read-only/);
    expect(() => writeField(p, 'nope', 1)).toThrow(/unknown field/);
    const plain = product({ variants: [] });
    writeField(plain, 'variants.price', 5);
    expect(plain.variants).toEqual([]);
  });

  test('clearField: optional removed, list emptied, default restored, translated text removed whole', () => {
    const p = product();
    clearField(p, 'compareAtPrice');
    clearField(p, 'tags');
    clearField(p, 'minAlertStock');
    clearField(p, 'description');
    expect([p.compareAtPrice, p.tags, p.minAlertStock, 'description' in p]).toEqual([undefined, [], 5, false]);
    expect(() => clearField(p, 'price')).toThrow(/required/);
  });
});

describe('the operator matrix', () => {
  const at = (field: string, operator: string, value?: unknown, caseSensitive?: boolean) =>
    ({
      field,
      operator,
      ...(value !== undefined ? { value } : {}),
      ...(caseSensitive ? { caseSensitive } : {}),
    }) as FlowCondition;

  test.each<[string, string, unknown, boolean | undefined, boolean]>([
    // text: case-insensitive unless asked
    ['brand', 'equals', 'acme', undefined, true],
    ['brand', 'equals', 'acme', true, false],
    ['brand', 'equals', 'Acme', true, true],
    ['brand', 'not_equals', 'ACME', undefined, false],
    ['brand', 'not_equals', 'Globex', undefined, true],
    ['brand', 'in', ['Globex', 'ACME'], undefined, true],
    ['brand', 'in', ['Globex', 'ACME'], true, false],
    ['brand', 'not_in', ['Globex'], undefined, true],
    ['title', 'contains', 'COTTON', undefined, true],
    ['title', 'contains', 'COTTON', true, false],
    ['title.value', 'starts_with', 'blue', undefined, true],
    ['title', 'ends_with', 't-shirt', undefined, true],
    ['title', 'ends_with', 'blue', undefined, false],
    ['brand', 'empty', undefined, undefined, false],
    ['model', 'empty', undefined, undefined, true],
    ['model', 'not_empty', undefined, undefined, false],
    ['model', 'equals', 'x', undefined, false],
    ['model', 'not_equals', 'x', undefined, true],
    ['model', 'not_in', ['x'], undefined, true],
    ['status', 'equals', 'ACTIVE', undefined, true],
    // nested
    ['seo.metaTitle', 'contains', 'tee', undefined, true],
    ['category.name', 'in', ['shirts', 'hats'], undefined, true],
    ['shipping.weight', 'less', 0.5, undefined, true],
    ['shipping.dimensions.length', 'empty', undefined, undefined, true],
    // numbers
    ['price', 'equals', 10, undefined, true],
    ['price', 'not_equals', 10, undefined, false],
    ['price', 'in', [5, 10], undefined, true],
    ['price', 'not_in', [5, 10], undefined, false],
    ['price', 'greater', 9.99, undefined, true],
    ['price', 'greater', 10, undefined, false],
    ['price', 'less', 10, undefined, false],
    ['price', 'less', 10.01, undefined, true],
    ['price', 'between', [10, 20], undefined, true],
    ['price', 'between', [1, 10], undefined, true],
    ['price', 'between', [10.01, 20], undefined, false],
    ['price', 'equals', '10', undefined, false],
    ['compareAtPrice', 'not_empty', undefined, undefined, true],
    // booleans
    ['taxable', 'equals', true, undefined, true],
    ['taxable', 'not_equals', true, undefined, false],
    // dates (a Date in the product, ISO texts in the flow)
    ['createdAt', 'greater', '2024-01-01', undefined, true],
    ['createdAt', 'less', '2024-03-01T09:59:59Z', undefined, false],
    ['createdAt', 'between', ['2024-03-01', '2024-03-02'], undefined, true],
    ['createdAt', 'equals', '2024-03-01T10:00:00.000Z', undefined, true],
    // lists: the list has the element
    ['tags', 'contains', 'sale', undefined, true],
    ['tags', 'contains', 'sale', true, false],
    ['tags', 'contains', 'Sal', undefined, false],
    ['tags', 'in', ['winter', 'SUMMER'], undefined, true],
    ['tags', 'not_in', ['winter', 'SUMMER'], undefined, false],
    ['tags', 'not_in', ['winter'], undefined, true],
    ['tags', 'starts_with', 'sum', undefined, true],
    ['tags', 'ends_with', 'xyz', undefined, false],
    ['tags', 'empty', undefined, undefined, false],
    ['bullets', 'empty', undefined, undefined, true],
    ['bullets', 'not_empty', undefined, undefined, false],
    ['media', 'empty', undefined, undefined, true],
    ['category', 'not_empty', undefined, undefined, true],
    // metafields: by namespace and key, typed by their value
    ['metafields.specs.material', 'equals', 'COTTON', undefined, true],
    ['metafields.default.care', 'contains', 'cold', undefined, true],
    ['metafields.specs.weight_g', 'greater', 100, undefined, true],
    ['metafields.specs.weight_g', 'between', [100, 150], undefined, false],
    ['metafields.specs.weight_g', 'contains', 'x', undefined, false],
    ['metafields.specs.colors', 'contains', 'NAVY', undefined, true],
    ['metafields.specs.colors', 'not_in', ['red'], undefined, true],
    ['metafields.specs.missing', 'empty', undefined, undefined, true],
    ['metafields.specs.missing', 'equals', 'x', undefined, false],
    // variants: any variant
    ['variants.price', 'greater', 11, undefined, true],
    ['variants.price', 'greater', 12, undefined, false],
    ['variants.price', 'equals', 10, undefined, true],
    ['variants.compareAtPrice', 'empty', undefined, undefined, true],
    ['variants.compareAtPrice', 'not_empty', undefined, undefined, true],
    ['variants.title', 'equals', 'large', undefined, true],
    ['variants.sku', 'starts_with', 'tee-1-', undefined, true],
    ['variants', 'not_empty', undefined, undefined, true],
  ])('%s %s %j (caseSensitive: %s) → %s', (field, operator, value, caseSensitive, expected) => {
    expect(conditionHolds(at(field, operator, value, caseSensitive), product())).toBe(expected);
  });

  test('a product without variants satisfies no variant condition, however it is phrased', () => {
    const p = product({ variants: [] });
    for (const op of ['empty', 'not_empty']) expect(conditionHolds(at('variants.compareAtPrice', op), p)).toBe(false);
    expect(conditionHolds({ not: at('variants.price', 'greater', 0) }, p)).toBe(true);
  });

  test('blank text, null and {} are empty; 0 and false are not', () => {
    const p = product({ brand: '   ', model: null, seo: {}, price: 0, taxable: false });
    for (const f of ['brand', 'model', 'seo']) expect(conditionHolds(at(f, 'empty'), p)).toBe(true);
    for (const f of ['price', 'taxable']) expect(conditionHolds(at(f, 'empty'), p)).toBe(false);
  });

  test('all / any / not nest', () => {
    const p = product();
    const yes = at('price', 'equals', 10);
    const no = at('price', 'equals', 11);
    expect(conditionHolds({ all: [yes, { any: [no, yes] }] }, p)).toBe(true);
    expect(conditionHolds({ all: [yes, { any: [no, { not: yes }] }] }, p)).toBe(false);
    expect(conditionHolds({ any: [no, { not: no }] }, p)).toBe(true);
  });
});

describe('the action matrix', () => {
  test('set: plain, nested (parents created), alias, enum, list', () => {
    const p = applied([
      { type: 'set', field: 'brand', value: 'Globex' },
      { type: 'set', field: 'shipping.dimensions.length', value: 30 },
      { type: 'set', field: 'title', value: 'Red tee' },
      { type: 'set', field: 'status', value: 'draft' },
      { type: 'set', field: 'bullets', value: ['Soft', 'Light'] },
    ]);
    expect(p.brand).toBe('Globex');
    expect(p.shipping).toEqual({ weight: 0.3, weightUnit: 'kg', dimensions: { length: 30 } });
    expect(p.title).toEqual({ value: 'Red tee', translations: [{ locale: 'es', value: 'Camiseta azul' }] });
    expect(p.status).toBe('draft');
    expect(p.bullets).toEqual(['Soft', 'Light']);
  });

  test('clear: optional field, list, field with a default, optional translated text', () => {
    const p = applied([
      { type: 'clear', field: 'compareAtPrice' },
      { type: 'clear', field: 'tags' },
      { type: 'clear', field: 'status' },
      { type: 'clear', field: 'description' },
      { type: 'clear', field: 'seo.metaTitle' },
    ]);
    expect('compareAtPrice' in p).toBe(false);
    expect(p.tags).toEqual([]);
    expect(p.status).toBe('draft');
    expect('description' in p).toBe(false);
    expect(p.seo).toEqual({});
  });

  test('add skips values present (case-insensitively) and repeated; remove drops every match', () => {
    expect(applied([{ type: 'add', field: 'tags', values: ['SALE', 'new', 'New', 'summer'] }]).tags).toEqual([
      'Sale',
      'summer',
      'new',
    ]);
    expect(applied([{ type: 'remove', field: 'tags', values: ['sale', 'absent'] }]).tags).toEqual(['summer']);
    expect(
      applied([{ type: 'add', field: 'bullets', values: ['One'] }], product({ bullets: undefined })).bullets,
    ).toEqual(['One']);
    expect(
      applied([{ type: 'remove', field: 'tags', values: ['x'] }], product({ tags: undefined })).tags,
    ).toBeUndefined();
  });

  test('copy: same type, alias, into a new metafield, from an empty field clears the target', () => {
    const p = applied([
      { type: 'copy', field: 'seo.metaTitle', from: 'title' },
      { type: 'copy', field: 'compareAtPrice', from: 'cost' },
      { type: 'copy', field: 'metafields.default.brand', from: 'brand' },
      { type: 'copy', field: 'brand', from: 'model' },
    ]);
    expect((p.seo as Obj).metaTitle).toBe('Blue Cotton T-Shirt');
    expect(p.compareAtPrice).toBe(4);
    expect((p.metafields as Obj[]).at(-1)).toEqual({
      namespace: 'default',
      key: 'brand',
      type: 'string',
      value: 'Acme',
    });
    expect('brand' in p).toBe(false);
  });

  test('copy: a variant field takes a product field on every variant, or its own variant field', () => {
    const p = applied([
      { type: 'copy', field: 'variants.compareAtPrice', from: 'compareAtPrice' },
      { type: 'copy', field: 'variants.barcode', from: 'variants.sku' },
    ]);
    expect(readField(p, 'variants.compareAtPrice')).toEqual([15, 15]);
    expect(readField(p, 'variants.barcode')).toEqual(['TEE-1-S', 'TEE-1-L']);
  });

  test('concatenate: fields and texts, empty parts left out, numbers as text', () => {
    const p = applied([
      {
        type: 'concatenate',
        field: 'seo.metaTitle',
        parts: [{ field: 'brand' }, { field: 'model' }, { text: 'tee' }, { field: 'price' }],
        separator: ' | ',
      },
      {
        type: 'concatenate',
        field: 'variants.barcode',
        parts: [{ field: 'sku' }, { text: '-' }, { field: 'variants.position' }],
      },
    ]);
    expect((p.seo as Obj).metaTitle).toBe('Acme | tee | 10');
    expect(readField(p, 'variants.barcode')).toEqual(['TEE-1-0', 'TEE-1-1']);
  });

  test('replace: every occurrence, plain text (no patterns), case-insensitive unless asked, in text lists too', () => {
    const p = product({ description: { value: 'Cotton. cotton! COTTON (.*)', translations: [] } });
    const out = applied(
      [
        { type: 'replace', field: 'description', find: 'cotton', replace: 'linen' },
        { type: 'replace', field: 'title', find: 'cotton', replace: 'Linen', caseSensitive: true },
        { type: 'replace', field: 'tags', find: 'SUM', replace: 'win' },
      ],
      p,
    );
    expect((out.description as Obj).value).toBe('linen. linen! linen (.*)');
    expect((out.title as Obj).value).toBe('Blue Cotton T-Shirt');
    expect(out.tags).toEqual(['Sale', 'winmer']);
    const pattern = applied([{ type: 'replace', field: 'description', find: '(.*)', replace: '[x]' }], p);
    expect((pattern.description as Obj).value).toBe('Cotton. cotton! COTTON [x]');
  });

  test.each<[string, number, Partial<FlowAction>, number]>([
    ['10 × 1.1 is 11, not 11.000000000000002', 10, { operation: 'multiply', operand: 1.1 }, 11],
    ['19.99 + 0.01 is 20', 19.99, { operation: 'add', operand: 0.01 }, 20],
    ['0.3 − 0.1 is 0.2', 0.3, { operation: 'subtract', operand: 0.1 }, 0.2],
    ['10 ÷ 3 rounds to 2 decimals', 10, { operation: 'divide', operand: 3 }, 3.33],
    ['halves round away from zero', 1.005, { operation: 'multiply', operand: 1 }, 1.01],
    ['19.99 × 1.15 = 22.9885 → 22.99', 19.99, { operation: 'multiply', operand: 1.15 }, 22.99],
    ['decimals: 0', 12.5, { operation: 'multiply', operand: 1, round: { decimals: 0 } }, 13],
    ['decimals: 3', 10, { operation: 'divide', operand: 3, round: { decimals: 3 } }, 3.333],
    ['step 0.05: 12.33 → 12.35', 12.33, { operation: 'multiply', operand: 1, round: { step: 0.05 } }, 12.35],
    ['step 0.05: 12.32 → 12.30', 12.32, { operation: 'multiply', operand: 1, round: { step: 0.05 } }, 12.3],
    ['step 0.05: 12.325 → 12.35 (halves away)', 12.325, { operation: 'add', operand: 0, round: { step: 0.05 } }, 12.35],
    ['step 5: 1234 × 1.1 → 1355', 1234, { operation: 'multiply', operand: 1.1, round: { step: 5 } }, 1355],
    ['ending .99: 12.30 → 12.99', 12.3, { operation: 'multiply', operand: 1, round: { ending: 0.99 } }, 12.99],
    ['ending .99: 12.99 stays', 12.99, { operation: 'multiply', operand: 1, round: { ending: 0.99 } }, 12.99],
    ['ending .99: 13.00 → 13.99', 13, { operation: 'multiply', operand: 1, round: { ending: 0.99 } }, 13.99],
    [
      'ending .99: 11 × 1.1 = 12.1 → 12.99',
      11,
      { operation: 'multiply', operand: 1.1, round: { ending: 0.99 } },
      12.99,
    ],
    ['ending .5: 12.51 → 13.5', 12.51, { operation: 'add', operand: 0, round: { ending: 0.5 } }, 13.5],
    ['ending 0: whole, rounded up', 12.01, { operation: 'add', operand: 0, round: { ending: 0 } }, 13],
  ])('calculate: %s', (_, price, calc, expected) => {
    const p = applied([{ type: 'calculate', field: 'price', ...calc } as FlowAction], product({ price }));
    expect(p.price).toBe(expected);
  });

  test('calculate: from another field, operand from a field, on a metafield', () => {
    const p = applied([
      { type: 'calculate', field: 'compareAtPrice', from: 'price', operation: 'multiply', operand: 1.2 },
      { type: 'calculate', field: 'price', from: 'cost', operation: 'add', operand: { field: 'price' } },
      {
        type: 'calculate',
        field: 'metafields.specs.weight_g',
        operation: 'divide',
        operand: 1000,
        round: { decimals: 3 },
      },
    ]);
    expect([p.compareAtPrice, p.price]).toEqual([12, 14]);
    expect(readField(p, 'metafields.specs.weight_g')).toBe(0.18);
  });

  test('calculate: every variant, a variant without the value left as it is', () => {
    const p = applied([
      { type: 'calculate', field: 'variants.price', operation: 'multiply', operand: 1.1 },
      { type: 'calculate', field: 'variants.compareAtPrice', operation: 'multiply', operand: 0.5 },
    ]);
    expect(readField(p, 'variants.price')).toEqual([11, 13.2]);
    expect(readField(p, 'variants.compareAtPrice')).toEqual([6, undefined]);
  });

  test('calculate: division by zero, an empty or non-number source fail the product, naming rule, action and field', () => {
    const zero = failure(
      [{ type: 'calculate', field: 'price', operation: 'divide', operand: { field: 'cost' } }],
      product({ cost: 0 }),
    );
    expect(zero).toEqual({
      error: 'rules.0.actions.0 (calculate price): division by zero: cost is 0 for this product',
      rule: 0,
      action: 0,
      field: 'price',
    });
    const empty = failure(
      [{ type: 'calculate', field: 'compareAtPrice', operation: 'multiply', operand: 2 }],
      product({ compareAtPrice: undefined }),
    );
    expect(empty.error).toMatch(/compareAtPrice is empty/);
    const text = failure([
      { type: 'calculate', field: 'metafields.specs.material', operation: 'multiply', operand: 2 },
    ]);
    expect(text.error).toMatch(/metafields\.specs\.material is not a number/);
    expect(JSON.stringify(zero)).not.toMatch(/NaN|Infinity/);
  });

  test('metafields: update keeps the type, create types by value, clear removes', () => {
    const p = applied([
      { type: 'set', field: 'metafields.specs.material', value: 'linen' },
      { type: 'set', field: 'metafields.default.care', value: 'Dry clean' },
      { type: 'set', field: 'metafields.specs.organic', value: true },
      { type: 'set', field: 'metafields.specs.gsm', value: 160 },
      { type: 'set', field: 'metafields.specs.sizes', value: ['S', 'L'] },
      { type: 'clear', field: 'metafields.specs.weight_g' },
      { type: 'add', field: 'metafields.specs.colors', values: ['BLUE', 'red'] },
    ]);
    expect(p.metafields).toEqual([
      { namespace: 'specs', key: 'material', type: 'string', value: 'linen' },
      { key: 'care', type: 'string', value: 'Dry clean' },
      { namespace: 'specs', key: 'colors', type: 'json', value: ['blue', 'navy', 'red'] },
      { namespace: 'specs', key: 'organic', type: 'boolean', value: true },
      { namespace: 'specs', key: 'gsm', type: 'number_decimal', value: 160 },
      { namespace: 'specs', key: 'sizes', type: 'json', value: ['S', 'L'] },
    ]);
    expect(
      applied([{ type: 'set', field: 'metafields.x.y', value: 1 }], product({ metafields: undefined })).metafields,
    ).toEqual([{ namespace: 'x', key: 'y', type: 'number_decimal', value: 1 }]);
  });

  test('variants: set and clear reach every variant; a product without variants is unchanged', () => {
    const p = applied([
      { type: 'set', field: 'variants.taxable', value: false },
      { type: 'clear', field: 'variants.compareAtPrice' },
      { type: 'replace', field: 'variants.title', find: 'a', replace: 'A' },
    ]);
    expect(readField(p, 'variants.taxable')).toEqual([false, false]);
    expect(readField(p, 'variants.compareAtPrice')).toEqual([undefined, undefined]);
    expect(readField(p, 'variants.title')).toEqual(['SmAll', 'LArge']);
    const plain = run([{ actions: [{ type: 'set', field: 'variants.price', value: 1 }] }], product({ variants: [] }));
    expect(plain.changed).toBe(false);
  });
});

describe('running a flow', () => {
  test('rules apply in order, each to the product as the one before left it', () => {
    const r = run([
      { actions: [{ type: 'calculate', field: 'price', operation: 'multiply', operand: 2 }] },
      {
        when: { field: 'price', operator: 'equals', value: 20 },
        actions: [{ type: 'add', field: 'tags', values: ['doubled'] }],
      },
      {
        when: { field: 'price', operator: 'equals', value: 10 },
        actions: [{ type: 'add', field: 'tags', values: ['never'] }],
      },
      {
        when: { field: 'tags', operator: 'contains', value: 'doubled' },
        actions: [{ type: 'set', field: 'brand', value: 'Twice' }],
      },
    ]);
    expect(r.firedRules).toEqual([0, 1, 3]);
    expect([r.product.price, r.product.tags, r.product.brand]).toEqual([20, ['Sale', 'summer', 'doubled'], 'Twice']);
    expect(r.changed).toBe(true);
  });

  test('the input is never changed; an untouched product is not `changed`', () => {
    const p = product();
    const before = JSON.stringify(p);
    run(
      [
        {
          actions: [
            { type: 'set', field: 'brand', value: 'X' },
            { type: 'clear', field: 'tags' },
          ],
        },
      ],
      p,
    );
    expect(JSON.stringify(p)).toBe(before);
    const same = run([
      { when: { field: 'price', operator: 'greater', value: 100 }, actions: [{ type: 'clear', field: 'tags' }] },
    ]);
    expect([same.firedRules, same.changed]).toEqual([[], false]);
    expect((same.product.createdAt as Date).getTime()).toBe((p.createdAt as Date).getTime());
    expect(run([{ actions: [{ type: 'set', field: 'brand', value: 'Acme' }] }]).changed).toBe(false);
  });

  test('a failing action stops the product with its error; earlier rules are not kept', () => {
    const result = runFlow(
      flow([
        { actions: [{ type: 'set', field: 'brand', value: 'X' }] },
        {
          name: 'halve',
          actions: [{ type: 'calculate', field: 'price', operation: 'divide', operand: { field: 'cost' } }],
        },
      ]),
      product({ cost: 0 }),
    );
    expect(result).toMatchObject({ rule: 1, action: 0, field: 'price' });
    expect('product' in result).toBe(false);
  });
});

describe('validation errors name their path', () => {
  test.each<[string, FlowCondition, string[]]>([
    ['unknown field', { field: 'colour', operator: 'equals', value: 'x' }, ['rules.0.when.field']],
    ['greater on text', { all: [{ field: 'brand', operator: 'greater', value: 1 }] }, ['rules.0.when.all.0.operator']],
    [
      'contains on a number',
      { all: [{ field: 'price', operator: 'contains', value: 1 }] },
      ['rules.0.when.all.0.operator'],
    ],
    ['equals on a structure', { field: 'category', operator: 'equals', value: 'x' }, ['rules.0.when.operator']],
    [
      'starts_with on a number list',
      { field: 'variants.price', operator: 'starts_with', value: '1' },
      ['rules.0.when.operator'],
    ],
    ['a text for a number', { field: 'price', operator: 'greater', value: '10' }, ['rules.0.when.value']],
    [
      'an enum value',
      { any: [{ field: 'status', operator: 'in', value: ['active', 'foo'] }] },
      ['rules.0.when.any.0.value.1'],
    ],
    ['between reversed', { field: 'price', operator: 'between', value: [20, 10] }, ['rules.0.when.value']],
    ['between with one value', { field: 'price', operator: 'between', value: [20] }, ['rules.0.when.value']],
    ['in without a list', { field: 'brand', operator: 'in', value: 'Acme' }, ['rules.0.when.value']],
    ['empty with a value', { field: 'brand', operator: 'empty', value: 'x' }, ['rules.0.when.value']],
    ['a date that is not one', { field: 'createdAt', operator: 'greater', value: 'yesterday' }, ['rules.0.when.value']],
    ['a boolean as text', { field: 'taxable', operator: 'equals', value: 'true' }, ['rules.0.when.value']],
    [
      'nested deep',
      { all: [{ any: [{ not: { field: 'nope', operator: 'empty' } }] }] },
      ['rules.0.when.all.0.any.0.not.field'],
    ],
  ])('condition: %s', (_, when, paths) => {
    expect(whenErrorPaths(when)).toEqual(paths);
  });

  test.each<[string, FlowCondition]>([
    ['status case-insensitively', { field: 'status', operator: 'equals', value: 'Active' }],
    ['read-only fields', { field: 'variants.sku', operator: 'in', value: ['A', 'B'] }],
    ['a metafield with any value', { field: 'metafields.a.b', operator: 'greater', value: '2024-01-01' }],
    ['variant list', { field: 'tags', operator: 'in', value: ['a'] }],
    ['dates', { field: 'updatedAt', operator: 'between', value: ['2024-01-01', '2024-12-31T23:59:59Z'] }],
  ])('condition accepted: %s', (_, when) => {
    expect(whenErrorPaths(when)).toEqual([]);
  });

  test.each<[string, FlowAction, string[]]>([
    ['unknown field', { type: 'set', field: 'colour', value: 'x' }, ['rules.0.actions.0.field']],
    ['read-only sku', { type: 'set', field: 'sku', value: 'X' }, ['rules.0.actions.0.field']],
    ['read-only variant sku', { type: 'clear', field: 'variants.sku' }, ['rules.0.actions.0.field']],
    ['read-only bindings', { type: 'clear', field: 'bindings' }, ['rules.0.actions.0.field']],
    ['read-only updatedAt', { type: 'set', field: 'updatedAt', value: '2024-01-01' }, ['rules.0.actions.0.field']],
    ['set status to a non-enum value', { type: 'set', field: 'status', value: 'foo' }, ['rules.0.actions.0.value']],
    ['set price to text', { type: 'set', field: 'price', value: 'x' }, ['rules.0.actions.0.value']],
    ['set price below its minimum', { type: 'set', field: 'price', value: -1 }, ['rules.0.actions.0.value']],
    [
      'set a text past its length',
      { type: 'set', field: 'seo.metaTitle', value: 'x'.repeat(61) },
      ['rules.0.actions.0.value'],
    ],
    [
      'set a slug off its pattern',
      { type: 'set', field: 'seo.slug', value: 'Not A Slug' },
      ['rules.0.actions.0.value'],
    ],
    ['set a structure', { type: 'set', field: 'category', value: { name: 'x' } }, ['rules.0.actions.0.field']],
    ['set a list item', { type: 'set', field: 'tags', value: ['ok', ''] }, ['rules.0.actions.0.value']],
    ['clear title', { type: 'clear', field: 'title.value' }, ['rules.0.actions.0.field']],
    ['clear price', { type: 'clear', field: 'price' }, ['rules.0.actions.0.field']],
    ['clear variant title', { type: 'clear', field: 'variants.title' }, ['rules.0.actions.0.field']],
    ['clear a required part', { type: 'clear', field: 'category.path' }, ['rules.0.actions.0.field']],
    ['add to text', { type: 'add', field: 'brand', values: ['x'] }, ['rules.0.actions.0.field']],
    [
      'add an invalid element',
      { type: 'add', field: 'tags', values: ['ok', 'x'.repeat(101)] },
      ['rules.0.actions.0.values.1'],
    ],
    ['copy text into a number', { type: 'copy', field: 'price', from: 'brand' }, ['rules.0.actions.0.from']],
    ['copy free text into an enum', { type: 'copy', field: 'status', from: 'brand' }, ['rules.0.actions.0.from']],
    [
      'copy from a variant into the product',
      { type: 'copy', field: 'price', from: 'variants.price' },
      ['rules.0.actions.0.from'],
    ],
    ['copy from nowhere', { type: 'copy', field: 'brand', from: 'nope' }, ['rules.0.actions.0.from']],
    [
      'concatenate into a number',
      { type: 'concatenate', field: 'price', parts: [{ text: '1' }] },
      ['rules.0.actions.0.field'],
    ],
    [
      'concatenate a list',
      { type: 'concatenate', field: 'brand', parts: [{ text: 'a' }, { field: 'tags' }] },
      ['rules.0.actions.0.parts.1.field'],
    ],
    ['replace in a number', { type: 'replace', field: 'price', find: '1', replace: '2' }, ['rules.0.actions.0.field']],
    [
      'calculate on text',
      { type: 'calculate', field: 'brand', operation: 'multiply', operand: 2 },
      ['rules.0.actions.0.field'],
    ],
    [
      'calculate from text',
      { type: 'calculate', field: 'price', from: 'title', operation: 'multiply', operand: 2 },
      ['rules.0.actions.0.from'],
    ],
    [
      'calculate with a text operand',
      { type: 'calculate', field: 'price', operation: 'add', operand: { field: 'brand' } },
      ['rules.0.actions.0.operand.field'],
    ],
    [
      'calculate dividing by a literal zero',
      { type: 'calculate', field: 'price', operation: 'divide', operand: 0 },
      ['rules.0.actions.0.operand'],
    ],
    [
      'calculate with a step of many decimals',
      { type: 'calculate', field: 'price', operation: 'add', operand: 0, round: { step: 0.0000001 } },
      ['rules.0.actions.0.round.step'],
    ],
  ])('action: %s', (_, action, paths) => {
    expect(actionErrorPaths(action)).toEqual(paths);
  });

  test.each<[string, FlowAction]>([
    ['set an enum', { type: 'set', field: 'status', value: 'disabled' }],
    ['set a nullable variant field to null', { type: 'set', field: 'variants.minAlertStock', value: null }],
    ['set a metafield to JSON', { type: 'set', field: 'metafields.a.b', value: { any: ['thing'] } }],
    ['clear an optional translated text', { type: 'clear', field: 'description' }],
    ['clear a field with a default', { type: 'clear', field: 'status' }],
    [
      'copy a variant field into a variant field',
      { type: 'copy', field: 'variants.compareAtPrice', from: 'variants.price' },
    ],
    ['copy a product field into a variant field', { type: 'copy', field: 'variants.price', from: 'price' }],
    ['copy an enum into a wider field', { type: 'copy', field: 'brand', from: 'status' }],
    ['calculate a metafield', { type: 'calculate', field: 'metafields.a.b', operation: 'add', operand: 1 }],
    ['replace in a text list', { type: 'replace', field: 'tags', find: 'a', replace: 'b' }],
    ['remove any text from a list', { type: 'remove', field: 'tags', values: ['x'.repeat(500)] }],
  ])('action accepted: %s', (_, action) => {
    expect(actionErrorPaths(action)).toEqual([]);
  });

  test('errors come with messages that name the field', () => {
    const errs = flowErrors(
      flow([
        {
          when: { field: 'brand', operator: 'greater', value: 1 },
          actions: [
            { type: 'set', field: 'status', value: 'foo' },
            { type: 'set', field: 'colour', value: 1 },
            { type: 'set', field: 'sku', value: 'x' },
          ],
        },
      ]),
    );
    expect(errs).toEqual([
      { path: 'rules.0.when.operator', message: expect.stringMatching(/^greater does not apply to brand \(text\)/) },
      { path: 'rules.0.actions.0.value', message: 'must be one of: active, disabled, draft' },
      { path: 'rules.0.actions.1.field', message: 'unknown field "colour"' },
      { path: 'rules.0.actions.2.field', message: 'sku is read-only' },
    ]);
  });

  test('more than 100 conditions in a rule is an error', () => {
    const leaf: FlowCondition = { field: 'price', operator: 'greater', value: 1 };
    const when: FlowCondition = { all: [{ any: Array(60).fill(leaf) }, { any: Array(41).fill(leaf) }] };
    expect(flowErrors(flow([{ when, actions: [{ type: 'clear', field: 'tags' }] }]))).toEqual([
      { path: 'rules.0.when', message: 'has 101 conditions; a rule takes at most 100' },
    ]);
  });
});

describe('flowSchema', () => {
  const validate = compile(flowSchema);
  const failuresOf = (body: unknown) => {
    const copy = structuredClone(body);
    return validate(copy) ? [] : inputFailures(validate.errors).map((f) => `${f.field} ${f.message}`);
  };
  const ok: FlowDefinition = {
    name: 'Summer prices',
    selection: { filters: { tags: ['summer'], minPrice: 5 } },
    rules: [
      {
        name: 'raise',
        when: {
          all: [
            { field: 'price', operator: 'greater', value: 10 },
            { any: [{ not: { field: 'tags', operator: 'contains', value: 'sale' } }] },
          ],
        },
        actions: [
          { type: 'calculate', field: 'price', operation: 'multiply', operand: 1.1, round: { ending: 0.99 } },
          {
            type: 'concatenate',
            field: 'seo.metaTitle',
            parts: [{ field: 'brand' }, { text: 'sale' }],
            separator: ' ',
          },
          {
            type: 'calculate',
            field: 'compareAtPrice',
            from: 'price',
            operation: 'multiply',
            operand: { field: 'cost' },
          },
        ],
      },
    ],
  };

  test('accepts a well-formed flow, and each selection form', () => {
    expect(failuresOf(ok)).toEqual([]);
    expect(failuresOf({ ...ok, selection: { skus: ['A', 'B'] } })).toEqual([]);
    expect(failuresOf({ ...ok, selection: { all: true } })).toEqual([]);
  });

  test.each<[string, unknown, string[]]>([
    ['an unknown top-level key', { ...ok, extra: 1 }, ['extra is not a known field']],
    ['no rules', { ...ok, rules: [] }, ['rules must NOT have fewer than 1 items']],
    ['51 rules', { ...ok, rules: Array(51).fill(ok.rules[0]) }, ['rules must NOT have more than 50 items']],
    [
      'a rule without actions',
      { ...ok, rules: [{ actions: [] }] },
      ['rules.0.actions must NOT have fewer than 1 items'],
    ],
    [
      'an unknown rule key',
      { ...ok, rules: [{ ...ok.rules[0], priority: 1 }] },
      ['rules.0.priority is not a known field'],
    ],
    ['two selections', { ...ok, selection: { skus: ['A'], all: true } }, ['selection.all is not a known field']],
    ['all: false', { ...ok, selection: { all: false } }, ['selection.all must be equal to constant']],
    ['no selection form', { ...ok, selection: {} }, ['selection.all is required']],
    [
      'junk filters',
      { ...ok, selection: { filters: { colour: 'red' } } },
      ['selection.filters.colour is not a known field'],
    ],
    [
      'too many skus',
      { ...ok, selection: { skus: Array.from({ length: 5001 }, (_, i) => `S${i}`) } },
      ['selection.skus must NOT have more than 5000 items'],
    ],
    [
      'an unknown operator',
      { ...ok, rules: [{ when: { field: 'price', operator: 'like', value: 1 }, actions: ok.rules[0].actions }] },
      ['rules.0.when.operator must be equal to one of the allowed values'],
    ],
    [
      'a condition with a stray key',
      {
        ...ok,
        rules: [{ when: { all: [{ field: 'price', operator: 'empty', x: 1 }] }, actions: ok.rules[0].actions }],
      },
      ['rules.0.when.all.0.x is not a known field'],
    ],
    [
      'an unknown action type',
      { ...ok, rules: [{ actions: [{ type: 'delete', field: 'price' }] }] },
      ['rules.0.actions.0.type must be equal to one of the allowed values'],
    ],
    [
      'a key of another action type',
      { ...ok, rules: [{ actions: [{ type: 'set', field: 'price', value: 1, values: [1] }] }] },
      ['rules.0.actions.0.values is not a known field'],
    ],
    [
      'set without a value',
      { ...ok, rules: [{ actions: [{ type: 'set', field: 'price' }] }] },
      ['rules.0.actions.0.value is required'],
    ],
    [
      'a rounding with two modes',
      {
        ...ok,
        rules: [
          {
            actions: [
              { type: 'calculate', field: 'price', operation: 'add', operand: 1, round: { step: 1, decimals: 2 } },
            ],
          },
        ],
      },
      ['rules.0.actions.0.round must NOT have more than 1 properties'],
    ],
    [
      'a concatenate part with field and text',
      { ...ok, rules: [{ actions: [{ type: 'concatenate', field: 'brand', parts: [{ field: 'sku', text: 'x' }] }] }] },
      ['rules.0.actions.0.parts.0 must NOT have more than 1 properties'],
    ],
    [
      'an empty find',
      { ...ok, rules: [{ actions: [{ type: 'replace', field: 'brand', find: '', replace: 'x' }] }] },
      ['rules.0.actions.0.find must NOT have fewer than 1 characters'],
    ],
  ])('refuses %s', (_, body, expected) => {
    expect(failuresOf(body)).toEqual(expect.arrayContaining(expected));
  });

  test('conditions nest 5 groups deep and no deeper', () => {
    const nest = (levels: number): FlowCondition =>
      levels === 0 ? { field: 'price', operator: 'empty' } : { all: [nest(levels - 1)] };
    const body = (levels: number) => ({ ...ok, rules: [{ when: nest(levels), actions: ok.rules[0].actions }] });
    expect(failuresOf(body(5))).toEqual([]);
    expect(failuresOf(body(6))).toContain('rules.0.when.all.0.all.0.all.0.all.0.all.0.all is not a known field');
  });

  test('validating a flow leaves it as it was (no defaults filled in)', () => {
    const copy = structuredClone(ok);
    validate(copy);
    expect(copy).toEqual(ok);
  });
});

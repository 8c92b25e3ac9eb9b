import { ObjectId } from 'mongodb';
import { ApiClient, type HttpResult } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import type { Scope } from '../../shared/auth/scopes';
import { TenantDb } from '../../shared/db/tenant-db';
import type { FlowAction, FlowCondition, FlowDefinition } from '../../shared/flows/definition';
import { Catalog } from '../../shared/products/catalog';

/**
 * Rule flows through HTTP on the real stack: validate, the operator and action matrices as a
 * client sees them (preview samples, stored products), preview = apply (and the products a
 * preview replans), products a flow would make invalid, runs that change nothing, rollback, runs
 * as jobs, Idempotency-Key, and the ways a flow selects products. Every group works in a tenant
 * of its own, so `{all: true}` selects exactly the products it seeded.
 */
let deps: TestDeps;

beforeAll(async () => {
  deps = await TestDeps.open();
});
afterAll(() => deps.close());

type Product = Record<string, any>;
const FLOW = '/products/bulk/flow';
const RUNNING = ['queued', 'processing'];

function must(res: HttpResult, status: number, what: string): any {
  if (res.status !== status) throw new Error(`${what} → ${res.status} ${res.text}`);
  return res.body;
}

/** A client of a new tenant whose key holds `scopes` (all by default). */
async function newTenant(scopes?: readonly Scope[]): Promise<{ api: ApiClient; tenantId: string }> {
  const t = await deps.tenantWithKey(scopes);
  return { api: new ApiClient(t.key), tenantId: t.tenantId };
}

/** Creates the products through POST /products; their ids by SKU. */
async function seed(api: ApiClient, inputs: Product[]): Promise<Record<string, string>> {
  const created = await Promise.all(
    inputs.map(async (p) => must(await api.post('/products', p), 201, `seed ${p.sku}`)),
  );
  return Object.fromEntries(created.map((p: Product) => [p.sku, p.id]));
}

const getProduct = async (api: ApiClient, id: string): Promise<Product> =>
  must(await api.get(`/products/${id}`), 200, `GET ${id}`);
const preview = (api: ApiClient, flow: unknown, opts = {}) => api.post(`${FLOW}/preview`, flow, opts);
const execute = (api: ApiClient, body: unknown, opts = {}) => api.post(`${FLOW}/execute`, body, opts);
const all = (...rules: FlowDefinition['rules']): FlowDefinition => ({ selection: { all: true }, rules });
const variant = (sku: string, price: number, position: number, extra: Product = {}) => ({
  sku,
  title: { value: `Size ${position}` },
  price,
  position,
  ...extra,
});

/** The SKUs one field's samples name, sorted (all of them while at most five products changed). */
function sampledSkus(run: Product, field: string): string[] {
  const f = (run.fields as Product[]).find((x) => x.field === field);
  return f ? f.samples.map((s: Product) => s.sku as string).sort() : [];
}

/** Polls a flow job until it ended; the last answer. */
async function runEnded(api: ApiClient, jobId: string, timeoutMs = 120_000): Promise<Product> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = must(await api.get(`${FLOW}/${jobId}`), 200, `GET job ${jobId}`);
    if (!RUNNING.includes(run.status)) return run;
    if (Date.now() > deadline) throw new Error(`${jobId} still ${run.status}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function flowOperationIds(api: ApiClient): Promise<string[]> {
  const list = must(await api.get('/products/bulk/operations', { query: { type: 'flow', limit: 200 } }), 200, 'ops');
  return list.operations.map((o: Product) => o.id);
}

describe('validate', () => {
  const good: FlowDefinition = all({
    when: { field: 'price', operator: 'greater', value: 10 },
    actions: [{ type: 'add', field: 'tags', values: ['premium'] }],
  });
  const oneAction = (action: unknown) => ({ selection: { all: true }, rules: [{ actions: [action] }] });
  let reader: ApiClient;
  beforeAll(async () => {
    reader = (await newTenant(['products:read'])).api;
  });

  test.each<[string, unknown, string[]]>([
    ['an unknown action field', oneAction({ type: 'set', field: 'nope', value: 1 }), ['rules.0.actions.0.field']],
    [
      'an unknown condition field',
      { ...good, rules: [{ ...good.rules[0], when: { field: 'metafields.x', operator: 'empty' } }] },
      ['rules.0.when.field'],
    ],
    ['sku as a target', oneAction({ type: 'set', field: 'sku', value: 'X' }), ['rules.0.actions.0.field']],
    ['variants.sku as a target', oneAction({ type: 'clear', field: 'variants.sku' }), ['rules.0.actions.0.field']],
    [
      'greater on title.value',
      { ...good, rules: [{ ...good.rules[0], when: { field: 'title.value', operator: 'greater', value: 'a' } }] },
      ['rules.0.when.operator'],
    ],
    ['status "bogus"', oneAction({ type: 'set', field: 'status', value: 'bogus' }), ['rules.0.actions.0.value']],
    ['an unknown key', { ...good, extra: 1 }, ['extra']],
    ['no rules', { selection: { all: true }, rules: [] }, ['rules']],
    ['rules missing', { selection: { all: true } }, ['rules']],
    ['an unknown action type', oneAction({ type: 'explode', field: 'price' }), ['rules.0.actions.0.type']],
  ])('%s: 200 {valid: false} naming the path', async (_, body, paths) => {
    const res = await reader.post(`${FLOW}/validate`, body);
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(false);
    expect(res.body.errors.map((e: Product) => e.path)).toEqual(paths);
    for (const e of res.body.errors) expect(e.message).toEqual(expect.any(String));
  });

  test('a good flow is valid; a read-only key may validate but not preview or execute', async () => {
    expect(must(await reader.post(`${FLOW}/validate`, good), 200, 'validate')).toEqual({ valid: true, errors: [] });
    expectError(await preview(reader, good), 403, 'auth:permission_denied');
    expectError(await execute(reader, good), 403, 'auth:permission_denied');
  });

  test('preview and execute refuse an invalid flow: 400 validation-error listing each problem', async () => {
    const { api } = await newTenant();
    const bad = oneAction({ type: 'set', field: 'sku', value: 'X' });
    for (const res of [await preview(api, bad), await execute(api, bad)]) {
      expectError(res, 400, 'validation-error');
      expect(res.body.errors.map((e: Product) => e.path)).toEqual(['rules.0.actions.0.field']);
    }
  });
});

describe('the operator matrix: which products a condition selects (preview samples)', () => {
  let api: ApiClient;
  const sizes = (sku: string, prices: number[]) => prices.map((p, i) => variant(`${sku}-${i}`, p, i));
  const products: Product[] = [
    {
      sku: 'OA',
      title: { value: 'Blue Cotton Shirt' },
      description: { value: 'Soft cotton' },
      price: 10,
      compareAtPrice: 15,
      tags: ['sale', 'summer'],
      brand: 'Acme',
      seo: { metaTitle: 'Blue shirt' },
      metafields: [
        { namespace: 'specs', key: 'material', type: 'string', value: 'cotton' },
        { namespace: 'specs', key: 'weight_g', type: 'number_decimal', value: 180 },
      ],
      variants: [variant('OA-S', 10, 0, { title: { value: 'Small' } }), variant('OA-L', 14, 1)],
    },
    {
      sku: 'OB',
      title: { value: 'Red Wool Sweater' },
      description: { value: '' },
      price: 25,
      tags: ['winter'],
      brand: 'Globex',
      seo: { metaTitle: 'Warm sweater' },
      metafields: [
        { namespace: 'specs', key: 'material', type: 'string', value: 'wool' },
        { namespace: 'specs', key: 'weight_g', type: 'number_decimal', value: 400 },
      ],
      variants: sizes('OB', [30]),
    },
    { sku: 'OC', title: { value: 'Green Cotton Socks' }, price: 5.5, brand: 'acme' },
    {
      sku: 'OD',
      title: { value: 'Leather Boots' },
      description: { value: 'Tough leather' },
      price: 100,
      tags: ['sale'],
      seo: { metaTitle: 'Boots' },
      metafields: [{ namespace: 'specs', key: 'material', type: 'string', value: 'leather' }],
      variants: sizes('OD', [95, 105]),
    },
    {
      sku: 'OE',
      title: { value: 'Cotton Hat' },
      description: { value: 'A hat' },
      price: 49.99,
      tags: ['new', 'summer'],
      brand: 'Initech',
      seo: {},
      metafields: [
        { namespace: 'specs', key: 'material', type: 'string', value: 'Cotton blend' },
        { namespace: 'specs', key: 'weight_g', type: 'number_decimal', value: 50 },
      ],
    },
  ];

  beforeAll(async () => {
    ({ api } = await newTenant());
    await seed(api, products);
  });

  const cases: [field: string, operator: string, value: unknown, skus: string[], caseSensitive?: boolean][] = [
    // text
    ['brand', 'equals', 'acme', ['OA', 'OC']],
    ['brand', 'equals', 'Acme', ['OA'], true],
    ['brand', 'not_equals', 'acme', ['OB', 'OD', 'OE']],
    ['brand', 'in', ['Globex', 'INITECH'], ['OB', 'OE']],
    ['brand', 'not_in', ['Acme'], ['OB', 'OD', 'OE']],
    ['brand', 'contains', 'obe', ['OB']],
    ['brand', 'starts_with', 'AC', ['OA', 'OC']],
    ['brand', 'ends_with', 'tech', ['OE']],
    ['brand', 'empty', undefined, ['OD']],
    ['brand', 'not_empty', undefined, ['OA', 'OB', 'OC', 'OE']],
    ['title', 'contains', 'cotton', ['OA', 'OC', 'OE']],
    ['title.value', 'starts_with', 'red', ['OB']],
    ['description.value', 'empty', undefined, ['OB', 'OC']],
    // numbers
    ['price', 'equals', 25, ['OB']],
    ['price', 'not_equals', 25, ['OA', 'OC', 'OD', 'OE']],
    ['price', 'in', [5.5, 100], ['OC', 'OD']],
    ['price', 'not_in', [10, 25], ['OC', 'OD', 'OE']],
    ['price', 'greater', 25, ['OD', 'OE']],
    ['price', 'less', 10, ['OC']],
    ['price', 'between', [10, 49.99], ['OA', 'OB', 'OE']],
    ['compareAtPrice', 'empty', undefined, ['OB', 'OC', 'OD', 'OE']],
    ['compareAtPrice', 'not_empty', undefined, ['OA']],
    // a list: an element satisfies it (not_in: none is one of the values)
    ['tags', 'contains', 'SALE', ['OA', 'OD']],
    ['tags', 'in', ['winter', 'new'], ['OB', 'OE']],
    ['tags', 'not_in', ['summer'], ['OB', 'OC', 'OD']],
    ['tags', 'starts_with', 'sum', ['OA', 'OE']],
    ['tags', 'ends_with', 'er', ['OA', 'OB', 'OE']],
    ['tags', 'empty', undefined, ['OC']],
    ['tags', 'not_empty', undefined, ['OA', 'OB', 'OD', 'OE']],
    // nested
    ['seo.metaTitle', 'equals', 'boots', ['OD']],
    ['seo.metaTitle', 'contains', 'shirt', ['OA']],
    ['seo.metaTitle', 'empty', undefined, ['OC', 'OE']],
    ['seo.metaTitle', 'not_empty', undefined, ['OA', 'OB', 'OD']],
    // metafields
    ['metafields.specs.material', 'equals', 'COTTON', ['OA']],
    ['metafields.specs.material', 'not_equals', 'cotton', ['OB', 'OC', 'OD', 'OE']],
    ['metafields.specs.material', 'in', ['wool', 'leather'], ['OB', 'OD']],
    ['metafields.specs.material', 'contains', 'cotton', ['OA', 'OE']],
    ['metafields.specs.material', 'starts_with', 'le', ['OD']],
    ['metafields.specs.material', 'ends_with', 'blend', ['OE']],
    ['metafields.specs.material', 'empty', undefined, ['OC']],
    ['metafields.specs.weight_g', 'greater', 100, ['OA', 'OB']],
    ['metafields.specs.weight_g', 'less', 100, ['OE']],
    ['metafields.specs.weight_g', 'between', [50, 180], ['OA', 'OE']],
    // variants: the condition holds when any variant satisfies it (none without variants)
    ['variants.price', 'equals', 14, ['OA']],
    ['variants.price', 'not_equals', 10, ['OA', 'OB', 'OD']],
    ['variants.price', 'in', [30, 95], ['OB', 'OD']],
    ['variants.price', 'not_in', [10, 14], ['OB', 'OD']],
    ['variants.price', 'greater', 100, ['OD']],
    ['variants.price', 'less', 11, ['OA']],
    ['variants.price', 'between', [28, 31], ['OB']],
    ['variants.price', 'not_empty', undefined, ['OA', 'OB', 'OD']],
    ['variants.compareAtPrice', 'empty', undefined, ['OA', 'OB', 'OD']],
    ['variants.title', 'equals', 'small', ['OA']],
    // dates (server fields may be read)
    ['createdAt', 'greater', '2000-01-01', ['OA', 'OB', 'OC', 'OD', 'OE']],
    ['createdAt', 'less', '2000-01-01', []],
  ];

  // every row as long as the test's parameters: jest hands a shorter row a `done` callback in their place
  const rows = cases.map(([field, op, value, skus, cs]) => [field, op, value, skus, cs === true] as const);
  test.each(rows)('%s %s %j → %j', async (field, operator, value, skus, caseSensitive) => {
    const when = {
      field,
      operator,
      ...(value !== undefined ? { value } : {}),
      ...(caseSensitive ? { caseSensitive } : {}),
    } as FlowCondition;
    const res = await preview(api, all({ when, actions: [{ type: 'add', field: 'tags', values: ['hit'] }] }));
    const run = must(res, 200, 'preview');
    expect(run).toMatchObject({ status: 'completed', mode: 'preview', operationId: null, errors: [] });
    expect(run.counts).toEqual({ matched: 5, changed: skus.length, unchanged: 5 - skus.length, invalid: 0, failed: 0 });
    expect(sampledSkus(run, 'tags')).toEqual(skus);
    expect(run.fields.map((f: Product) => f.field)).toEqual(skus.length ? ['tags'] : []);
  });
});

describe('the action matrix: what an execute stores (GET /products/{id})', () => {
  let api: ApiClient;
  let n = 0;
  beforeAll(async () => {
    ({ api } = await newTenant());
  });

  const shirt = (sku: string): Product => ({
    sku,
    title: { value: 'Blue Cotton Shirt' },
    description: { value: 'Soft cotton' },
    price: 10,
    compareAtPrice: 15,
    brand: 'Acme',
    tags: ['sale', 'summer'],
    seo: { metaTitle: 'Old title' },
    metafields: [{ namespace: 'specs', key: 'material', type: 'string', value: 'cotton' }],
    variants: [variant(`${sku}-S`, 10, 0), variant(`${sku}-L`, 14, 1)],
  });
  const metafield = (p: Product, key: string) => (p.metafields as Product[]).find((m) => m.key === key);
  const variantsOf = (p: Product, name: string) => (p.variants as Product[]).map((v) => v[name]);

  test.each<[string, FlowAction, (p: Product) => unknown, unknown]>([
    ['set a text', { type: 'set', field: 'brand', value: 'Globex' }, (p) => p.brand, 'Globex'],
    ['set an enum', { type: 'set', field: 'status', value: 'active' }, (p) => p.status, 'active'],
    [
      'set every variant',
      { type: 'set', field: 'variants.title', value: 'One' },
      (p) => variantsOf(p, 'title'),
      [
        { value: 'One', translations: [] },
        { value: 'One', translations: [] },
      ],
    ],
    ['clear an optional number', { type: 'clear', field: 'compareAtPrice' }, (p) => 'compareAtPrice' in p, false],
    ['clear a list', { type: 'clear', field: 'tags' }, (p) => p.tags, []],
    ['clear an optional translated text', { type: 'clear', field: 'description' }, (p) => 'description' in p, false],
    ['clear a nested text', { type: 'clear', field: 'seo.metaTitle' }, (p) => p.seo, {}],
    [
      'add (a tag already there in another case is not added)',
      { type: 'add', field: 'tags', values: ['new', 'SALE'] },
      (p) => p.tags,
      ['sale', 'summer', 'new'],
    ],
    ['remove', { type: 'remove', field: 'tags', values: ['SALE', 'absent'] }, (p) => p.tags, ['summer']],
    ['copy', { type: 'copy', field: 'seo.metaTitle', from: 'title' }, (p) => p.seo.metaTitle, 'Blue Cotton Shirt'],
    [
      'copy a product field to every variant',
      { type: 'copy', field: 'variants.compareAtPrice', from: 'compareAtPrice' },
      (p) => variantsOf(p, 'compareAtPrice'),
      [15, 15],
    ],
    [
      'concatenate',
      {
        type: 'concatenate',
        field: 'seo.metaTitle',
        parts: [{ field: 'brand' }, { text: '|' }, { field: 'title.value' }],
        separator: ' ',
      },
      (p) => p.seo.metaTitle,
      'Acme | Blue Cotton Shirt',
    ],
    [
      'replace in a text',
      { type: 'replace', field: 'title', find: 'COTTON', replace: 'Linen' },
      (p) => p.title.value,
      'Blue Linen Shirt',
    ],
    [
      'replace in a list',
      { type: 'replace', field: 'tags', find: 'sum', replace: 'win' },
      (p) => p.tags,
      ['sale', 'winmer'],
    ],
    [
      'calculate × 1.1 (exact decimals)',
      { type: 'calculate', field: 'price', operation: 'multiply', operand: 1.1 },
      (p) => p.price,
      11,
    ],
    [
      'calculate, step 0.05',
      { type: 'calculate', field: 'price', operation: 'multiply', operand: 1.234, round: { step: 0.05 } },
      (p) => p.price,
      12.35,
    ],
    [
      'calculate, ending .99',
      { type: 'calculate', field: 'price', operation: 'multiply', operand: 1.1, round: { ending: 0.99 } },
      (p) => p.price,
      11.99,
    ],
    [
      'calculate ÷ 3 (2 decimals by default)',
      { type: 'calculate', field: 'price', operation: 'divide', operand: 3 },
      (p) => p.price,
      3.33,
    ],
    [
      'calculate from another field',
      { type: 'calculate', field: 'compareAtPrice', from: 'price', operation: 'multiply', operand: 2 },
      (p) => p.compareAtPrice,
      20,
    ],
    [
      'calculate on variants.price',
      { type: 'calculate', field: 'variants.price', operation: 'multiply', operand: 1.1 },
      (p) => variantsOf(p, 'price'),
      [11, 15.4],
    ],
    [
      'calculate with a field operand',
      { type: 'calculate', field: 'compareAtPrice', operation: 'add', operand: { field: 'price' } },
      (p) => [p.price, p.compareAtPrice],
      [10, 25],
    ],
    [
      'set a new metafield',
      { type: 'set', field: 'metafields.specs.origin', value: 'Peru' },
      (p) => metafield(p, 'origin'),
      { namespace: 'specs', key: 'origin', type: 'string', value: 'Peru' },
    ],
    [
      'set a new number metafield',
      { type: 'set', field: 'metafields.specs.weight_g', value: 180 },
      (p) => metafield(p, 'weight_g'),
      { namespace: 'specs', key: 'weight_g', type: 'number_decimal', value: 180 },
    ],
    [
      'update a metafield',
      { type: 'set', field: 'metafields.specs.material', value: 'linen' },
      (p) => metafield(p, 'material'),
      { namespace: 'specs', key: 'material', type: 'string', value: 'linen' },
    ],
    ['clear a metafield', { type: 'clear', field: 'metafields.specs.material' }, (p) => p.metafields, []],
  ])('%s', async (_, action, read, expected) => {
    const sku = `ACT${++n}`;
    const ids = await seed(api, [shirt(sku)]);
    const res = await execute(api, { selection: { skus: [sku] }, rules: [{ actions: [action] }] });
    const run = must(res, 200, 'execute');
    expect(run).toMatchObject({
      status: 'completed',
      mode: 'apply',
      errors: [],
      operationId: expect.stringMatching(/^bop_/),
    });
    expect(run.counts).toEqual({ matched: 1, changed: 1, unchanged: 0, invalid: 0, failed: 0 });
    expect(read(await getProduct(api, ids[sku]))).toEqual(expected);
  });
});

describe('preview, then apply by previewId', () => {
  // 8 products; × 1.5 lifts three of them past their compareAtPrice (invalid), and the second
  // rule sees the first's price (premium above 50)
  const inputs = [10, 20, 30, 40, 50, 60, 70, 80].map((price, i) => ({
    sku: `PV${i}`,
    title: { value: `Item ${i}` },
    price,
    ...(i % 3 === 0 ? { compareAtPrice: price * 1.2 } : i % 3 === 1 ? { compareAtPrice: price * 2 } : {}),
  }));
  const flow = all(
    { actions: [{ type: 'calculate', field: 'price', operation: 'multiply', operand: 1.5 }] },
    {
      when: { field: 'price', operator: 'greater', value: 50 },
      actions: [{ type: 'add', field: 'tags', values: ['premium'] }],
    },
  );

  test('the apply writes exactly what the preview showed; the preview alone writes nothing', async () => {
    const { api } = await newTenant();
    const ids = await seed(api, inputs);
    const skus = Object.keys(ids).sort();
    const stored = async () =>
      Object.fromEntries(await Promise.all(skus.map(async (s) => [s, await getProduct(api, ids[s])])));
    const before = await stored();

    const pv = must(await preview(api, flow), 200, 'preview');
    expect(pv.counts).toEqual({ matched: 8, changed: 5, unchanged: 0, invalid: 3, failed: 0 });
    // errors come in the order of the products' ids (seeded in parallel here): compared by SKU
    expect(pv.errors.map((e: Product) => [e.sku, e.code]).sort()).toEqual(
      ['PV0', 'PV3', 'PV6'].map((s) => [s, 'validation-error']),
    );
    for (const e of pv.errors) expect(e.fieldErrors.map((f: Product) => f.field)).toEqual(['compareAtPrice']);
    expect(pv.fields.map((f: Product) => [f.field, f.changed])).toEqual([
      ['price', 5],
      ['tags', 3],
    ]);
    expect(pv.expiresAt).toEqual(expect.any(String));
    expect(await stored()).toEqual(before);

    const ex = await execute(api, { previewId: pv.jobId });
    expect(ex.status).toBe(207);
    expect(ex.body).toMatchObject({ mode: 'apply', status: 'completed', previewId: pv.jobId, replanned: [] });
    expect(ex.body.operationId).toMatch(/^bop_/);
    expect([ex.body.counts, ex.body.fields, ex.body.errors]).toEqual([pv.counts, pv.fields, pv.errors]);

    const after = await stored();
    for (const f of pv.fields)
      for (const s of f.samples) expect(f.field === 'price' ? after[s.sku].price : after[s.sku].tags).toEqual(s.after);
    for (const e of pv.errors) expect(after[e.sku]).toEqual(before[e.sku]);
    for (const s of ['PV1', 'PV2', 'PV4', 'PV5', 'PV7']) expect(after[s].price).toBe(before[s].price * 1.5);

    // the same preview sent again (a client's retry without an Idempotency-Key): a preview is applied once, and
    // asking again answers that apply
    const again = await execute(api, { previewId: pv.jobId });
    expect(again.status).toBe(ex.status);
    expect(again.body).toEqual(ex.body);
    expect(await stored()).toEqual(after);
  });

  test('a product changed after the preview is planned again and listed in replanned', async () => {
    const { api } = await newTenant();
    const ids = await seed(api, inputs.slice(0, 4));
    const big = all({
      when: { field: 'price', operator: 'greater', value: 50 },
      actions: [{ type: 'add', field: 'tags', values: ['big'] }],
    });
    const pv = must(await preview(api, big), 200, 'preview');
    expect(pv.counts).toMatchObject({ matched: 4, changed: 0, unchanged: 4 });
    // PV1 moves above 50 after the preview: the plan "unchanged" no longer holds for it
    must(await api.put(`/products/${ids.PV1}`, { ...inputs[1], price: 55, compareAtPrice: 80 }), 200, 'PUT');

    const other = all({ actions: [{ type: 'add', field: 'tags', values: ['other'] }] });
    expectError(await execute(api, { ...other, previewId: pv.jobId }), 409, 'preview-mismatch');
    expectError(await execute(api, { previewId: 'flow_01NOSUCHPREVIEW' }), 404, 'not-found');

    const ex = must(await execute(api, { ...big, previewId: pv.jobId }), 200, 'execute');
    expect(ex.replanned).toEqual(['PV1']);
    expect(ex.counts).toMatchObject({ matched: 4, changed: 1, unchanged: 3 });
    expect(await getProduct(api, ids.PV1)).toMatchObject({ price: 55, compareAtPrice: 80, tags: ['big'] });
    expect((await getProduct(api, ids.PV3)).tags).toEqual([]);
  });
});

describe('runs that cannot change or do not change products', () => {
  test('a product the flow would make invalid: 207, validation-error naming compareAtPrice, left as it was', async () => {
    const { api } = await newTenant();
    const ids = await seed(api, [
      { sku: 'INV1', title: { value: 'Capped' }, price: 10, compareAtPrice: 11 },
      { sku: 'INV2', title: { value: 'Free' }, price: 10 },
    ]);
    const before = await getProduct(api, ids.INV1);
    const res = await execute(api, all({ actions: [{ type: 'set', field: 'price', value: 12 }] }));
    expect(res.status).toBe(207);
    expect(res.body.counts).toEqual({ matched: 2, changed: 1, unchanged: 0, invalid: 1, failed: 0 });
    expect(res.body.errors).toEqual([
      {
        productId: ids.INV1,
        sku: 'INV1',
        code: 'validation-error',
        message: expect.stringContaining('compareAtPrice'),
        fieldErrors: [{ field: 'compareAtPrice', message: expect.any(String) }],
      },
    ]);
    expect(await getProduct(api, ids.INV1)).toEqual(before);
    expect((await getProduct(api, ids.INV2)).price).toBe(12);
  });

  test('a flow that changes nothing: 200, operationId null, no operation recorded', async () => {
    const { api } = await newTenant();
    await seed(api, [
      { sku: 'NC1', title: { value: 'One' }, price: 10, brand: 'Acme' },
      { sku: 'NC2', title: { value: 'Two' }, price: 20, brand: 'Acme' },
    ]);
    const opsBefore = await flowOperationIds(api);
    const none = all({
      when: { field: 'price', operator: 'greater', value: 1000 },
      actions: [{ type: 'set', field: 'brand', value: 'X' }],
    });
    const already = all({ actions: [{ type: 'set', field: 'brand', value: 'Acme' }] });
    for (const flow of [none, already]) {
      const run = must(await execute(api, flow), 200, 'execute');
      expect(run).toMatchObject({ status: 'completed', operationId: null, errors: [], fields: [] });
      expect(run.counts).toEqual({ matched: 2, changed: 0, unchanged: 2, invalid: 0, failed: 0 });
    }
    expect(await flowOperationIds(api)).toEqual(opsBefore);
  });
});

describe('rollback of a flow', () => {
  const rollbackUrl = (id: string) => `/products/bulk/operations/${id}/rollback`;
  async function rollbackEnded(api: ApiClient, id: string): Promise<Product> {
    for (const deadline = Date.now() + 60_000; ;) {
      const res = must(await api.get(rollbackUrl(id)), 200, 'rollback status');
      if (res.status === 'completed' || res.status === 'failed') return res;
      if (Date.now() > deadline) throw new Error(`rollback of ${id} still ${res.status}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  test('restores price and tags; refused once a product was edited after the flow', async () => {
    const { api } = await newTenant();
    const ids = await seed(api, [
      { sku: 'RB1', title: { value: 'One' }, price: 10, tags: ['a'] },
      { sku: 'RB2', title: { value: 'Two' }, price: 20 },
    ]);
    const before = [await getProduct(api, ids.RB1), await getProduct(api, ids.RB2)];
    const double = all({
      actions: [
        { type: 'calculate', field: 'price', operation: 'multiply', operand: 2 },
        { type: 'add', field: 'tags', values: ['doubled'] },
      ],
    });
    const run = must(await execute(api, { ...double, operationName: 'double prices' }), 200, 'execute');
    expect((await getProduct(api, ids.RB1)).price).toBe(20);
    const op = must(await api.get(`/products/bulk/operations/${run.operationId}`), 200, 'operation');
    expect(op).toMatchObject({ type: 'flow', status: 'completed', canRollback: true, operationName: 'double prices' });
    expect(op.products.map((p: Product) => p.sku).sort()).toEqual(['RB1', 'RB2']);
    expect(await flowOperationIds(api)).toContain(run.operationId);

    expect(must(await api.post(rollbackUrl(run.operationId)), 202, 'rollback').jobId).toMatch(/^rbk_/);
    expect(await rollbackEnded(api, run.operationId)).toMatchObject({
      status: 'completed',
      success: true,
      restored: 2,
    });
    for (const [i, id] of [ids.RB1, ids.RB2].entries()) {
      const now = await getProduct(api, id);
      expect([now.price, now.tags]).toEqual([before[i].price, before[i].tags]);
    }

    const second = must(
      await execute(api, all({ actions: [{ type: 'add', field: 'tags', values: ['x'] }] })),
      200,
      'execute',
    );
    must(
      await api.put(`/products/${ids.RB1}`, { sku: 'RB1', title: { value: 'Edited by hand' }, price: 10 }),
      200,
      'PUT',
    );
    const blocked = must(await api.get(`/products/bulk/operations/${second.operationId}`), 200, 'operation');
    expect(blocked).toMatchObject({ canRollback: false, rollbackBlockedBy: expect.stringContaining('RB1') });
    const refused = await api.post(rollbackUrl(second.operationId));
    expectError(refused, 400, 'rollback-failed');
    expect(refused.body.details.blockedSkus).toEqual(['RB1']);
    expect((await getProduct(api, ids.RB2)).tags).toEqual(['x']);
  });
});

describe('runs as jobs, idempotency, selections', () => {
  test('more than FLOW_SYNC_MAX products: 202 with a flow_ job to poll; cancel and other tenants', async () => {
    const { api, tenantId } = await newTenant();
    const catalog = new Catalog(new TenantDb(deps.db, tenantId));
    const count = deps.config.flowSyncMax + 1;
    const batch = await Promise.all(
      Array.from({ length: count }, async (_, i) => ({
        product: await catalog.prepare({ sku: `JOB${i}`, title: { value: `Job ${i}` }, price: 10 }),
        _id: new ObjectId(),
      })),
    );
    for (const stored of await catalog.insertMany(batch)) expect(stored).not.toBeInstanceOf(Error);

    const res = await execute(
      api,
      all({ actions: [{ type: 'calculate', field: 'price', operation: 'multiply', operand: 1.1 }] }),
    );
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ jobId: expect.stringMatching(/^flow_/), mode: 'apply' });
    expect(RUNNING).toContain(res.body.status);
    expect(res.headers.get('location')).toBe(`${FLOW}/${res.body.jobId}`);
    const run = await runEnded(api, res.body.jobId);
    expect(run).toMatchObject({ status: 'completed', processed: count, percent: 100, errors: [] });
    expect(run.counts).toEqual({ matched: count, changed: count, unchanged: 0, invalid: 0, failed: 0 });
    expect(run.fields).toEqual([expect.objectContaining({ field: 'price', changed: count })]);
    expect((await getProduct(api, batch[count - 1]._id.toHexString())).price).toBe(11);

    expectError(await api.post(`${FLOW}/${run.jobId}/cancel`), 400, 'cancel-failed');
    expectError(await api.get(`${FLOW}/flow_01NOSUCHJOB`), 404, 'not-found');
    expectError(await api.post(`${FLOW}/flow_01NOSUCHJOB/cancel`), 404, 'not-found');
    const other = (await newTenant()).api;
    expectError(await other.get(`${FLOW}/${run.jobId}`), 404, 'not-found');
    expectError(await other.post(`${FLOW}/${run.jobId}/cancel`), 404, 'not-found');
    // a large run's total is null until its first step fixed its products (counting would read them all), then exact
    expect(res.body.total === null || res.body.total === count).toBe(true);
    expect(run.total).toBe(count);
  });

  test('the same execute twice with one Idempotency-Key: one run, prices raised once', async () => {
    const { api } = await newTenant();
    const ids = await seed(api, [{ sku: 'IDEM', title: { value: 'Once' }, price: 10 }]);
    const body = {
      selection: { skus: ['IDEM'] },
      rules: [{ actions: [{ type: 'calculate', field: 'price', operation: 'multiply', operand: 1.1 }] }],
    };
    const headers = { 'Idempotency-Key': `idem-${Date.now()}` };
    const first = must(await execute(api, body, { headers }), 200, 'first');
    const second = must(await execute(api, body, { headers }), 200, 'second');
    expect(second).toEqual(first);
    expect(must(await api.get(`${FLOW}/${first.jobId}`), 200, 'GET job')).toEqual(first);
    expect((await getProduct(api, ids.IDEM)).price).toBe(11);
    // concurrent requests with a new key: one run as well
    const again = { 'Idempotency-Key': `again-${Date.now()}` };
    const together = await Promise.all([1, 2, 3].map(() => execute(api, body, { headers: again })));
    expect(new Set(together.map((r) => `${r.status} ${r.body.jobId}`)).size).toBe(1);
    expect((await getProduct(api, ids.IDEM)).price).toBe(12.1);
  });

  test('an Idempotency-Key a preview used is refused for an execute (another request), which writes nothing', async () => {
    const { api } = await newTenant();
    const ids = await seed(api, [{ sku: 'KEY', title: { value: 'Key' }, price: 10 }]);
    const body = all({ actions: [{ type: 'set', field: 'price', value: 12 }] });
    const headers = { 'Idempotency-Key': `shared-${Date.now()}` };
    const pv = must(await preview(api, body, { headers }), 200, 'preview');
    expect(must(await preview(api, body, { headers }), 200, 'preview again').jobId).toBe(pv.jobId);
    expectError(await execute(api, body, { headers }), 409, 'idempotency-key-reused');
    expect((await getProduct(api, ids.KEY)).price).toBe(10);
    const ex = await execute(api, body, { headers: { 'Idempotency-Key': `own-${Date.now()}` } });
    expect(ex.body).toMatchObject({ mode: 'apply', status: 'completed' });
    expect((await getProduct(api, ids.KEY)).price).toBe(12);
  });

  test('selection by filters, by a variant SKU, and unknown SKUs listed as not-found (207)', async () => {
    const { api } = await newTenant();
    const ids = await seed(api, [
      { sku: 'SEL1', title: { value: 'One' }, price: 10, brand: 'Acme', variants: [variant('SEL1-V', 10, 0)] },
      { sku: 'SEL2', title: { value: 'Two' }, price: 20, brand: 'Globex' },
      { sku: 'SEL3', title: { value: 'Three' }, price: 30, brand: 'Globex' },
    ]);
    const tag = (selection: unknown, value: string) => ({
      selection,
      rules: [{ actions: [{ type: 'add', field: 'tags', values: [value] }] }],
    });

    const byBrand = must(await execute(api, tag({ filters: { brands: ['Globex'] } }, 'g')), 200, 'filters');
    expect([byBrand.counts.changed, sampledSkus(byBrand, 'tags')]).toEqual([2, ['SEL2', 'SEL3']]);
    const byPrice = must(await execute(api, tag({ filters: { minPrice: 25 } }, 'p')), 200, 'minPrice');
    expect(sampledSkus(byPrice, 'tags')).toEqual(['SEL3']);
    const byVariant = must(await execute(api, tag({ skus: ['sel1-v'] }, 'v')), 200, 'variant SKU');
    expect(sampledSkus(byVariant, 'tags')).toEqual(['SEL1']);

    const missing = await execute(api, tag({ skus: ['SEL2', 'NOPE-1'] }, 'm'));
    expect(missing.status).toBe(207);
    expect(missing.body.counts).toEqual({ matched: 2, changed: 1, unchanged: 0, invalid: 0, failed: 1 });
    expect(missing.body.errors).toEqual([
      { productId: null, sku: 'NOPE-1', code: 'not-found', message: expect.any(String) },
    ]);
    expect((await getProduct(api, ids.SEL2)).tags).toEqual(['g', 'm']);
    expect((await getProduct(api, ids.SEL1)).tags).toEqual(['v']);
    expect((await getProduct(api, ids.SEL3)).tags).toEqual(['g', 'p']);
  });
});

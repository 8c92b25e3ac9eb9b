import { ObjectId } from 'mongodb';
import { ApiClient, type HttpResult } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import type { Scope } from '../../shared/auth/scopes';
import { TenantDb } from '../../shared/db/tenant-db';
import { products } from '../../shared/products/collections';

/**
 * POST /products/marketplace-categories through HTTP on the real stack, as a client sees it: the
 * 200/207 bodies, the metafield a later GET of the product shows, the metafield key per channel
 * type and site, idempotent repeats, every 400 code with nothing written, the bulk operation and
 * its rollback, and the scopes. The only look behind the API is at a product's stored version,
 * which the API does not show, to prove that a refused or idempotent request wrote nothing.
 */
const ASSIGN = '/products/marketplace-categories';
const OPS = '/products/bulk/operations';
/** Every SKU of this run starts with this: reruns on a kept database never meet an earlier run's products. */
const P = `MC${Date.now().toString(36).toUpperCase()}`;
let n = 0;

type Json = Record<string, any>;
interface Product {
  id: string;
  sku: string;
}

let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
/** A second tenant: its channel and products must stay out of reach of the first tenant's key. */
let other: { api: ApiClient };

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey();
  api = new ApiClient(t.key);
  tenantId = t.tenantId;
  const o = await deps.tenantWithKey(undefined, 'other tenant');
  other = { api: new ApiClient(o.key) };
});
afterAll(() => deps.close());

// ---------------------------------------------------------------------------------------------
// helpers

function must(res: HttpResult, status: number, what: string): any {
  if (res.status !== status) throw new Error(`${what} → ${res.status} ${res.text}`);
  return res.body;
}

/** A channel of `type` (any accepted spelling); nothing calls its endpoint while assigning categories. */
async function channel(type = 'mercadolibre', settings: Json = {}, as = api): Promise<string> {
  const body = {
    name: `Channel ${P} ${++n}`,
    type,
    settings: { endpointUrl: 'https://channel.example.com/api', ...settings },
    secret: 'test-signing-secret-0123456789',
  };
  return must(await as.post('/channels', body), 201, `channel ${type}`).id;
}

async function product(extra: Json = {}, as = api): Promise<Product> {
  const sku = `${P}-${++n}`;
  const body = { sku, title: { value: `Product ${n}` }, price: 10, ...extra };
  const created = must(await as.post('/products', body), 201, `product ${sku}`);
  return { id: created.id, sku: created.sku };
}

const read = async (p: Product, as = api): Promise<Json> =>
  must(await as.get(`/products/${p.id}`), 200, `GET ${p.sku}`);

/** The stored version and updatedAt: what an idempotent or refused request must leave alone. */
async function stamp(p: Product): Promise<{ version: number; updatedAt: string }> {
  const doc = await new TenantDb(deps.db, tenantId).collection(products).findOne({ _id: new ObjectId(p.id) });
  if (!doc) throw new Error(`no stored product ${p.sku}`);
  return { version: doc.version, updatedAt: doc.updatedAt.toISOString() };
}

const assign = (body: unknown, as = api) => as.post(ASSIGN, body);

/** A request body with the parts a test does not care about filled in. */
const request = (skus: string[], channelId: string, category: Json = { id: 'MLM1055', name: 'Phones' }) => ({
  skus,
  channelId,
  category,
});

/** The metafield a manual assignment writes, `assignedAt` any ISO time (checked where it matters). */
function assignmentField(key: string, channelId: string, c: { id: string; name?: string | null; path?: unknown }) {
  return {
    namespace: 'mkt_category',
    key,
    type: 'json',
    value: {
      id: c.id,
      name: c.name ?? null,
      path: c.path ?? null,
      source: 'manual',
      channelId,
      assignedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    },
  };
}

const categoryFields = (p: Json): Json[] => p.metafields.filter((m: Json) => m.namespace === 'mkt_category');

/** Metafields a product may carry besides its categories: they must survive assignments in order. */
const CUSTOM = [
  { namespace: 'custom', key: 'care', type: 'string', value: 'hand wash' },
  { namespace: 'custom', key: 'spec', type: 'json', value: { watts: 40 } },
];

async function operationIds(as = api): Promise<string[]> {
  const list = must(await as.get(OPS, { query: { type: 'marketplace-category', limit: 200 } }), 200, 'ops');
  return list.operations.map((o: Json) => o.id);
}

async function rolledBack(operationId: string): Promise<Json> {
  const url = `${OPS}/${operationId}/rollback`;
  expect(must(await api.post(url), 202, 'rollback').jobId).toMatch(/^rbk_/);
  for (const deadline = Date.now() + 60_000; ;) {
    const res = must(await api.get(url), 200, 'rollback status');
    if (res.status === 'completed' || res.status === 'failed') return res;
    if (Date.now() > deadline) throw new Error(`rollback of ${operationId} still ${res.status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

// ---------------------------------------------------------------------------------------------

describe('every SKU assigned: 200', () => {
  test('the body, and the metafield each product then shows (other metafields kept, in order)', async () => {
    const ch = await channel('mercadolibre');
    const plain = await product();
    const withFields = await product({ metafields: CUSTOM });
    const category = { id: 'MLM1055', name: 'Celulares y Smartphones', path: 'Celulares > Teléfonos > Smartphones' };
    // one SKU in lower case: SKUs are case-insensitive, results name the stored SKU
    const res = await assign(request([plain.sku, withFields.sku.toLowerCase()], ch, category));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      channelId: ch,
      channelType: 'mercadolibre',
      metafieldKey: 'mercadolibre:MLM',
      category: { id: 'MLM1055', name: 'Celulares y Smartphones', path: ['Celulares', 'Teléfonos', 'Smartphones'] },
      operationId: expect.stringMatching(/^bop_/),
      assigned: 2,
      unchanged: 0,
      failed: 0,
      results: [
        { sku: plain.sku, success: true },
        { sku: withFields.sku, success: true },
      ],
    });
    const field = assignmentField('mercadolibre:MLM', ch, {
      ...category,
      path: ['Celulares', 'Teléfonos', 'Smartphones'],
    });
    expect((await read(plain)).metafields).toEqual([field]);
    const got = await read(withFields);
    expect(got.metafields).toEqual([...CUSTOM, field]);
    const at = got.metafields[2].value.assignedAt;
    expect(new Date(at).toISOString()).toBe(at);
    expect(Math.abs(Date.parse(at) - Date.now())).toBeLessThan(60_000);
  });

  test.each<[string, unknown, string[] | null]>([
    ['text "A > B > C"', 'Home > Kitchen > Pots', ['Home', 'Kitchen', 'Pots']],
    [
      'a list, kept as is (a ">" inside a name does not split it)',
      ['Home & Garden', 'Pots > Pans'],
      ['Home & Garden', 'Pots > Pans'],
    ],
    ['null', null, null],
    ['absent', undefined, null],
  ])('path sent as %s is stored as %p', async (_, path, stored) => {
    const ch = await channel('mercadolibre');
    const p = await product();
    const category = { id: 'MLM5', name: 'Pots', ...(path !== undefined ? { path } : {}) };
    const body = must(await assign(request([p.sku], ch, category)), 200, 'assign');
    expect(body.category).toEqual({ id: 'MLM5', name: 'Pots', path: stored });
    expect((await read(p)).metafields).toEqual([
      assignmentField('mercadolibre:MLM', ch, { ...category, path: stored }),
    ]);
  });

  test('a category with only an id: name and path null', async () => {
    const ch = await channel('amazon');
    const p = await product();
    const body = must(await assign(request([p.sku], ch, { id: 'B0-123' })), 200, 'assign');
    expect(body.category).toEqual({ id: 'B0-123', name: null, path: null });
    expect((await read(p)).metafields).toEqual([assignmentField('amazon:MX', ch, { id: 'B0-123' })]);
  });
});

describe('the metafield key: <channelType>:<siteId>', () => {
  test.each<[string, Json, string, string]>([
    ['mercadolibre', {}, 'mercadolibre', 'mercadolibre:MLM'],
    ['mercadolibre', { siteId: 'MLA' }, 'mercadolibre', 'mercadolibre:MLA'],
    ['mercado-libre', {}, 'mercadolibre', 'mercadolibre:MLM'],
    ['meli', { siteId: 'MLB' }, 'mercadolibre', 'mercadolibre:MLB'],
    ['t1', {}, 't1', 't1:SR'],
    ['t1', { siteId: 'CS' }, 't1', 't1:CS'],
    ['claroshop', {}, 't1', 't1:SR'],
    ['t1-comercios', {}, 't1', 't1:SR'],
    ['amazon', {}, 'amazon', 'amazon:MX'],
    ['amazon', { siteId: 'ATVPDKIKX0DER' }, 'amazon', 'amazon:ATVPDKIKX0DER'],
    ['walmart', {}, 'walmart', 'walmart:MX'],
    ['walmart', { siteId: 'US' }, 'walmart', 'walmart:US'],
    ['shopify', {}, 'shopify', 'shopify:default'],
    ['shopify', { siteId: 'store-mx' }, 'shopify', 'shopify:store-mx'],
    ['custom', {}, 'custom', 'custom:default'],
    ['custom-api', { siteId: 'EU' }, 'custom', 'custom:EU'],
  ])('type %p with settings %p → %s, %s', async (type, settings, channelType, key) => {
    const ch = await channel(type, settings);
    const p = await product();
    const body = must(await assign(request([p.sku], ch, { id: 'C1' })), 200, 'assign');
    expect([body.channelType, body.metafieldKey]).toEqual([channelType, key]);
    expect(categoryFields(await read(p))).toEqual([assignmentField(key, ch, { id: 'C1' })]);
  });

  test('two channels with different keys keep two metafields; the same key again replaces it in place', async () => {
    const meli = await channel('mercadolibre');
    const amazon = await channel('amazon');
    // a second channel of the same type and site shares the key (and the marketplace's category tree)
    const meli2 = await channel('mercado-libre', { siteId: 'MLM' });
    const p = await product({ metafields: CUSTOM });
    must(await assign(request([p.sku], meli, { id: 'MLM1' })), 200, 'meli');
    must(await assign(request([p.sku], amazon, { id: 'AMZ1' })), 200, 'amazon');
    expect((await read(p)).metafields).toEqual([
      ...CUSTOM,
      assignmentField('mercadolibre:MLM', meli, { id: 'MLM1' }),
      assignmentField('amazon:MX', amazon, { id: 'AMZ1' }),
    ]);
    const again = must(await assign(request([p.sku], meli2, { id: 'MLM2', name: 'Other' })), 200, 'meli2');
    expect(again).toMatchObject({ metafieldKey: 'mercadolibre:MLM', assigned: 1, unchanged: 0 });
    expect((await read(p)).metafields).toEqual([
      ...CUSTOM,
      assignmentField('mercadolibre:MLM', meli2, { id: 'MLM2', name: 'Other' }),
      assignmentField('amazon:MX', amazon, { id: 'AMZ1' }),
    ]);
  });
});

describe('some SKUs not assigned: 207', () => {
  test('unknown, variant, material and another tenant’s SKUs fail in request order; the rest is written', async () => {
    const ch = await channel('mercadolibre');
    const good = await product();
    const variantSku = `${P}-VAR${++n}`;
    const parent = await product({
      variants: [{ sku: variantSku, title: { value: 'Large' }, price: 12, position: 0 }],
    });
    const materialSku = `${P}-MAT${++n}`;
    must(
      await api.post('/products/materials', {
        sku: materialSku,
        title: 'Flour',
        baseUnit: { code: 'kg', name: 'Kilogram' },
      }),
      201,
      'material',
    );
    const theirs = await product({ metafields: CUSTOM }, other.api);
    const theirsBefore = await read(theirs, other.api);
    const unknown = `${P}-NOPE${++n}`;

    const res = await assign(request([unknown, good.sku, variantSku, theirs.sku, materialSku], ch));
    expect(res.status).toBe(207);
    expect(res.body).toMatchObject({
      success: false,
      channelId: ch,
      metafieldKey: 'mercadolibre:MLM',
      operationId: expect.stringMatching(/^bop_/),
      assigned: 1,
      unchanged: 0,
      failed: 4,
    });
    expect(res.body.results).toEqual([
      { sku: unknown, success: false, error: expect.stringMatching(/^Product not found/) },
      { sku: good.sku, success: true },
      { sku: variantSku, success: false, error: expect.stringMatching(/^Product not found/) },
      { sku: theirs.sku, success: false, error: expect.stringMatching(/^Product not found/) },
      { sku: materialSku, success: false, error: expect.stringMatching(/^Product not found/) },
    ]);
    // another tenant's product answers exactly like an unknown one: its existence is not revealed
    expect(res.body.results[3].error).toBe(res.body.results[0].error);
    expect(categoryFields(await read(good))).toHaveLength(1);
    expect(categoryFields(await read(parent))).toEqual([]);
    expect(await read(theirs, other.api)).toEqual(theirsBefore);
  });

  test('SKUs are case-insensitive and a repeated SKU counts once', async () => {
    const ch = await channel('t1');
    const a = await product();
    const b = await product();
    const res = await assign(request([a.sku.toLowerCase(), b.sku, a.sku, b.sku.toLowerCase()], ch));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ assigned: 2, unchanged: 0, failed: 0 });
    expect(res.body.results).toEqual([
      { sku: a.sku, success: true },
      { sku: b.sku, success: true },
    ]);
    expect(categoryFields(await read(a))).toHaveLength(1);
  });

  test('every SKU failing is still 207, with no operation recorded', async () => {
    const ch = await channel('walmart');
    const opsBefore = await operationIds();
    const skus = [`${P}-GONE${++n}`, `${P}-GONE${++n}`];
    const res = await assign(request(skus, ch));
    expect(res.status).toBe(207);
    expect(res.body).toMatchObject({ success: false, operationId: null, assigned: 0, unchanged: 0, failed: 2 });
    expect(res.body.results).toEqual(skus.map((sku) => ({ sku, success: false, error: 'Product not found' })));
    expect(await operationIds()).toEqual(opsBefore);
  });
});

describe('idempotent repeats', () => {
  test('the same request again changes nothing: 200, unchanged, no operation, versions kept; another category writes', async () => {
    const ch = await channel('mercadolibre');
    const items = [await product(), await product({ metafields: CUSTOM })];
    const body = request(
      items.map((p) => p.sku),
      ch,
      { id: 'MLM77', name: 'Drills', path: 'Tools > Drills' },
    );
    const first = must(await assign(body), 200, 'first');
    expect(first).toMatchObject({ assigned: 2, unchanged: 0 });
    const stamps = await Promise.all(items.map((p) => stamp(p)));
    const reads = await Promise.all(items.map((p) => read(p)));

    // the very same request, then the same category with its path spelled as a list
    for (const repeat of [body, { ...body, category: { ...body.category, path: ['Tools', 'Drills'] } }]) {
      const again = await assign(repeat);
      expect({ status: again.status, body: again.body }).toEqual({
        status: 200,
        body: { ...first, operationId: null, assigned: 0, unchanged: 2 },
      });
      expect(await Promise.all(items.map((p) => stamp(p)))).toEqual(stamps);
      expect(await Promise.all(items.map((p) => read(p)))).toEqual(reads); // assignedAt too
    }

    const changed = must(await assign({ ...body, category: { id: 'MLM78', name: 'Saws' } }), 200, 'changed');
    expect(changed).toMatchObject({ operationId: expect.stringMatching(/^bop_/), assigned: 2, unchanged: 0 });
    expect(changed.operationId).not.toBe(first.operationId);
    const after = await Promise.all(items.map((p) => stamp(p)));
    after.forEach((s, i) => expect(s.version).toBe(stamps[i].version + 1));
    expect(categoryFields(await read(items[0]))).toEqual([
      assignmentField('mercadolibre:MLM', ch, { id: 'MLM78', name: 'Saws' }),
    ]);
  });

  test('a mix of products that have the category and products that do not: assigned and unchanged both counted', async () => {
    const ch = await channel('amazon');
    const has = await product();
    const lacks = await product();
    must(await assign(request([has.sku], ch)), 200, 'first');
    const res = must(await assign(request([lacks.sku, has.sku], ch)), 200, 'second');
    expect(res).toMatchObject({ assigned: 1, unchanged: 1, failed: 0, operationId: expect.stringMatching(/^bop_/) });
    const op = must(await api.get(`${OPS}/${res.operationId}`), 200, 'operation');
    expect(op.products.map((x: Json) => x.sku)).toEqual([lacks.sku]);
  });
});

describe('refusals: 400 with nothing written', () => {
  interface Ctx {
    sku: string;
    ch: string;
    theirCh: string;
  }
  let ctx: Ctx;
  let target: Product;
  let before: { read: Json; stamp: { version: number; updatedAt: string } };
  const x = (len: number, c = 'x') => c.repeat(len);
  const levels = (k: number) => Array.from({ length: k }, (_, i) => `L${i + 1}`);

  beforeAll(async () => {
    target = await product({ metafields: CUSTOM });
    ctx = { sku: target.sku, ch: await channel('mercadolibre'), theirCh: await channel('amazon', {}, other.api) };
    before = { read: await read(target), stamp: await stamp(target) };
  });

  /** Every case names the target product, so a request that slipped through would have changed it. */
  const ok = (c: Ctx, patch: Json = {}): Json => ({
    skus: [c.sku],
    channelId: c.ch,
    category: { id: 'MLM1' },
    ...patch,
  });
  const cat = (c: Ctx, category: unknown) => ok(c, { category });
  const without = (c: Ctx, member: string) => {
    const b = ok(c);
    delete b[member];
    return b;
  };

  test.each<[string, string, (c: Ctx) => unknown]>([
    ['skus missing', 'invalid-skus', (c) => without(c, 'skus')],
    ['skus not a list', 'invalid-skus', (c) => ok(c, { skus: c.sku })],
    ['skus an empty list', 'invalid-skus', (c) => ok(c, { skus: [] })],
    ['the body a JSON array', 'invalid-skus', (c) => [ok(c)]],
    [
      '101 SKUs',
      'too-many-skus',
      (c) => ok(c, { skus: [c.sku, ...Array.from({ length: 100 }, (_, i) => `${P}-T${i}`)] }),
    ],
    ['a SKU that is a number', 'invalid-sku-values', (c) => ok(c, { skus: [c.sku, 42] })],
    ['an empty SKU', 'invalid-sku-values', (c) => ok(c, { skus: [c.sku, ''] })],
    ['a blank SKU', 'invalid-sku-values', (c) => ok(c, { skus: [c.sku, '  '] })],
    ['a 101-character SKU', 'invalid-sku-values', (c) => ok(c, { skus: [c.sku, x(101, 'S')] })],
    ['channelId missing', 'invalid-channel-id', (c) => without(c, 'channelId')],
    ['channelId not 24 hex digits', 'invalid-channel-id', (c) => ok(c, { channelId: 'channel-1' })],
    ['channelId a number', 'invalid-channel-id', (c) => ok(c, { channelId: 12 })],
    ['an unknown channelId', 'invalid-channel-id', (c) => ok(c, { channelId: new ObjectId().toHexString() })],
    ['another tenant’s channel', 'invalid-channel-id', (c) => ok(c, { channelId: c.theirCh })],
    ['category missing', 'invalid-category', (c) => without(c, 'category')],
    ['category not an object', 'invalid-category', (c) => cat(c, 'MLM1')],
    ['category null', 'invalid-category', (c) => cat(c, null)],
    ['category without an id', 'invalid-category', (c) => cat(c, { name: 'Phones' })],
    ['category.id empty', 'invalid-category', (c) => cat(c, { id: '' })],
    ['category.id blank', 'invalid-category', (c) => cat(c, { id: '   ' })],
    ['category.id a number', 'invalid-category', (c) => cat(c, { id: 1055 })],
    ['an unknown member in category', 'invalid-category', (c) => cat(c, { id: 'MLM1', domain: 'X' })],
    ['category.name a number', 'invalid-category', (c) => cat(c, { id: 'MLM1', name: 7 })],
    ['category.path a number', 'invalid-category-path', (c) => cat(c, { id: 'MLM1', path: 3 })],
    [
      'category.path a list with an empty name',
      'invalid-category-path',
      (c) => cat(c, { id: 'MLM1', path: ['A', ''] }),
    ],
    [
      'category.path a list with a blank name',
      'invalid-category-path',
      (c) => cat(c, { id: 'MLM1', path: ['A', ' '] }),
    ],
    ['category.path an empty list', 'invalid-category-path', (c) => cat(c, { id: 'MLM1', path: [] })],
    ['category.path text "A >> B"', 'invalid-category-path', (c) => cat(c, { id: 'MLM1', path: 'A >> B' })],
    ['category.path text "A > "', 'invalid-category-path', (c) => cat(c, { id: 'MLM1', path: 'A > ' })],
    [
      'category.path a list with a level of 201 characters',
      'invalid-category-path',
      (c) => cat(c, { id: 'MLM1', path: ['Home', x(201, 'n')] }),
    ],
    [
      'category.path text with a level of 201 characters',
      'invalid-category-path',
      (c) => cat(c, { id: 'MLM1', path: `Home > ${x(201, 'n')}` }),
    ],
    [
      'category.path text with a first level of 201 characters',
      'invalid-category-path',
      (c) => cat(c, { id: 'MLM1', path: `${x(201, 'n')} > Kitchen` }),
    ],
    ['category.id of 101 characters', 'category-id-too-long', (c) => cat(c, { id: x(101) })],
    ['category.name of 201 characters', 'category-name-too-long', (c) => cat(c, { id: 'MLM1', name: x(201) })],
    ['category.path of 13 levels as a list', 'category-path-too-deep', (c) => cat(c, { id: 'MLM1', path: levels(13) })],
    [
      'category.path of 13 levels as text',
      'category-path-too-deep',
      (c) => cat(c, { id: 'MLM1', path: levels(13).join(' > ') }),
    ],
    ['an unknown top-level member', 'validation-error', (c) => ok(c, { priority: 'high' })],
  ])('%s → %s', async (_, code, body) => {
    const res = await assign(body(ctx));
    expectError(res, 400, code);
    expect(await read(target)).toEqual(before.read);
    expect(await stamp(target)).toEqual(before.stamp);
  });

  test('a JSON scalar body → 400 from the body parser (before the route’s rules), nothing written', async () => {
    // the area's parser takes objects and arrays only (see pipeline.test.ts), so a scalar never meets
    // the route's "(body)" rule; only the status is the contract here
    for (const raw of ['"skus"', '42', 'null']) {
      const res = await api.post(ASSIGN, undefined, { raw, headers: { 'content-type': 'application/json' } });
      expect([raw, res.status]).toEqual([raw, 400]);
    }
    expect(await read(target)).toEqual(before.read);
  });

  test('no request refused above recorded an operation', async () => {
    const ops = must(await api.get(OPS, { query: { type: 'marketplace-category', limit: 200 } }), 200, 'ops');
    const touching = ops.operations.filter((o: Json) => o.source?.channelId === ctx.ch);
    expect(touching).toEqual([]);
  });
});

describe('the limits themselves are accepted', () => {
  test('exactly 100 SKUs: answered per SKU', async () => {
    const ch = await channel('mercadolibre');
    const p = await product();
    const unknown = Array.from({ length: 99 }, (_, i) => `${P}-HUNDRED${i}`);
    const res = await assign(request([p.sku, ...unknown], ch));
    expect(res.status).toBe(207);
    expect(res.body).toMatchObject({ assigned: 1, failed: 99 });
    expect(res.body.results).toHaveLength(100);
    expect(res.body.results[0]).toEqual({ sku: p.sku, success: true });
  });

  test.each<[string, { id: string; name?: string; path?: string[] }]>([
    ['an id of 100 characters', { id: 'i'.repeat(100) }],
    ['a name of 200 characters', { id: 'MLM1', name: 'n'.repeat(200) }],
    ['a path of 12 levels as a list', { id: 'MLM1', path: Array.from({ length: 12 }, (_, i) => `L${i}`) }],
  ])('%s → 200, stored as sent', async (_, category) => {
    const ch = await channel('mercadolibre');
    const p = await product();
    must(await assign(request([p.sku], ch, category)), 200, 'assign');
    expect((await read(p)).metafields).toEqual([assignmentField('mercadolibre:MLM', ch, category)]);
  });

  test('a path as text with a level of 200 characters (spaces around the `>` aside) → 200, stored trimmed', async () => {
    const ch = await channel('mercadolibre');
    const p = await product();
    const long = 'n'.repeat(200);
    must(await assign(request([p.sku], ch, { id: 'MLM1', path: `Home  >  ${long}  ` })), 200, 'assign');
    expect(categoryFields(await read(p))[0].value.path).toEqual(['Home', long]);
  });

  test('a path of 12 levels as text → 200, stored as 12 names', async () => {
    const ch = await channel('mercadolibre');
    const p = await product();
    const names = Array.from({ length: 12 }, (_, i) => `Level ${i}`);
    must(await assign(request([p.sku], ch, { id: 'MLM1', path: names.join(' > ') })), 200, 'assign');
    expect(categoryFields(await read(p))[0].value.path).toEqual(names);
  });
});

describe('the bulk operation and its rollback', () => {
  test('listed and shown as marketplace-category; rollback restores every product’s metafields exactly', async () => {
    const ch = await channel('mercadolibre');
    // one with an earlier assignment under the same key, one with other metafields only, one with none
    const earlier = await product({ metafields: CUSTOM });
    const customOnly = await product({ metafields: CUSTOM });
    const bare = await product();
    const first = must(await assign(request([earlier.sku], ch, { id: 'MLM1', name: 'First' })), 200, 'first');
    const items = [earlier, customOnly, bare];
    const before = await Promise.all(items.map((p) => read(p)));
    expect(before[2].metafields).toEqual([]);

    const res = must(
      await assign({
        ...request(
          items.map((p) => p.sku),
          ch,
          { id: 'MLM2', name: 'Second', path: 'A > B' },
        ),
        operationName: 'recategorize',
      }),
      200,
      'second',
    );
    expect(await operationIds()).toEqual(expect.arrayContaining([first.operationId, res.operationId]));
    const op = must(await api.get(`${OPS}/${res.operationId}`), 200, 'operation');
    expect(op).toMatchObject({
      id: res.operationId,
      type: 'marketplace-category',
      status: 'completed',
      operationName: 'recategorize',
      canRollback: true,
      source: {
        channelId: ch,
        metafieldKey: 'mercadolibre:MLM',
        category: { id: 'MLM2', name: 'Second', path: ['A', 'B'] },
      },
      counts: { totalProcessed: 3, created: 0, updated: 3, skipped: 0, failed: 0 },
    });
    expect(op.products.map((x: Json) => x.sku).sort()).toEqual(items.map((p) => p.sku).sort());
    expect(op.products.every((x: Json) => x.action === 'updated')).toBe(true);
    expect(op.products.map((x: Json) => x.productId).sort()).toEqual(items.map((p) => p.id).sort());

    expect(await rolledBack(res.operationId)).toMatchObject({ status: 'completed', success: true, restored: 3 });
    const after = await Promise.all(items.map((p) => read(p)));
    after.forEach((p, i) => expect(p.metafields).toEqual(before[i].metafields));
    expect(categoryFields(after[0])).toEqual([assignmentField('mercadolibre:MLM', ch, { id: 'MLM1', name: 'First' })]);
    expect(after[1].metafields).toEqual(CUSTOM);
    expect(after[2].metafields).toEqual([]);
    expect(must(await api.get(`${OPS}/${res.operationId}`), 200, 'operation').status).toBe('rolled_back');
  });

  test('a later change of one product blocks the rollback', async () => {
    const ch = await channel('walmart');
    const edited = await product();
    const untouched = await product();
    const res = must(await assign(request([edited.sku, untouched.sku], ch)), 200, 'assign');
    must(
      await api.put(`/products/${edited.id}`, { sku: edited.sku, title: { value: 'Edited by hand' }, price: 11 }),
      200,
      'PUT',
    );
    const op = must(await api.get(`${OPS}/${res.operationId}`), 200, 'operation');
    expect(op).toMatchObject({ canRollback: false, rollbackBlockedBy: expect.stringContaining(edited.sku) });
    const refused = await api.post(`${OPS}/${res.operationId}/rollback`);
    expectError(refused, 400, 'rollback-failed');
    expect(refused.body.details.blockedSkus).toEqual([edited.sku]);
    expect(categoryFields(await read(untouched))).toHaveLength(1);
  });
});

describe('scopes', () => {
  /** Another key of the same tenant, so a refused request meets real products it could have changed. */
  async function keyWith(scopes: Scope[]): Promise<ApiClient> {
    const issued = await deps.tenancy.issueKey(tenantId, scopes);
    return new ApiClient(issued.key);
  }

  test('a key without products:update → 403, nothing written; no key → 401', async () => {
    const ch = await channel('mercadolibre');
    const p = await product();
    const body = request([p.sku], ch);
    const reader = await keyWith(['products:read', 'products:create']);
    expectError(await assign(body, reader), 403, 'auth:permission_denied');
    expectError(await assign(body, api.as(null)), 401, 'auth:invalid_token');
    expect((await read(p)).metafields).toEqual([]);
    // the same body with the right scope goes through: the refusals were the scopes'
    expect((await assign(body, await keyWith(['products:update']))).status).toBe(200);
  });
});

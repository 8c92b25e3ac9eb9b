import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';

/** CRUD and catalog reads through HTTP on the real API process, over a small catalog of one tenant. */
let deps: TestDeps;
let api: ApiClient;
let other: string;
const P = `E${Date.now().toString(36).toUpperCase()}`; // a prefix of this run's SKUs

async function create(body: Record<string, unknown>) {
  const res = await api.post('/products', body);
  if (res.status !== 201) throw new Error(`create ${JSON.stringify(body)} → ${res.status} ${res.text}`);
  return res.body;
}

let shirt: any;
let mug: any;
let lamp: any;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey()).key);
  ({ key: other } = await deps.tenantWithKey());
  shirt = await create({
    sku: `${P}-SHIRT`,
    title: { value: 'Red cotton shirt' },
    price: 25,
    status: 'active',
    brand: 'Acme',
    productKind: 'apparel',
    tags: ['summer', 'cotton'],
    category: { id: 'cat-shirts', name: 'Shirts', path: 'Apparel/Shirts' },
    options: [{ id: 'size', name: 'Size', values: ['S', 'M'] }],
    variants: ['S', 'M'].map((s, i) => ({
      sku: `${P}-SHIRT-${s}`,
      title: { value: `Shirt ${s}` },
      price: 25,
      position: i,
      options: [{ id: 'size', name: 'Size', value: s }],
    })),
    bindings: [{ channelId: 'chan-1', handle: 'red-shirt', type: 'shopify' }],
    seo: { slug: 'red-shirt' },
    shipping: { weight: 0.3, weightUnit: 'kg' },
    description: { value: 'Soft.' },
    metafields: [{ namespace: 'mkt_attr', key: 'fabric', value: 'cotton' }],
  });
  mug = await create({
    sku: `${P}-MUG`,
    title: { value: 'Blue mug' },
    price: 8,
    status: 'active',
    brand: 'Globex',
    productKind: 'kitchen',
    tags: ['kitchen'],
  });
  lamp = await create({
    sku: `${P}-LAMP`,
    title: { value: 'Desk lamp' },
    price: 40,
    status: 'draft',
    brand: 'Acme',
    tags: ['office'],
  });
});
afterAll(() => deps.close());

const skus = (items: { sku: string }[]) => items.map((p) => p.sku).sort();

describe('read, update, delete', () => {
  test('GET /products/{id} returns the full product, exactly as created', async () => {
    const res = await api.get(`/products/${shirt.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(shirt);
    expectError(await api.get('/products/000000000000000000000000'), 404, 'not-found');
    expectError(await api.get('/products/not-an-id'), 404, 'not-found');
  });

  test("another tenant's product is 404 for every verb", async () => {
    expectError(await api.as(other).get(`/products/${shirt.id}`), 404, 'not-found');
    expectError(
      await api.as(other).put(`/products/${shirt.id}`, { sku: 'X1', title: { value: 'x' }, price: 1 }),
      404,
      'not-found',
    );
    expectError(await api.as(other).delete(`/products/${shirt.id}`), 404, 'not-found');
    expect(await api.as(other).get(`/products/sku/${shirt.sku}/exists`)).toMatchObject({
      status: 200,
      body: { exists: false, kind: null },
    });
    expect((await api.as(other).get(`/products?q=${P}`)).body).toEqual([]);
  });

  test('PUT replaces the product: fields not sent are gone, variant ids kept when sent, released SKUs are free again', async () => {
    const p = await create({
      sku: `${P}-PUT`,
      title: { value: 'Before' },
      price: 5,
      brand: 'Old',
      variants: [{ sku: `${P}-PUT-A`, title: { value: 'A' }, price: 5, position: 0 }],
    });
    const keepId = p.variants[0].id;
    const res = await api.put(`/products/${p.id}`, {
      sku: `${P}-PUT2`,
      title: { value: 'After' },
      price: 6,
      variants: [{ id: keepId, sku: `${P}-PUT-A`, title: { value: 'A' }, price: 6, position: 0 }],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: p.id, sku: `${P}-PUT2`, title: { value: 'After' }, createdAt: p.createdAt });
    expect(res.body.brand).toBeUndefined();
    expect(res.body.variants[0]).toMatchObject({ id: keepId, parentSku: `${P}-PUT2` });
    expect((await api.get(`/products/${p.id}`)).body).toEqual(res.body);
    // the old product SKU is free; the new one is taken
    expect((await api.get(`/products/sku/${P}-PUT/exists`)).body).toMatchObject({ exists: false });
    expect((await api.get(`/products/sku/${P}-PUT2/exists`)).body).toMatchObject({
      exists: true,
      kind: 'product',
      productId: p.id,
    });
    await create({ sku: `${P}-PUT`, title: { value: 'reuses the freed SKU' }, price: 1 });
    // an invalid PUT changes nothing
    expectError(
      await api.put(`/products/${p.id}`, { sku: `${P}-PUT2`, title: { value: 'x' }, price: -1 }),
      400,
      'validation-error',
    );
    expectError(
      await api.put(`/products/${p.id}`, { sku: mug.sku, title: { value: 'x' }, price: 1 }),
      409,
      'duplicate-sku',
    );
    expect((await api.get(`/products/${p.id}`)).body).toEqual(res.body);
    expectError(
      await api.put('/products/000000000000000000000000', { sku: 'NEW-ONE', title: { value: 'x' }, price: 1 }),
      404,
      'not-found',
    );
  });

  test('PUT can turn a product into a bundle (bundleConfig is written through the full update)', async () => {
    const p = await create({ sku: `${P}-BUN`, title: { value: 'Set' }, price: 30 });
    const res = await api.put(`/products/${p.id}`, {
      sku: p.sku,
      title: { value: 'Set' },
      price: 30,
      productType: 'bundle',
      bundleConfig: { components: [{ productSku: mug.sku, quantity: 2 }] },
    });
    expect(res.status).toBe(200);
    expect(res.body.bundleConfig.components).toEqual([
      { productSku: mug.sku, quantity: 2, variantMode: 'fixed', required: true },
    ]);
  });

  test('DELETE removes the product and frees its SKUs', async () => {
    const p = await create({
      sku: `${P}-DEL`,
      title: { value: 'Gone' },
      price: 1,
      variants: [{ sku: `${P}-DEL-V`, title: { value: 'v' }, price: 1, position: 0 }],
    });
    expect(await api.delete(`/products/${p.id}`)).toMatchObject({
      status: 200,
      body: { success: true, id: p.id, sku: p.sku },
    });
    expectError(await api.get(`/products/${p.id}`), 404, 'not-found');
    expectError(await api.delete(`/products/${p.id}`), 404, 'not-found');
    await create({ sku: `${P}-DEL-V`, title: { value: 'the variant SKU is free' }, price: 1 });
  });

  test('scopes: create, update and delete need their own scope', async () => {
    const readOnly = (
      await deps.tenancy.issueKey(((await deps.tenancy.authenticate(api.key!)) as { tenantId: string }).tenantId, [
        'products:read',
      ])
    ).key;
    expectError(
      await api.as(readOnly).post('/products', { sku: `${P}-NOPE`, title: { value: 'x' }, price: 1 }),
      403,
      'auth:permission_denied',
    );
    expectError(
      await api.as(readOnly).put(`/products/${mug.id}`, { sku: mug.sku, title: { value: 'x' }, price: 1 }),
      403,
      'auth:permission_denied',
    );
    expectError(await api.as(readOnly).delete(`/products/${mug.id}`), 403, 'auth:permission_denied');
    expect((await api.as(readOnly).get(`/products/${mug.id}`)).status).toBe(200);
  });
});

describe('GET /products', () => {
  const list = async (query: string) => {
    const res = await api.get(`/products?${query}`);
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    return res.body as any[];
  };

  test('without extend, items carry the compact fields', async () => {
    const [item] = await list(`q=${shirt.sku}`);
    expect(Object.keys(item).sort()).toEqual(
      [
        'id',
        'sku',
        'status',
        'productType',
        'title',
        'price',
        'currency',
        'brand',
        'productKind',
        'category',
        'tags',
        'image',
        'hasVariants',
        'variantCount',
        'createdAt',
        'updatedAt',
      ].sort(),
    );
    expect(item).toMatchObject({ id: shirt.id, hasVariants: true, variantCount: 2, image: null });
  });

  test('extend adds its groups; all is the full product', async () => {
    const [v] = await list(`q=${shirt.sku}&extend=variants,options`);
    expect(v.variants).toEqual(shirt.variants);
    expect(v.options).toEqual(shirt.options);
    expect(v.bindings).toBeUndefined();
    const [b] = await list(`q=${shirt.sku}&extend=bindings,seo,dimensions,description,metadata`);
    expect(b).toMatchObject({
      bindings: shirt.bindings,
      seo: shirt.seo,
      shipping: shirt.shipping,
      description: shirt.description,
      metafields: shirt.metafields,
    });
    const [all] = await list(`q=${shirt.sku}&extend=all`);
    // all: the full product, plus its stock from the ledger (none yet)
    expect(all).toEqual({
      ...shirt,
      inventory: { total: 0, byLocation: [] },
      variants: shirt.variants.map((v: object) => ({ ...v, stock: 0 })),
    });
    expectError(await api.get('/products?extend=everything'), 400, 'validation-error');
  });

  test.each([
    ['q (token search, SKU or title)', `q=${P}`, () => [shirt, mug, lamp]],
    ['q with two words', `q=${encodeURIComponent(`red ${P}`)}`, () => [shirt]],
    ['q matching a variant SKU', `q=${P}-SHIRT-M`, () => [shirt]],
    ['status', `q=${P}-&status=active`, () => [shirt, mug]],
    ['status list', `q=${P}-&status=draft,active`, () => [shirt, mug, lamp]],
    ['brands', `q=${P}-&brands=Acme`, () => [shirt, lamp]],
    ['brands list', `q=${P}-&brands=Acme,Globex`, () => [shirt, mug, lamp]],
    ['category by id', `q=${P}-&category=cat-shirts`, () => [shirt]],
    ['category by name', `q=${P}-&category=Shirts`, () => [shirt]],
    ['minPrice', `q=${P}-&minPrice=25`, () => [shirt, lamp]],
    ['maxPrice', `q=${P}-&maxPrice=25`, () => [shirt, mug]],
    ['tags (any)', `q=${P}-&tags=kitchen,office`, () => [mug, lamp]],
    ['channelId', `q=${P}-&channelId=chan-1`, () => [shirt]],
    ['combined', `q=${P}-&status=active&brands=Acme&maxPrice=30`, () => [shirt]],
  ])('filter: %s', async (_name, query, expected) => {
    const items = await list(`${query}&limit=200`);
    expect(skus(items).filter((s) => s.startsWith(P) && [shirt.sku, mug.sku, lamp.sku].includes(s))).toEqual(
      skus(expected()),
    );
  });

  test('paging and sort', async () => {
    const byPrice = await list(`q=${P}-&brands=Acme,Globex&sort=price`);
    expect(byPrice.map((p) => p.sku)).toEqual([mug.sku, shirt.sku, lamp.sku]);
    const desc = await list(`q=${P}-&brands=Acme,Globex&sort=-price`);
    expect(desc.map((p) => p.sku)).toEqual([lamp.sku, shirt.sku, mug.sku]);
    const page1 = await list(`q=${P}-&brands=Acme,Globex&sort=price&limit=2&page=1`);
    const page2 = await list(`q=${P}-&brands=Acme,Globex&sort=price&limit=2&page=2`);
    expect([...page1, ...page2].map((p) => p.sku)).toEqual([mug.sku, shirt.sku, lamp.sku]);
    for (const bad of ['limit=0', 'limit=201', 'page=0', 'sort=color', 'minPrice=-1', 'status=inactive', 'nope=1']) {
      expectError(await api.get(`/products?${bad}`), 400, 'validation-error');
    }
  });
});

describe('catalog reads', () => {
  test('count: with the list filters; with a term, also the search strategy', async () => {
    expect((await api.get(`/products/count?brands=Acme&q=${P}-`)).body).toEqual({ count: 2, searchStrategy: 'regex' });
    expect((await api.get(`/products/count?q=${encodeURIComponent(`${P} lamp`)}`)).body).toEqual({
      count: 1,
      searchStrategy: 'tokens',
    });
    const all = await api.get('/products/count?status=draft,active,disabled');
    expect(all.body).toEqual({ count: expect.any(Number) });
    expect(all.body.count).toBeGreaterThanOrEqual(3);
  });

  test('POST /products/query: filters or query, never both', async () => {
    const byFilters = await api.post('/products/query', {
      filters: { brands: ['Globex'], status: ['active'] },
      limit: 200,
    });
    expect(byFilters.status).toBe(200);
    expect(byFilters.body.products.map((p: { sku: string }) => p.sku)).toContain(mug.sku);
    expect(byFilters.body).toMatchObject({ page: 1, limit: 200, total: expect.any(Number) });
    const byQuery = await api.post('/products/query', { query: lamp.sku, extend: ['seo'] });
    expect(byQuery.body).toMatchObject({ total: 1, products: [{ sku: lamp.sku }] });
    expectError(await api.post('/products/query', { filters: {}, query: 'x' }), 400, 'bad-request/ambiguous-param');
    expectError(await api.post('/products/query', { filters: { colour: 'red' } }), 400, 'validation-error');
  });

  test('SKU exists, by product or by variant, any case', async () => {
    expect((await api.get(`/products/sku/${shirt.sku.toLowerCase()}/exists`)).body).toEqual({
      sku: shirt.sku,
      exists: true,
      kind: 'product',
      productId: shirt.id,
    });
    expect((await api.get(`/products/sku/${P}-SHIRT-S/exists`)).body).toMatchObject({
      exists: true,
      kind: 'variant',
      productId: shirt.id,
    });
    expect((await api.get(`/products/sku/${P}-NONE/exists`)).body).toEqual({
      sku: `${P}-NONE`,
      exists: false,
      kind: null,
      productId: null,
    });
  });

  test('parent of a variant SKU', async () => {
    expect((await api.get(`/products/by-variant/${P}-shirt-m`)).body).toEqual(shirt);
    expectError(await api.get(`/products/by-variant/${shirt.sku}`), 404, 'not-found');
  });

  test('brands and kinds with counts', async () => {
    const t = await deps.tenantWithKey();
    for (const [sku, brand, productKind] of [
      ['B1', 'Zeta', 'toys'],
      ['B2', 'Zeta', 'toys'],
      ['B3', 'Alpha', 'books'],
      ['B4', undefined, undefined],
    ]) {
      expect(
        (await api.as(t.key).post('/products', { sku, title: { value: sku }, price: 1, brand, productKind })).status,
      ).toBe(201);
    }
    expect((await api.as(t.key).get('/products/brands')).body).toEqual({
      brands: [
        { brand: 'Alpha', count: 1 },
        { brand: 'Zeta', count: 2 },
      ],
    });
    expect((await api.as(t.key).get('/products/kinds')).body).toEqual({
      kinds: [
        { kind: 'books', count: 1 },
        { kind: 'toys', count: 2 },
      ],
    });
  });

  test('text search', async () => {
    const res = await api.get(`/products/search?q=${encodeURIComponent(`blue ${P}`)}`);
    expect(res.body).toMatchObject({ total: 1, searchStrategy: 'tokens', products: [{ sku: mug.sku }] });
    expectError(await api.get('/products/search'), 400, 'validation-error');
  });

  test('static paths are not read as ids', async () => {
    for (const path of ['/products/count', '/products/brands', '/products/kinds'])
      expect((await api.get(path)).status).toBe(200);
  });
});

describe('hostile input is a 4xx, never a 500', () => {
  test('a NUL byte in the search term is 400 validation-error naming q', async () => {
    for (const path of ['/products/search', '/products', '/products/count']) {
      const res = await api.get(path, { query: { q: 'mug\u0000' } });
      expectError(res, 400, 'validation-error');
      expect(res.body.field).toBe('q');
    }
  });

  test('POST /products/query with 20,000 brands is 400 validation-error naming brands', async () => {
    const brands = Array.from({ length: 20_000 }, (_, i) => `Brand ${i}`);
    const res = await api.post('/products/query', { filters: { brands } });
    expectError(res, 400, 'validation-error');
    expect(res.body.fieldErrors.map((f: { field: string }) => f.field)).toContain('filters.brands');
    // the query-string form is bounded too
    const inQuery = await api.get('/products', {
      query: {
        brands: brands
          .slice(0, 101)
          .map((_, i) => i)
          .join(','),
      },
    });
    expectError(inQuery, 400, 'validation-error');
    expect(inQuery.body.field).toBe('brands');
  });

  test.each(['/products', '/products/search'])(
    'page or limit 1e309 on GET %s is 400 validation-error',
    async (path) => {
      for (const bad of [{ page: '1e309' }, { limit: '1e309' }]) {
        const res = await api.get(path, { query: { q: P, ...bad } });
        expectError(res, 400, 'validation-error');
        expect(res.body.field).toBe(Object.keys(bad)[0]);
      }
    },
  );

  test('page or limit 1e309 in the body of POST /products/query is 400 validation-error', async () => {
    for (const bad of ['page', 'limit']) {
      const res = await api.post('/products/query', undefined, {
        raw: `{"query":"${P}","${bad}":1e309}`,
        headers: { 'content-type': 'application/json' },
      });
      expectError(res, 400, 'validation-error');
      expect(res.body.field).toBe(bad);
    }
  });
});

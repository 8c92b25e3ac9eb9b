import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A brand or a tag is free text and may hold a comma. In the query-string form of the filters a
 * backslash takes the next character as it is (`brands=Smith\, Sons`), so every brand that
 * GET /products/brands lists can be filtered on; a bare comma still separates values.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `BRC${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'products brand with a comma');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

async function create(body: Record<string, unknown>) {
  const res = await api.post('/products', { title: { value: 'x' }, price: 1, ...body });
  if (res.status !== 201) throw new Error(`create → ${res.status} ${res.text}`);
  return res.body;
}

const escape = (value: string) => value.replace(/[\\,]/g, (c) => `\\${c}`);

test('a brand holding a comma, escaped, filters GET /products and /products/count to its products', async () => {
  const brand = `${P} Smith, Sons`;
  const other = `${P} Smith`;
  const p = await create({ sku: `${P}-BRAND`, brand });
  await create({ sku: `${P}-OTHER`, brand: other });
  const listed = (await api.get('/products/brands')).body.brands.map((b: { brand: string }) => b.brand);
  expect(listed).toContain(brand);

  const list = await api.get('/products', { query: { brands: escape(brand) } });
  const count = await api.get('/products/count', { query: { brands: escape(brand) } });
  expect([list.status, list.body.map?.((x: { id: string }) => x.id)]).toEqual([200, [p.id]]);
  expect(count.body).toEqual({ count: 1 });

  // a bare comma still separates two brands
  const both = await api.get('/products/count', { query: { brands: `${escape(brand)},${other}` } });
  expect(both.body).toEqual({ count: 2 });
});

test('a tag holding a backslash and a comma is filtered on with both escaped', async () => {
  const tag = `${P}-a\\b,c`;
  const p = await create({ sku: `${P}-TAG`, tags: [tag] });
  const res = await api.get('/products', { query: { tags: escape(tag) } });
  expect([res.status, res.body.map?.((x: { id: string }) => x.id)]).toEqual([200, [p.id]]);
});

test('a list ending in a lone backslash is a 400, not a guess', async () => {
  const res = await api.get('/products', { query: { brands: 'Acme\\' } });
  expect(res.status).toBe(400);
});

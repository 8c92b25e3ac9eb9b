import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A query string's filters compare values as the product stores them: a channel id in any case
 * names the channel (bindings store it lower-case), and a blank escaped with a backslash is kept
 * (`brands=Acme\ `), while the blanks around a value are not.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `CF${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'cat filters');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

async function create(body: Record<string, unknown>) {
  const res = await api.post('/products', { title: { value: 'x' }, price: 1, ...body });
  if (res.status !== 201) throw new Error(`create → ${res.status} ${res.text}`);
  return res.body;
}

test('channelId filter takes the channel id in any case, as the binding write does', async () => {
  // a binding's channel id is hex in any case (shared/products/normalize.ts stores it lower-case)
  const channelId = 'ABCDEF0123456789ABCDEF01';
  const p = await create({
    sku: `${P}-BOUND`,
    bindings: [{ channelId, type: 'shopify', handle: 'x1' }],
  });
  expect(p.bindings?.[0]?.channelId).toBe(channelId.toLowerCase());
  const lower = await api.get('/products', { query: { channelId: channelId.toLowerCase() } });
  const upper = await api.get('/products', { query: { channelId } });
  const count = await api.get('/products/count', { query: { channelId } });
  const body = await api.post('/products/query', { filters: { channelId } });
  expect(lower.body.map((x: { id: string }) => x.id)).toEqual([p.id]);
  expect([
    upper.body.map((x: { id: string }) => x.id),
    count.body.count,
    body.body.products?.map((x: { id: string }) => x.id),
  ]).toEqual([[p.id], 1, [p.id]]);
});

test('a brand with a trailing space, its space escaped, filters to its product', async () => {
  const brand = `${P} Acme `;
  const p = await create({ sku: `${P}-SPACE`, brand });
  const listed = (await api.get('/products/brands')).body.brands.map((b: { brand: string }) => b.brand);
  expect(listed).toContain(brand);
  // "a backslash takes the next character as it is" (docs/catalog.md)
  const escaped = `${P} Acme\\ `;
  const list = await api.get('/products', { query: { brands: escaped } });
  const count = await api.get('/products/count', { query: { brands: escaped } });
  const body = await api.post('/products/query', { filters: { brands: [brand] } });
  expect(body.body.products.map((x: { id: string }) => x.id)).toEqual([p.id]);
  expect([list.status, list.body.map?.((x: { id: string }) => x.id), count.body]).toEqual([200, [p.id], { count: 1 }]);
  // unescaped, the blanks around a value go: " Acme " (spaces only) is the brand "Acme" of nobody here
  const plain = await api.get('/products/count', { query: { brands: `  ${P} Acme ,x` } });
  expect(plain.body).toEqual({ count: 0 });
  const leading = await create({ sku: `${P}-LEAD`, brand: ` ${P} Lead` });
  const lead = await api.get('/products', { query: { brands: `\\ ${P} Lead` } });
  expect(lead.body.map((x: { id: string }) => x.id)).toEqual([leading.id]);
});

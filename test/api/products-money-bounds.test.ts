import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';

/** Prices and costs stop at a trillion, so totals and stock valuations stay finite numbers. */
let deps: TestDeps;
let api: ApiClient;
const P = `MB${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'money bounds')).key);
});
afterAll(() => deps.close());

test.each([
  ['cost', { price: 10, cost: 1e306 }],
  ['price', { price: 1e13 }],
  ['compareAtPrice', { price: 10, compareAtPrice: 1e300 }],
])('a product with %s beyond 1e12 is 400 naming it, and nothing is stored', async (field, money) => {
  const sku = `${P}-${field.toUpperCase()}`;
  const res = await api.post('/products', { title: { value: sku }, sku, ...money });
  expectError(res, 400, 'validation-error', 'products');
  expect(res.text).toContain(field);
  expect((await api.get(`/products/${sku}`)).status).toBe(404);
});

test('a cost of 1e12 is stored, and its stock valuation is a number', async () => {
  const sku = `${P}-TOP`;
  expect((await api.post('/products', { title: { value: sku }, sku, price: 1e12, cost: 1e12 })).status).toBe(201);
  const main = (await api.get('/locations?limit=100')).body.locations.find((l: { isSystem: boolean }) => l.isSystem);
  expect((await api.put(`/inventory/location/${main.id}/product/${sku}`, { stock: 1000 })).status).toBe(200);
  const r = await api.post('/inventory/reports', { reportType: 'valuation' });
  expect(r.status).toBe(200);
  expect(r.body.totals.value).toBe(1e15);
});

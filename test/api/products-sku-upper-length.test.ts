import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A SKU is stored upper-cased, and some letters grow so ('ß' is 'SS'): one that would be longer
 * than 100 characters stored is refused as sent (400 naming it), so a product the API accepted can
 * always be written back from its own read.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `PSU${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'products sku upper length')).key);
});
afterAll(() => deps.close());

test('a SKU of 60 characters that upper-cases to 110 is 400 naming sku; nothing is stored', async () => {
  const sku = `${P}-${'ß'.repeat(50)}`;
  const res = await api.post('/products', { sku, title: { value: 'Straße' }, price: 1 });
  expect(res.status).toBe(400);
  expect(res.body.fieldErrors.map((f: { field: string }) => f.field)).toContain('sku');
  expect((await api.get('/products/count', { query: { q: P } })).body.count).toBe(0);
});

test('a variant SKU so is refused too; one that fits once upper-cased is stored and written back', async () => {
  const variant = (sku: string) => ({ sku, title: { value: 'v' }, price: 1, position: 0 });
  const long = await api.post('/products', {
    sku: `${P}-V`,
    title: { value: 'x' },
    price: 1,
    variants: [variant(`${P}-${'ß'.repeat(50)}`)],
  });
  expect(long.status).toBe(400);
  expect(long.body.fieldErrors.map((f: { field: string }) => f.field)).toContain('variants.0.sku');
  const sku = `${P}-${'ß'.repeat(40)}`; // 90 characters stored
  const made = await api.post('/products', { sku, title: { value: 'Straße' }, price: 1 });
  expect(made.status).toBe(201);
  const { id, createdAt: _c, updatedAt: _u, tenantId: _t, ...rest } = (await api.get(`/products/${made.body.id}`)).body;
  expect((await api.put(`/products/${id}`, { ...rest, price: 2 })).status).toBe(200);
});

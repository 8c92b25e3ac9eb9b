import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * Spec (Errors, Products: library errors): "duplicate-sku 409: Any unique-index collision is
 * labelled this way; check field and details". When the colliding SKU is a variant's, the answer
 * names the variant's field (`variants.<i>.sku`). Before, it said `field: "sku"`, the product's own
 * SKU, which was free.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `RDF${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'review duplicate sku field');
  api = new ApiClient(t.key);
  expect((await api.post('/products', { sku: `${P}-TAKEN`, title: { value: 'x' }, price: 1 })).status).toBe(201);
});
afterAll(() => deps.close());

const variant = (sku: string, position: number) => ({ sku, title: { value: sku }, price: 1, position });

test('POST: a variant SKU held by another product is 409 duplicate-sku naming variants.1.sku', async () => {
  const res = await api.post('/products', {
    sku: `${P}-NEW`,
    title: { value: 'new' },
    price: 1,
    variants: [variant(`${P}-NEW-A`, 0), variant(`${P}-TAKEN`, 1)],
  });
  expect(res.status).toBe(409);
  expect(res.body.code).toBe('duplicate-sku');
  expect(res.body.details.sku).toBe(`${P}-TAKEN`);
  expect(res.body.field).toBe('variants.1.sku');
});

test('PUT: adding a variant whose SKU another product holds is 409 duplicate-sku naming variants.0.sku', async () => {
  const made = await api.post('/products', { sku: `${P}-OWN`, title: { value: 'own' }, price: 1 });
  expect(made.status).toBe(201);
  const { id: _i, createdAt: _c, updatedAt: _u, tenantId: _t, ...body } = made.body;
  const res = await api.put(`/products/${made.body.id}`, { ...body, variants: [variant(`${P}-TAKEN`, 0)] });
  expect(res.status).toBe(409);
  expect(res.body.code).toBe('duplicate-sku');
  expect(res.body.field).toBe('variants.0.sku');
});

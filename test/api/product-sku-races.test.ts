import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * The SKU space under concurrent writes (docs/catalog.md): a write gives back only the claims it
 * made itself, so a losing update of one product never frees a SKU the winning update holds; and
 * a claim a lost or dead write left behind frees itself once no version of its product holds it.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `SKR${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey()).key);
});
afterAll(() => deps.close());

test('concurrent updates adding one variant SKU keep it claimed', async () => {
  const base = { sku: `${P}-A`, title: { value: 'Shirt' }, price: 10 };
  const created = await api.post('/products', base);
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const variantSku = `${P}-A-RED`;
  const body = {
    ...base,
    variants: [{ sku: variantSku, title: { value: 'Red' }, price: 10, position: 0 }],
  };
  const results = await Promise.all(Array.from({ length: 6 }, () => api.put(`/products/${id}`, body)));
  const statuses = results.map((r) => r.status);
  expect(statuses).toContain(200);
  // the product now has the variant
  const now = await api.get(`/products/${id}`);
  expect(now.body.variants.map((v: { sku: string }) => v.sku)).toEqual([variantSku]);
  // the SKU space knows it, so another product cannot take it
  const exists = await api.get(`/products/sku/${variantSku}/exists`);
  const other = await api.post('/products', { sku: variantSku, title: { value: 'Impostor' }, price: 1 });
  expect({ exists: exists.body, impostor: other.status }).toEqual({
    exists: { sku: variantSku, exists: true, kind: 'variant', productId: id },
    impostor: 409,
  });
});

test('a claim left by a write that died is taken over once its product does not hold the SKU', async () => {
  const holder = await api.post('/products', { sku: `${P}-B`, title: { value: 'Holder' }, price: 10 });
  expect(holder.status).toBe(201);
  const sku = `${P}-LEFT`;
  const tenantId = holder.body.tenantId as string;
  const claim = { _id: `${tenantId}:${sku}`, tenantId, sku, kind: 'variant', productId: holder.body.id };
  const claims = deps.db.collection('product_skus');
  await claims.insertOne({ ...claim, createdAt: new Date() } as never);
  // recent: it may be a write still under way
  expect((await api.post('/products', { sku, title: { value: 'New' }, price: 1 })).status).toBe(409);
  await claims.updateOne({ _id: claim._id } as never, { $set: { createdAt: new Date(Date.now() - 10 * 60_000) } });
  const taken = await api.post('/products', { sku, title: { value: 'New' }, price: 1 });
  expect(taken.status).toBe(201);
  expect((await api.get(`/products/sku/${sku}/exists`)).body).toMatchObject({ exists: true, productId: taken.body.id });
});

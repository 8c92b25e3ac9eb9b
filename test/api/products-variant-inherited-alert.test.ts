import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A variant without a minAlertStock of its own reads as the one it inherits; a PUT that sends the
 * read back with the product's minAlertStock changed leaves it inheriting the new one.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `CMAS${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'inherited min alert stock');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

test('read, change the product minAlertStock, write back: variants without their own value inherit the new one', async () => {
  const created = await api.post('/products', {
    sku: `${P}-TEE`,
    title: { value: 'Tee' },
    price: 10,
    variants: [
      { sku: `${P}-TEE-S`, title: { value: 'S' }, price: 10, position: 0 },
      { sku: `${P}-TEE-M`, title: { value: 'M' }, price: 10, position: 1, minAlertStock: 2 },
    ],
  });
  expect(created.status).toBe(201);
  const read = (await api.get(`/products/${created.body.id}`)).body;
  const { id: _i, createdAt: _c, updatedAt: _u, tenantId: _t, ...editable } = read;

  const put = await api.put(`/products/${read.id}`, { ...editable, minAlertStock: 12 });
  expect(put.status).toBe(200);
  const after = (await api.get(`/products/${read.id}`)).body;
  // S has no value of its own: it inherits 12; M keeps its own 2
  expect(after.variants.map((v: { sku: string; minAlertStock: number }) => [v.sku, v.minAlertStock])).toEqual([
    [`${P}-TEE-S`, 12],
    [`${P}-TEE-M`, 2],
  ]);
});

test('control: a variant value other than the shown one is kept as its own', async () => {
  const created = await api.post('/products', {
    sku: `${P}-HAT`,
    title: { value: 'Cap' },
    price: 10,
    variants: [{ sku: `${P}-HAT-S`, title: { value: 'S' }, price: 10, position: 0 }],
  });
  const { id: _i, createdAt: _c, updatedAt: _u, tenantId: _t, ...editable } = created.body;
  const variants = [{ ...editable.variants[0], minAlertStock: 7 }];
  expect((await api.put(`/products/${created.body.id}`, { ...editable, variants, minAlertStock: 12 })).status).toBe(
    200,
  );
  expect((await api.get(`/products/${created.body.id}`)).body.variants[0].minAlertStock).toBe(7);
});

test("a write that also corrects a variant's SKU (same id) keeps it inheriting", async () => {
  const created = await api.post('/products', {
    sku: `${P}-BEANIE`,
    title: { value: 'Cap' },
    price: 10,
    variants: [{ sku: `${P}-BEANIE-SMAL`, title: { value: 'S' }, price: 10, position: 0 }],
  });
  expect(created.status).toBe(201);
  const read = (await api.get(`/products/${created.body.id}`)).body;
  const { id: _i, createdAt: _c, updatedAt: _u, tenantId: _t, ...editable } = read;
  expect(read.variants[0].minAlertStock).toBe(5); // shown, inherited
  const variants = [{ ...read.variants[0], sku: `${P}-BEANIE-S` }];

  const put = await api.put(`/products/${read.id}`, { ...editable, variants, minAlertStock: 12 });
  expect(put.status).toBe(200);
  const after = (await api.get(`/products/${read.id}`)).body;
  expect(
    after.variants.map((v: { id: string; sku: string; minAlertStock: number }) => [v.id, v.sku, v.minAlertStock]),
  ).toEqual([[read.variants[0].id, `${P}-BEANIE-S`, 12]]);
});

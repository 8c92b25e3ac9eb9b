import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * What a retry of a material movement or a BOM run is. A transfer's Idempotency-Key sent again
 * with another quantity or route is 409 idempotency-key-reused, never answered as the first. A
 * movement's key is scoped to its material (the SKU is in the request, as a stock PUT's key is
 * scoped to its balance): the same key for another material is that material's own movement. A BOM
 * run retried naming the default location it ran at asks the same as leaving it out.
 */
let deps: TestDeps;
let api: ApiClient;
let A: string;
let B: string;
const P = `MK${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  api = new ApiClient(tenant.key);
  A = systemLocationId(tenant.tenantId);
  const second = await api.post('/locations', { name: `Kitchen ${P}`, type: 'location' });
  expect(second.status).toBe(201);
  B = second.body.id;
});
afterAll(() => deps.close());

async function material(tag: string): Promise<string> {
  const sku = `${P}-${tag}-${++n}`.toUpperCase();
  const res = await api.post('/products/materials', {
    sku,
    title: `Material ${tag}`,
    baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
  });
  if (res.status !== 201) throw new Error(`${res.status} ${res.text}`);
  return sku;
}

const key = (h: string) => ({ headers: { 'Idempotency-Key': h } });

test("a receipt's Idempotency-Key is its material's: the same key for another material is that one's receipt", async () => {
  const m1 = await material('K1');
  const m2 = await material('K2');
  const k = `rk-${P}-${++n}`;
  expect((await api.post(`/products/materials/${m1}/stock/${A}`, { quantity: 2 }, key(k))).status).toBe(200);
  const again = await api.post(`/products/materials/${m2}/stock/${A}`, { quantity: 2 }, key(k));
  expect([again.status, again.body.replayed]).toEqual([200, false]);
  expect((await api.get(`/products/materials/${m2}/stock`)).body.totalQuantity).toBe(2);
  const retry = await api.post(`/products/materials/${m2}/stock/${A}`, { quantity: 2 }, key(k));
  expect([retry.status, retry.body.replayed]).toEqual([200, true]);
  expect((await api.get(`/products/materials/${m1}/stock`)).body.totalQuantity).toBe(2);
  expect((await api.get(`/products/materials/${m2}/stock`)).body.totalQuantity).toBe(2);
});

test("a transfer's Idempotency-Key is its material's: another material's transfer under it moves that one", async () => {
  const m1 = await material('T1');
  const m2 = await material('T2');
  for (const m of [m1, m2])
    expect((await api.post(`/products/materials/${m}/stock/${A}`, { quantity: 5 })).status).toBe(200);
  const k = `tk-${P}-${++n}`;
  const body = { fromLocationId: A, toLocationId: B, quantity: 1 };
  expect((await api.post('/products/materials/transfer', { materialSku: m1, ...body }, key(k))).status).toBe(200);
  const again = await api.post('/products/materials/transfer', { materialSku: m2, ...body }, key(k));
  expect([again.status, again.body.replayed]).toEqual([200, false]);
  expect((await api.get(`/products/materials/${m2}/stock/${A}`)).body.quantity).toBe(4);
  expect((await api.post('/products/materials/transfer', { materialSku: m2, ...body }, key(k))).body.replayed).toBe(
    true,
  );
  expect((await api.get(`/products/materials/${m1}/stock/${A}`)).body.quantity).toBe(4);
  expect((await api.get(`/products/materials/${m2}/stock/${A}`)).body.quantity).toBe(4);
});

test('a transfer Idempotency-Key sent again with another quantity is 409 idempotency-key-reused, not answered as the first', async () => {
  const m = await material('TQ');
  expect((await api.post(`/products/materials/${m}/stock/${A}`, { quantity: 5 })).status).toBe(200);
  const k = `tq-${P}-${++n}`;
  const body = { materialSku: m, fromLocationId: A, toLocationId: B, quantity: 1 };
  expect((await api.post('/products/materials/transfer', body, key(k))).status).toBe(200);
  const other = await api.post('/products/materials/transfer', { ...body, quantity: 2 }, key(k));
  expect({ status: other.status, code: other.body.code }).toEqual({ status: 409, code: 'idempotency-key-reused' });
  const otherWay = await api.post(
    '/products/materials/transfer',
    { ...body, fromLocationId: B, toLocationId: A },
    key(k),
  );
  expect(otherWay.status).toBe(409);
  // the same request is still its retry, and nothing more moved
  const retry = await api.post('/products/materials/transfer', body, key(k));
  expect([retry.status, retry.body.replayed]).toEqual([200, true]);
  expect((await api.get(`/products/materials/${m}/stock/${A}`)).body.quantity).toBe(4);
});

test('a BOM run retried naming the default location it ran at is the same run: replayed, not 409', async () => {
  const m = await material('DL');
  expect((await api.post(`/products/materials/${m}/stock/${A}`, { quantity: 5 })).status).toBe(200);
  const sku = `${P}-PD-${++n}`;
  const created = await api.post('/products', {
    sku,
    title: { value: 'p' },
    price: 10,
    billOfMaterials: {
      consumptionMode: 'manual',
      yield: { quantity: 1, unit: 'pza' },
      components: [{ materialSku: m, quantity: 1, unit: 'kg' }],
    },
  });
  expect(created.status).toBe(201);
  const first = await api.post(`/products/${sku}/bom/consume`, { quantity: 1, referenceId: 'run-1' });
  expect(first.status).toBe(200);
  expect(first.body.locationId).toBe(A);
  const retry = await api.post(`/products/${sku}/bom/consume`, { quantity: 1, referenceId: 'run-1', locationId: A });
  expect({ status: retry.status, replayed: retry.body.replayed }).toEqual({ status: 200, replayed: true });
  expect((await api.get(`/products/materials/${m}/stock/${A}`)).body.quantity).toBe(4);
  const omitted = await api.post(`/products/${sku}/bom/consume`, { quantity: 1, referenceId: 'run-1' });
  expect([omitted.status, omitted.body.replayed]).toEqual([200, true]);
  const elsewhere = await api.post(`/products/${sku}/bom/consume`, {
    quantity: 1,
    referenceId: 'run-1',
    locationId: B,
  });
  expect(elsewhere.status).toBe(409);
});

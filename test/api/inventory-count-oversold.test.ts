import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * A count of a product that sells when out of stock, completed after orders took its balance below
 * zero, moves the balance by what the count found (missing or extra), never by a jump to zero.
 */
let deps: TestDeps;
let api: ApiClient;
let A: string;
const P = `CNO${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey(undefined, 'count oversold');
  api = new ApiClient(tenant.key);
  A = systemLocationId(tenant.tenantId);
});
afterAll(() => deps.close());

async function preorderProduct(stock: number): Promise<string> {
  const sku = `${P}-${++n}`;
  const res = await api.post('/products', { sku, title: { value: 'Pre' }, price: 10, sellIfOutOfStock: true });
  expect(res.status).toBe(201);
  expect((await api.put(`/inventory/location/${A}/product/${sku}`, { stock })).status).toBe(200);
  return sku;
}

async function sell(sku: string, quantity: number) {
  const res = await api.post('/orders', {
    externalId: `${P}-o${++n}`,
    customerInfo: { name: 'Ana' },
    items: [{ sku, quantity }],
  });
  expect(res.status).toBe(201);
  expect((await api.post(`/orders/${res.body.data._id}/accept`)).status).toBe(200);
}

const onHand = async (sku: string) => (await api.get(`/inventory/location/${A}/product/${sku}`)).body.onHand;

async function countOne(sku: string, counted: number) {
  const c = await api.post('/inventory/counts', { name: `c ${sku}`, locationId: A, countType: 'spot' });
  expect(c.status).toBe(201);
  const put = await api.put(`/inventory/counts/${c.body.id}/items`, {
    countItems: [{ sku, countedQuantity: counted }],
  });
  expect(put.status).toBe(200);
  return c.body.id as string;
}

test('a count completed after orders oversold the SKU moves the balance by what it found, not up to 0', async () => {
  const missing = await preorderProduct(2);
  const extra = await preorderProduct(0);
  const c1 = await countOne(missing, 1); // one unit missing
  const c2 = await countOne(extra, 2); // two units extra
  await sell(missing, 7);
  await sell(extra, 7);
  expect(await onHand(missing)).toBe(-5);
  expect(await onHand(extra)).toBe(-7);

  const done1 = await api.post(`/inventory/counts/${c1}/complete`);
  const done2 = await api.post(`/inventory/counts/${c2}/complete`);
  expect([done1.status, done2.status]).toEqual([200, 200]);
  const adj1 = (await api.get(`/inventory/adjustments/${done1.body.summary.adjustments[0]}`)).body;
  const adj2 = (await api.get(`/inventory/adjustments/${done2.body.summary.adjustments[0]}`)).body;

  expect({ missing: await onHand(missing), delta: adj1.appliedDelta }).toEqual({ missing: -6, delta: -1 });
  expect({ extra: await onHand(extra), delta: adj2.appliedDelta }).toEqual({ extra: -5, delta: 2 });
});

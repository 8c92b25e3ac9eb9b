import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * Cancelling an accepted order whose consumed material was deleted since (its BOM removed, its
 * stock 0): that material has nothing to go back into, so it gets nothing back and the order's
 * `returned` stock_changed event names it under `materialsNotReturned`; the other materials go
 * back, once, and the cancel answers 200 with the order cancelled. A material created again under
 * the same SKU is another record and receives none of the old one's stock. Before, POST /cancel
 * answered 404 "Material … not found" although the order was already cancelled (a retry was
 * then 409), the other materials were never put back and no `returned` event was recorded.
 */
let deps: TestDeps;
let api: ApiClient;
let A: string;
const P = `OCD${Date.now().toString(36).toUpperCase()}`;
let n = 0;
beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'order cancel deleted material');
  api = new ApiClient(t.key);
  A = systemLocationId(t.tenantId);
});
afterAll(() => deps.close());

async function material(sku: string) {
  const r = await api.post('/products/materials', {
    sku,
    title: sku,
    baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
    stockAlerts: { minStock: 0, reorderPoint: 0, reorderQuantity: 0, alertEnabled: false },
  });
  expect(r.status).toBe(201);
}
const receive = (sku: string, quantity: number) => api.post(`/products/materials/${sku}/stock/${A}`, { quantity });
const at = async (sku: string) => (await api.get(`/products/materials/${sku}/stock/${A}`)).body.quantity;

async function acceptedOrder(components: unknown[]) {
  const p = `${P}-P${++n}`;
  const made = await api.post('/products', {
    sku: p,
    title: { value: 'Pie' },
    price: 10,
    productType: 'service',
    billOfMaterials: { consumptionMode: 'on_sale', yield: { quantity: 1, unit: 'pza' }, components },
  });
  expect(made.status).toBe(201);
  const o = await api.post('/orders', {
    externalId: `${P}-o${++n}`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: p, quantity: 1 }],
  });
  expect(o.status).toBe(201);
  const id = o.body.data._id as string;
  expect((await api.post(`/orders/${id}/accept`)).status).toBe(200);
  return { p, id };
}

test('cancelling an accepted order whose consumed material was deleted since answers 200, the rest returned once', async () => {
  const gone = `${P}-DEL-${++n}`;
  const kept = `${P}-KEEP-${++n}`;
  await material(gone);
  await material(kept);
  expect((await receive(gone, 2)).status).toBe(200);
  expect((await receive(kept, 3)).status).toBe(200);
  const { p, id } = await acceptedOrder([
    { materialSku: gone, quantity: 2, unit: 'kg' },
    { materialSku: kept, quantity: 1, unit: 'kg' },
  ]);
  expect(await at(kept)).toBe(2);
  expect((await api.delete(`/products/${p}/bom`)).status).toBe(200);
  expect((await api.delete(`/products/materials/${gone}`)).status).toBe(200);

  const cancelled = await api.post(`/orders/${id}/cancel`, { reason: 'customer left' });
  const read = await api.get(`/orders/${id}`);
  expect({ status: cancelled.status, error: cancelled.body.error, orderStatus: read.body.data.orderStatus }).toEqual({
    status: 200,
    error: undefined,
    orderStatus: 'cancelled',
  });
  expect(await at(kept)).toBe(3);
  const log = (await api.get(`/orders/${id}/activity-log?limit=200`)).body.data as any[];
  const returned = log.filter((e) => e.type === 'stock_changed' && e.details.effect === 'returned');
  expect(returned).toHaveLength(1);
  expect(returned[0].details).toMatchObject({
    materials: [{ sku: kept, quantity: 1, unit: 'kg' }],
    materialsNotReturned: [{ sku: gone, quantity: 2, unit: 'kg' }],
  });
  // a second cancel is refused and puts back nothing more
  expect((await api.post(`/orders/${id}/cancel`, { reason: 'again' })).status).toBe(409);
  expect(await at(kept)).toBe(3);
});

test('a material created again under a deleted one’s SKU receives none of the stock the old one gave an order', async () => {
  const sku = `${P}-AGAIN-${++n}`;
  await material(sku);
  expect((await receive(sku, 2)).status).toBe(200);
  const { p, id } = await acceptedOrder([{ materialSku: sku, quantity: 2, unit: 'kg' }]);
  expect((await api.delete(`/products/${p}/bom`)).status).toBe(200);
  expect((await api.delete(`/products/materials/${sku}`)).status).toBe(200);
  await material(sku);
  expect((await receive(sku, 1)).status).toBe(200);
  expect((await api.post(`/orders/${id}/cancel`, { reason: 'customer left' })).status).toBe(200);
  expect(await at(sku)).toBe(1);
  const log = (await api.get(`/orders/${id}/activity-log?limit=200`)).body.data as any[];
  const returned = log.find((e) => e.type === 'stock_changed' && e.details.effect === 'returned');
  expect(returned.details).toMatchObject({ materials: [], materialsNotReturned: [{ sku, quantity: 2 }] });
});

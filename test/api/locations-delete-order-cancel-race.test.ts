import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * An accepted order's cancel racing DELETE /locations/{id} of the location its stock came from:
 * the cancel moves the order to cancelled and then returns its stock there, so the order holds
 * the location until its stock is back (the move marks it, the return clears the mark). The
 * delete is refused whichever comes first, and the stock is back at the location, never stranded
 * at a location that is gone.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `LDO${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-A`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'location delete order cancel')).key);
  expect((await api.post('/products', { sku: SKU, title: { value: 'x' }, price: 10 })).status).toBe(201);
});
afterAll(() => deps.close());

test('an order cancel racing its location delete: the delete is refused and the stock is back', async () => {
  const stranded: string[] = [];
  for (let i = 0; i < 12; i++) {
    const loc = (await api.post('/locations', { name: `Race ${P} ${i}`, type: 'location' })).body.id as string;
    expect((await api.put(`/inventory/location/${loc}/product/${SKU}`, { stock: 1 })).status).toBe(200);
    const order = await api.post('/orders', {
      externalId: `${P}-${i}`,
      customerInfo: { name: 'Ana' },
      locationId: loc,
      items: [{ sku: SKU, quantity: 1 }],
    });
    expect(order.status).toBe(201);
    const id = order.body.data._id as string;
    expect((await api.post(`/orders/${id}/accept`)).status).toBe(200);
    const [cancel, del] = await Promise.all([
      api.post(`/orders/${id}/cancel`, { reason: 'changed mind' }),
      new Promise((r) => setTimeout(r, (i % 6) * 15)).then(() => api.delete(`/locations/${loc}`)),
    ]);
    expect(cancel.status).toBe(200);
    expect([del.status, del.body.code]).toEqual([400, "bad-request/can't-delete"]);
    const back = (await api.get(`/inventory/location/${loc}/product/${SKU}`)).body.onHand;
    if (back !== 1) stranded.push(`round ${i}: ${back} back at ${loc}`);
  }
  expect(stranded).toEqual([]);
});

import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';

/**
 * A location whose balance is below zero (a product that sells when out of stock, sold short
 * there) still holds stock: its delete is 400 can't-delete, as the product delete already counts a
 * negative balance as stock. Before, only onHand > 0 was looked for, so the oversold balance was
 * stranded at a location no inventory write could name.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `RLDO${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey()).key);
});
afterAll(() => deps.close());

test('a location holding an oversold (negative) balance cannot be deleted; its balance stays reachable', async () => {
  const loc = await api.post('/locations', { name: `Kiosk ${P}`, type: 'location' });
  expect(loc.status).toBe(201);
  const L = loc.body.id as string;
  const sku = `${P}-PREORDER`;
  expect(
    (await api.post('/products', { sku, title: { value: 'Pre-order' }, price: 10, sellIfOutOfStock: true })).status,
  ).toBe(201);

  // sold short at the kiosk: the balance goes to -3, as sellIfOutOfStock allows
  const order = await api.post('/orders', {
    externalId: `${P}-1`,
    customerInfo: { name: 'Ana' },
    items: [{ sku, quantity: 3 }],
    locationId: L,
  });
  expect(order.status).toBe(201);
  const id = order.body.data._id;
  expect((await api.post(`/orders/${id}/accept`)).status).toBe(200);
  for (const status of ['preparing', 'ready', 'shipped', 'delivered'])
    expect((await api.put(`/orders/${id}/status`, { status })).status).toBe(200);
  expect((await api.get(`/inventory/location/${L}/product/${sku}`)).body.onHand).toBe(-3);

  const del = await api.delete(`/locations/${L}`);
  // now: 200, the location is gone and GET /inventory/items/{sku} keeps {locationId: L, onHand: -3}
  // in its total forever (a PUT to fix it is 404 not-found/location)
  expectError(del, 400, "bad-request/can't-delete", 'locations');
  expect((await api.get(`/locations/${L}`)).status).toBe(200);
  expect((await api.get(`/inventory/items/${sku}`)).body.total).toBe(-3);
});

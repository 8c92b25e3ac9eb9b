import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * Guards that a deleted location leaves nothing behind in the stock reads, and that a location with
 * a count not yet completed cannot be deleted (400 bad-request/can't-delete, as for open transfers).
 * Before, a deleted location's zero balances stayed in stock_levels and GET /inventory/items/{sku},
 * GET /inventory and the stock-levels report still listed them (those reads never asked whether
 * their location exists), and the delete did not look at counts: a count opened there was left
 * open for good, every complete answering 404 not-found/location.
 */
let deps: TestDeps;
let api: ApiClient;
let main: string;
const P = `IDLL${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey();
  api = new ApiClient(t.key);
  main = systemLocationId(t.tenantId);
});
afterAll(() => deps.close());

// GET /locations/{L} is 404 and GET /inventory/location?locationId=L is 404 not-found/location, yet
// before, GET /inventory/items/{sku} keeps {locationId: L, onHand: 0} in byLocation, GET
// /inventory?locationId=L lists its row, and the stock-levels report has a row at L.
test('a deleted location no longer appears in the stock reads of its former SKUs', async () => {
  const sku = `${P}-A`;
  expect((await api.post('/products', { sku, title: { value: 'A' }, price: 1 })).status).toBe(201);
  const L = (await api.post('/locations', { name: `Popup ${P}`, type: 'location' })).body.id as string;
  expect((await api.put(`/inventory/location/${main}/product/${sku}`, { stock: 5 })).status).toBe(200);
  expect((await api.put(`/inventory/location/${L}/product/${sku}`, { stock: 2 })).status).toBe(200);
  expect((await api.put(`/inventory/location/${L}/product/${sku}`, { stock: 0 })).status).toBe(200);
  expect((await api.delete(`/locations/${L}`)).status).toBe(200);
  expect((await api.get(`/locations/${L}`)).status).toBe(404);
  expect((await api.get(`/inventory/location?locationId=${L}`)).status).toBe(404);

  const item = await api.get(`/inventory/items/${sku}`);
  expect(item.body.byLocation).toEqual([{ locationId: main, onHand: 5 }]);
  const rows = await api.get(`/inventory?sku=${sku}`);
  expect(rows.body.items.map((r: { locationId: string }) => r.locationId)).toEqual([main]);
  const report = await api.post('/inventory/reports', { reportType: 'stock-levels' });
  expect(report.body.rows.filter((r: { locationId: string }) => r.locationId === L)).toEqual([]);
});

// A count is made to be completed (POST …/complete turns its differences into corrections). Before:
// the location's delete answered 200 while the count was open there, and the count then answered
// 404 not-found/location to every complete, staying open for good (counts have no cancel).
test('a location with an open count is not deleted out from under the count', async () => {
  const sku = `${P}-B`;
  expect((await api.post('/products', { sku, title: { value: 'B' }, price: 1 })).status).toBe(201);
  const L = (await api.post('/locations', { name: `Backroom ${P}`, type: 'location' })).body.id as string;
  const count = await api.post('/inventory/counts', { name: 'Spot', locationId: L, countType: 'spot' });
  expect(count.status).toBe(201);
  const items = await api.put(`/inventory/counts/${count.body.id}/items`, {
    countItems: [{ sku, countedQuantity: 4 }],
  });
  expect(items.status).toBe(200);

  const del = await api.delete(`/locations/${L}`);
  // refused as an open transfer refuses it
  expect({ status: del.status, code: del.body.code }).toEqual({ status: 400, code: "bad-request/can't-delete" });
  expect(del.body.details).toEqual({ openCounts: [count.body.id] });
  const complete = await api.post(`/inventory/counts/${count.body.id}/complete`);
  const after = await api.get(`/inventory/counts/${count.body.id}`);
  // either the delete is refused while the count is open, or the count is not left open for good
  expect({ del: del.status, complete: complete.status, status: after.body.status }).not.toEqual({
    del: 200,
    complete: 404,
    status: 'open',
  });
});

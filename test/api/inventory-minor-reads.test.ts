import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

let deps: TestDeps;
beforeAll(async () => {
  deps = await TestDeps.open();
});
afterAll(() => deps.close());

/**
 * Inventory reads: stats count the system location even as a tenant's first call, and a blank
 * `sku` filter on the adjustments list is no filter.
 */
test('GET /inventory/stats counts the system location even as the first call of a tenant', async () => {
  const api = new ApiClient((await deps.tenantWithKey(undefined, 'stats first')).key);
  const stats = await api.get('/inventory/stats');
  expect(stats.status).toBe(200);
  const count = await api.get('/locations/count');
  expect(count.status).toBe(200);
  const counted = typeof count.body === 'number' ? count.body : count.body.count;
  expect(stats.body.locations).toBe(counted);
});

/**
 * Inventory lists read a blank filter as no filter (GET /inventory?sku=" " lists everything,
 * shared/inventory/stock.ts balances; lots the same). GET /inventory/adjustments?sku=" " filters on
 * the empty SKU and lists nothing.
 */
test('GET /inventory/adjustments?sku=" " lists what the list without sku lists', async () => {
  const P = `IMR${Date.now().toString(36).toUpperCase()}`;
  const api = new ApiClient((await deps.tenantWithKey(undefined, 'blank sku filter')).key);
  expect((await api.post('/products', { sku: `${P}-A`, title: { value: 'x' }, price: 1 })).status).toBe(201);
  const loc = (await api.get('/locations')).body.locations[0].id;
  const adj = await api.post('/inventory/adjustments', {
    locationId: loc,
    sku: `${P}-A`,
    newQuantity: 2,
    reason: 'found',
  });
  expect(adj.status).toBe(201);
  const all = await api.get('/inventory/adjustments');
  const blank = await api.get('/inventory/adjustments', { query: { sku: ' ' } });
  expect(all.body.totalCount).toBe(1);
  expect({ status: blank.status, totalCount: blank.body.totalCount }).toEqual({ status: 200, totalCount: 1 });
});

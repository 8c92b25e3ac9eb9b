import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * /openapi.json names every type an activity-log entry has, `stock_changed` included (an accepted
 * order's log holds one: docs/orders.md). Before, it listed "created, updated, customer_updated,
 * status_changed or comment", and a client switching on those met a type it was told did not exist.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `RVA${Date.now().toString(36).toUpperCase()}`;
beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'activity log types')).key);
  const p = await api.post('/products', {
    sku: `${P}-MUG`,
    title: { value: 'Mug' },
    price: 10,
    sellIfOutOfStock: true,
  });
  expect(p.status).toBe(201);
});
afterAll(() => deps.close());

test('every entry type of an accepted order’s activity log is one the document names', async () => {
  const o = await api.post('/orders', {
    externalId: `${P}-1`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: `${P}-MUG`, quantity: 1 }],
  });
  expect(o.status).toBe(201);
  const id = o.body.data._id;
  expect((await api.post(`/orders/${id}/accept`)).status).toBe(200);
  const log = await api.get(`/orders/${id}/activity-log`);
  expect(log.status).toBe(200);
  const types = [...new Set(log.body.data.map((e: { type: string }) => e.type))] as string[];
  expect(types).toContain('stock_changed');
  const doc = (await api.get('/openapi.json')).body;
  const described = JSON.stringify(doc.paths['/orders/{orderId}/activity-log'].get);
  expect(types.filter((t) => !described.includes(t))).toEqual([]);
});

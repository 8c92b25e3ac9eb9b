import { ObjectId } from 'mongodb';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { orders } from '../../shared/orders/collections';
import { OrderStock } from '../../shared/orders/stock';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * A retried "stock returned" step (its activity run again after a worker died) records the return
 * once in the order's activity log. Before, it was recorded twice: OrderStock.recordReturned
 * guarded its push with `{'audit.id': {$ne: id}}`, which MongoDB matches when no event has the id
 * but the embedded FerretDB when any event's id differs (filter.go filterDocumentPair). The guard
 * is now `$nor: [{'audit.id': id}]`, the same on both.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
const P = `FNE${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'ferret ne array path');
  api = new ApiClient(t.key);
  tenantId = t.tenantId;
});
afterAll(() => deps.close());

test('a retried "stock returned" step records the return once in the activity log', async () => {
  const sku = `${P}-A`;
  expect((await api.post('/products', { sku, title: { value: sku }, price: 3 })).status).toBe(201);
  expect(
    (await api.put(`/inventory/location/${systemLocationId(tenantId)}/product/${sku}`, { stock: 10 })).status,
  ).toBe(200);
  const res = await api.post('/orders', {
    externalId: `${P}-1`,
    customerInfo: { name: 'Ana' },
    items: [{ sku, quantity: 2 }],
  });
  expect(res.status).toBe(201);
  const id = res.body.data._id as string;
  expect((await api.post(`/orders/${id}/accept`)).status).toBe(200);
  expect((await api.post(`/orders/${id}/cancel`, { reason: 'changed mind' })).status).toBe(200);

  const returnedEvents = async () =>
    ((await api.get(`/orders/${id}/activity-log?limit=200`)).body.data as any[]).filter(
      (e) => e.type === 'stock_changed' && e.details.effect === 'returned',
    );
  expect(await returnedEvents()).toHaveLength(1);

  // the workflow's recordOrderStockReturned activity run again (same run, same effects)
  const tenantDb = new TenantDb(deps.db, tenantId);
  const order = await tenantDb.collection(orders).findOne({ _id: new ObjectId(id) } as never);
  const returned = order!.audit.find((e) => e.id.endsWith(':stock-returned'))!;
  const runId = returned.id.slice(0, -':stock-returned'.length);
  await new OrderStock(tenantDb, 'test').recordReturned(id, runId, order!.stock!);

  expect(await returnedEvents()).toHaveLength(1);
});

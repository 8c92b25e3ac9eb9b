import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';

/**
 * The spec: customerInfo's `name` is required (PUT /orders/{orderId}/customer: "name (string)
 * required"; a missing name is 400 validation:invalid_input). A name of spaces is no name, as a
 * blank reason is no reason (docs/orders.md) and a blank location name is missing-name. Before,
 * each of these was answered 200/201 and the order's customer stored nameless.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `RVN${Date.now().toString(36).toUpperCase()}`;
let n = 0;
beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'blank customer name');
  api = new ApiClient(t.key);
  expect((await api.post('/products', { sku: `${P}-MUG`, title: { value: 'Mug' }, price: 10 })).status).toBe(201);
});
afterAll(() => deps.close());

async function order(): Promise<string> {
  const o = await api.post('/orders', {
    externalId: `${P}-${++n}`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: `${P}-MUG`, quantity: 1 }],
  });
  expect(o.status).toBe(201);
  return o.body.data._id;
}

test('PUT /orders/{id}/customer with a name of spaces is 400 and the customer keeps its name', async () => {
  const id = await order();
  const res = await api.put(`/orders/${id}/customer`, { name: '   ' });
  expectError(res, 400, 'validation:invalid_input', 'orders');
  expect((await api.get(`/orders/${id}`)).body.data.customerInfo).toEqual({ name: 'Ana' });
});

test('PUT /orders/{id} with customerInfo.name of spaces is 400 and the customer keeps its name', async () => {
  const id = await order();
  const res = await api.put(`/orders/${id}`, { customerInfo: { name: '  ' } });
  expectError(res, 400, 'validation:invalid_input', 'orders');
  expect((await api.get(`/orders/${id}`)).body.data.customerInfo).toEqual({ name: 'Ana' });
});

test('POST /orders with customerInfo.name of spaces is 400 and no order is made', async () => {
  const externalId = `${P}-blank`;
  const res = await api.post('/orders', {
    externalId,
    customerInfo: { name: ' ' },
    items: [{ sku: `${P}-MUG`, quantity: 1 }],
  });
  expectError(res, 400, 'validation:invalid_input', 'orders');
  expect((await api.get('/orders', { query: { externalId } })).body.data).toEqual([]);
});

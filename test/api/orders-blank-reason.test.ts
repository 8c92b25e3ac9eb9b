import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';

/**
 * A reason of spaces is no reason: a reject (or cancel) with one is 400 and the order stays as it
 * was; an optional reason, when sent, must say something too.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `RVN${Date.now().toString(36).toUpperCase()}`;
beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'blank reason');
  api = new ApiClient(t.key);
  expect((await api.post('/products', { sku: `${P}-MUG`, title: { value: 'Mug' }, price: 10 })).status).toBe(201);
});
afterAll(() => deps.close());

test('reject with a reason of spaces is 400 and the order stays pending', async () => {
  const res = await api.post('/orders', {
    externalId: `${P}-1`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: `${P}-MUG`, quantity: 1 }],
  });
  expect(res.status).toBe(201);
  const id = res.body.data._id;
  const rejected = await api.post(`/orders/${id}/reject`, { reason: '   ' });
  // now: 200 {data: {orderStatus: 'rejected'}} with details.reason "   " in the log
  expectError(rejected, 400, 'validation:invalid_input', 'orders');
  expect((await api.get(`/orders/${id}`)).body.data.orderStatus).toBe('pending');
});

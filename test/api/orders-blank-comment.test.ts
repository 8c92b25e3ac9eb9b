import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';

/**
 * The spec: POST /orders/{orderId}/comments takes `{comment: string}` (required); a missing comment
 * is 400 validation:invalid_input. A comment of spaces says nothing: it is as missing as a blank
 * reject/cancel reason (docs/orders.md), and is refused the same way. Before, it was answered 200
 * and stayed in the append-only activity log for good.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `RVC${Date.now().toString(36).toUpperCase()}`;
beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'blank comment');
  api = new ApiClient(t.key);
  expect((await api.post('/products', { sku: `${P}-MUG`, title: { value: 'Mug' }, price: 10 })).status).toBe(201);
});
afterAll(() => deps.close());

test('a comment of only spaces is 400 validation:invalid_input and nothing is appended to the history', async () => {
  const o = await api.post('/orders', {
    externalId: `${P}-1`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: `${P}-MUG`, quantity: 1 }],
  });
  expect(o.status).toBe(201);
  const id = o.body.data._id;
  const res = await api.post(`/orders/${id}/comments`, { comment: ' \t\n  ' });
  expectError(res, 400, 'validation:invalid_input', 'orders');
  const log = await api.get(`/orders/${id}/activity-log`);
  expect(log.status).toBe(200);
  expect(log.body.data.filter((e: { type: string }) => e.type === 'comment')).toEqual([]);
});

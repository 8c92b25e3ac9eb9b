import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';

/**
 * A comment's Idempotency-Key names that comment: a retry adds it once, and another comment sent
 * under a key already used, on this order or another one (keys are the tenant's), is 409
 * idempotency-key-reused, never silently dropped nor added twice.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `RVC${Date.now().toString(36).toUpperCase()}`;
let orderId: string;
beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'comment keys');
  api = new ApiClient(t.key);
  const sku = `${P}-MUG`;
  expect((await api.post('/products', { sku, title: { value: 'Mug' }, price: 10 })).status).toBe(201);
  const res = await api.post('/orders', {
    externalId: `${P}-1`,
    customerInfo: { name: 'Ana' },
    items: [{ sku, quantity: 1 }],
  });
  expect(res.status).toBe(201);
  orderId = res.body.data._id;
});
afterAll(() => deps.close());

const comments = async () =>
  ((await api.get(`/orders/${orderId}/activity-log?limit=200`)).body.data as any[])
    .filter((e) => e.type === 'comment')
    .map((e) => e.details.comment);

test('another comment under a used Idempotency-Key is 409 idempotency-key-reused, not a 200 that drops it', async () => {
  const key = { headers: { 'idempotency-key': `${P}-key` } };
  expect((await api.post(`/orders/${orderId}/comments`, { comment: 'gift wrap please' }, key)).status).toBe(200);
  const other = await api.post(`/orders/${orderId}/comments`, { comment: 'deliver after 6pm' }, key);
  // now: 200 {data: {success: true, orderId}} and the comment is not stored
  expectError(other, 409, 'idempotency-key-reused', 'orders');
  expect(await comments()).toEqual(['gift wrap please']);
});

test('the same comment under a used Idempotency-Key on another order is 409, nothing added there', async () => {
  const other = await api.post('/orders', {
    externalId: `${P}-2`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: `${P}-MUG`, quantity: 1 }],
  });
  const key = { headers: { 'idempotency-key': `${P}-shared` } };
  expect((await api.post(`/orders/${orderId}/comments`, { comment: 'hello' }, key)).status).toBe(200);
  const again = await api.post(`/orders/${other.body.data._id}/comments`, { comment: 'hello' }, key);
  expectError(again, 409, 'idempotency-key-reused', 'orders');
  const log = (await api.get(`/orders/${other.body.data._id}/activity-log`)).body.data as { type: string }[];
  expect(log.filter((e) => e.type === 'comment')).toHaveLength(0);
  // the retry on the first order is still answered, and adds nothing
  const retry = await api.post(`/orders/${orderId}/comments`, { comment: 'hello' }, key);
  expect(retry.status).toBe(200);
  expect((await comments()).filter((c) => c === 'hello')).toHaveLength(1);
});

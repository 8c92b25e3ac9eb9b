import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A stock PUT that confirms the balance is recorded (a movement of 0) under its Idempotency-Key:
 * another stock under the key is 409 idempotency-key-reused, and a retry after the balance moved
 * answers the first result and moves nothing.
 */
let deps: TestDeps;
let api: ApiClient;
let loc: string;
const P = `IKN${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'stock key noop');
  api = new ApiClient(t.key);
  loc = (await api.get('/locations')).body.locations[0].id;
  for (const s of ['A', 'B', 'C'])
    expect((await api.post('/products', { sku: `${P}-${s}`, title: { value: 'x' }, price: 10 })).status).toBe(201);
});
afterAll(() => deps.close());

test('PUT stock equal to the balance under a key, then another stock under the same key: 409 idempotency-key-reused', async () => {
  const path = `/inventory/location/${loc}/product/${P}-A`;
  const headers = { 'Idempotency-Key': `noop-${P}` };
  const first = await api.put(path, { stock: 0 }, { headers }); // balance already 0: nothing moves
  expect(first.status).toBe(200);
  expect(first.body.onHand).toBe(0);
  const second = await api.put(path, { stock: 9 }, { headers });
  expect({ status: second.status, code: second.body.code }).toEqual({ status: 409, code: 'idempotency-key-reused' });
  expect((await api.get(path)).body.onHand).toBe(0);
});

test('a retried no-op PUT (same key, same stock) after the balance moved answers the first result and moves nothing', async () => {
  const path = `/inventory/location/${loc}/product/${P}-B`;
  expect((await api.put(path, { stock: 5 })).status).toBe(200);
  const headers = { 'Idempotency-Key': `noop-retry-${P}` };
  const first = await api.put(path, { stock: 5 }, { headers }); // no change
  expect(first.status).toBe(200);
  // someone else sets the balance meanwhile
  expect((await api.put(path, { stock: 3 })).status).toBe(200);
  // the client's retry of its first request (a lost response)
  const retry = await api.put(path, { stock: 5 }, { headers });
  expect(retry.status).toBe(200);
  expect(retry.body).toEqual(first.body);
  expect((await api.get(path)).body.onHand).toBe(3);
});

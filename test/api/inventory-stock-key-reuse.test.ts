import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A stock PUT's Idempotency-Key replays the first set to a retry of the same stock, and refuses
 * another stock under it with 409 idempotency-key-reused (nothing written).
 */
let deps: TestDeps;
let api: ApiClient;
let loc: string;
const P = `PKR${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-A`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'stock put key reuse');
  api = new ApiClient(t.key);
  loc = (await api.get('/locations')).body.locations[0].id;
  expect((await api.post('/products', { sku: SKU, title: { value: 'x' }, price: 10 })).status).toBe(201);
});
afterAll(() => deps.close());

test('PUT stock: the same Idempotency-Key with another stock is 409 idempotency-key-reused, not a silent 200', async () => {
  const path = `/inventory/location/${loc}/product/${SKU}`;
  const headers = { 'Idempotency-Key': `k-${P}` };
  const first = await api.put(path, { stock: 4 }, { headers });
  expect(first.status).toBe(200);
  expect(first.body.onHand).toBe(4);

  const second = await api.put(path, { stock: 9 }, { headers });
  expect({ status: second.status, code: second.body.code }).toEqual({ status: 409, code: 'idempotency-key-reused' });
  expect((await api.get(path)).body.onHand).toBe(4);
  // control: the same stock again under the key replays the first answer
  const again = await api.put(path, { stock: 4 }, { headers });
  expect({ status: again.status, onHand: again.body.onHand }).toEqual({ status: 200, onHand: 4 });
});

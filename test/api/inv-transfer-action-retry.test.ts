import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * A transfer's approve or cancel retried with the Idempotency-Key of the one that succeeded (its
 * answer was lost) answers the transfer, as a retried receive does. Before, the retry got 409
 * conflict/transfer-approved / -cancelled: the Update id names the history as the first attempt
 * found it, which that attempt itself changed.
 */
let deps: TestDeps;
let api: ApiClient;
let main: string;
let store: string;
const P = `RTAR${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-BOX`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey();
  api = new ApiClient(t.key);
  main = systemLocationId(t.tenantId);
  store = (await api.post('/locations', { name: `Store ${P}`, type: 'location' })).body.id;
  expect((await api.post('/products', { sku: SKU, title: { value: 'Box' }, price: 5 })).status).toBe(201);
  expect((await api.put(`/inventory/location/${main}/product/${SKU}`, { stock: 10 })).status).toBe(200);
});
afterAll(() => deps.close());

async function transfer(): Promise<string> {
  const t = await api.post('/inventory/transfers', {
    originId: main,
    destinationId: store,
    productsList: [{ sku: SKU, quantity: 2 }],
  });
  expect(t.status).toBe(201);
  return t.body.id;
}

test('an approve retried with the same Idempotency-Key answers the approved transfer, not 409', async () => {
  const id = await transfer();
  const opts = { headers: { 'idempotency-key': `approve-${P}` } };
  const first = await api.post(`/inventory/transfers/${id}/approve`, undefined, opts);
  expect(first.status).toBe(200);
  const retry = await api.post(`/inventory/transfers/${id}/approve`, undefined, opts);
  expect({ status: retry.status, code: retry.body.code, state: retry.body.status }).toEqual({
    status: 200,
    code: undefined,
    state: 'approved',
  });
});

test('a cancel retried with the same Idempotency-Key answers the cancelled transfer, not 409', async () => {
  const id = await transfer();
  const opts = { headers: { 'idempotency-key': `cancel-${P}` } };
  const first = await api.post(`/inventory/transfers/${id}/cancel`, { reason: 'wrong store' }, opts);
  expect(first.status).toBe(200);
  const retry = await api.post(`/inventory/transfers/${id}/cancel`, { reason: 'wrong store' }, opts);
  expect({ status: retry.status, code: retry.body.code, state: retry.body.status }).toEqual({
    status: 200,
    code: undefined,
    state: 'cancelled',
  });
});

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * POST /inventory/bulk-update binds its Idempotency-Key to its body: another body under a used key
 * is 409 idempotency-key-reused with nothing written. Before, each item was keyed `<key>:<index>`
 * on its own, so another SKU under the key was applied and another stock answered 207.
 */
let deps: TestDeps;
let api: ApiClient;
let main: string;
const P = `RBKR${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey();
  api = new ApiClient(t.key);
  main = systemLocationId(t.tenantId);
  for (const s of ['A', 'B'])
    expect((await api.post('/products', { sku: `${P}-${s}`, title: { value: s }, price: 5 })).status).toBe(201);
});
afterAll(() => deps.close());

const onHand = async (sku: string) => (await api.get(`/inventory/location/${main}/product/${sku}`)).body.onHand;

test('another body under a used key is 409 idempotency-key-reused, and writes nothing', async () => {
  const opts = { headers: { 'idempotency-key': `bulk-${P}-1` } };
  expect((await api.post('/inventory/bulk-update', { items: [{ sku: `${P}-A`, stock: 3 }] }, opts)).status).toBe(200);
  const other = await api.post('/inventory/bulk-update', { items: [{ sku: `${P}-B`, stock: 5 }] }, opts);
  // now: 200, and B is set to 5 under the first request's key
  expect({ status: other.status, code: other.body.code, B: await onHand(`${P}-B`) }).toEqual({
    status: 409,
    code: 'idempotency-key-reused',
    B: 0,
  });
});

test('the same items with another stock under a used key is 409, not a 207 with per-item failures', async () => {
  const opts = { headers: { 'idempotency-key': `bulk-${P}-2` } };
  expect((await api.post('/inventory/bulk-update', { items: [{ sku: `${P}-A`, stock: 8 }] }, opts)).status).toBe(200);
  const other = await api.post('/inventory/bulk-update', { items: [{ sku: `${P}-A`, stock: 9 }] }, opts);
  expect({ status: other.status, code: other.body.code, A: await onHand(`${P}-A`) }).toEqual({
    status: 409,
    code: 'idempotency-key-reused',
    A: 8,
  });
});

test('the same body under its key is replayed: the same results, nothing set twice', async () => {
  const opts = { headers: { 'idempotency-key': `bulk-${P}-3` } };
  const body = { items: [{ sku: `${P}-B`, stock: 4 }] };
  const first = await api.post('/inventory/bulk-update', body, opts);
  expect(first.status).toBe(200);
  expect((await api.put(`/inventory/location/${main}/product/${P}-B`, { stock: 6 })).status).toBe(200);
  const retry = await api.post('/inventory/bulk-update', body, opts);
  expect({ status: retry.status, results: retry.body.results }).toEqual({
    status: 200,
    results: first.body.results,
  });
  expect(await onHand(`${P}-B`)).toBe(6);
});

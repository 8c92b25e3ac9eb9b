import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { idempotencyKeys } from '../../shared/idempotency/keys';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * Guards that a bulk stock update's Idempotency-Key is good for 24 hours, as its binding is: each
 * item's set is keyed by the binding (`<key>@<ms>`, idempotencyKeyOf), so a key reused after its
 * 24 hours is a new request (docs/api-conventions.md). Before, Stock.bulkSet keyed each item's ledger
 * movement by the raw header (`put:<loc>:<sku>:<key>:<index>`), and ledger movements never expire:
 * after the 24 hours another stock was a per-item 409 idempotency-key-reused (a 207), and the same
 * stock answered success with the old onHand while nothing was set.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let main: string;
const P = `IBKE${Date.now().toString(36).toUpperCase()}`;
const A = `${P}-A`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey();
  tenantId = t.tenantId;
  api = new ApiClient(t.key);
  main = systemLocationId(tenantId);
  expect((await api.post('/products', { sku: A, title: { value: 'A' }, price: 5 })).status).toBe(201);
});
afterAll(() => deps.close());

const onHand = async () => (await api.get(`/inventory/location/${main}/product/${A}`)).body.onHand;
/** What 24 hours do to the key's binding (the route's store checks expiresAt on read). */
const expire = (key: string) =>
  new TenantDb(deps.db, tenantId)
    .collection(idempotencyKeys)
    .updateOne({ _id: `${tenantId}:${key}` }, { $set: { expiresAt: new Date(Date.now() - 1000) } });

// before: 207, results[0] {success: false, error: {code: 'idempotency-key-reused'}}, A stays 8
test('a key reused after its 24 hours with another body is a new bulk update', async () => {
  const key = `${P}-k1`;
  const opts = { headers: { 'idempotency-key': key } };
  expect((await api.post('/inventory/bulk-update', { items: [{ sku: A, stock: 8 }] }, opts)).status).toBe(200);
  await expire(key);
  const later = await api.post('/inventory/bulk-update', { items: [{ sku: A, stock: 9 }] }, opts);
  expect({ status: later.status, results: later.body.results }).toEqual({
    status: 200,
    results: [{ sku: A, locationId: main, success: true, onHand: 9 }],
  });
  expect(await onHand()).toBe(9);
});

// before: 200 {success: true, onHand: 4}, but the balance stays 6: the answer says a set happened
// that did not
test('a key reused after its 24 hours with the same body sets the stock again', async () => {
  const key = `${P}-k2`;
  const opts = { headers: { 'idempotency-key': key } };
  const body = { items: [{ sku: A, stock: 4 }] };
  expect((await api.post('/inventory/bulk-update', body, opts)).status).toBe(200);
  expect((await api.put(`/inventory/location/${main}/product/${A}`, { stock: 6 })).status).toBe(200);
  await expire(key);
  const later = await api.post('/inventory/bulk-update', body, opts);
  expect(later.status).toBe(200);
  expect(later.body.results[0]).toMatchObject({ success: true, onHand: 4 });
  expect(await onHand()).toBe(4);
});

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { Ledger } from '../../shared/inventory/ledger';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * Routes whose use case keeps the Idempotency-Key itself (a transfer action's Update id, a stock
 * PUT's movement) check its form as every route does: 1 to 255 visible ASCII characters, else
 * 400 bad-request before anything is done.
 */
let deps: TestDeps;
let api: ApiClient;
let origin: string;
let dest: string;
const P = `TLK${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-A`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey(undefined, 'inventory key form');
  api = new ApiClient(tenant.key);
  origin = systemLocationId(tenant.tenantId);
  const loc = await api.post('/locations', { name: `Store ${P}`, type: 'location' });
  expect(loc.status).toBe(201);
  dest = loc.body.id;
  expect((await api.post('/products', { sku: SKU, title: { value: SKU }, price: 1 })).status).toBe(201);
  await new Ledger(new TenantDb(deps.db, tenant.tenantId)).apply({
    sku: SKU,
    locationId: origin,
    delta: 10,
    reason: 'restock',
    actor: 'test',
  });
});
afterAll(() => deps.close());

test('a transfer action with an over-long Idempotency-Key is a 4xx, not a 500', async () => {
  const created = await api.post('/inventory/transfers', {
    originId: origin,
    destinationId: dest,
    productsList: [{ sku: SKU, quantity: 1 }],
  });
  expect(created.status).toBe(201);
  const headers = { 'Idempotency-Key': 'k'.repeat(2000) };
  const approve = await api.post(`/inventory/transfers/${created.body.id}/approve`, undefined, { headers });
  expect({ status: approve.status, code: approve.body.code }).toEqual({ status: 400, code: 'bad-request' });
  expect((await api.post(`/inventory/transfers/${created.body.id}/approve`)).status).toBe(200);
  const receive = await api.post(`/inventory/transfers/${created.body.id}/receive`, undefined, { headers });
  expect({ status: receive.status, code: receive.body.code }).toEqual({ status: 400, code: 'bad-request' });
});

test('a stock PUT with an over-long Idempotency-Key is 400, and sets nothing', async () => {
  const headers = { 'Idempotency-Key': 'k'.repeat(6000) };
  const res = await api.put(`/inventory/location/${dest}/product/${SKU}`, { stock: 3 }, { headers });
  expect({ status: res.status, code: res.body.code }).toEqual({ status: 400, code: 'bad-request' });
  expect((await api.get(`/inventory/location/${dest}/product/${SKU}`)).body.onHand).toBe(0);
});

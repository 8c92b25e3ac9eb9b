import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { Ledger } from '../../shared/inventory/ledger';

/**
 * A balance past 2^31 - 1 reads as it is. A stock set accepts up to 1,000,000,000 and a transfer
 * line up to 1,000,000; nothing caps the balance the movements add up to. Before, the embedded
 * FerretDB added two 32-bit integers as Go int32 ($inc in params.go addNumbers) and wrapped: a
 * balance of 2,000,000,000 receiving 1,000,000,000 more read -1,294,967,296. MongoDB stores such
 * a sum as a 64-bit integer; the server build now does too (scripts/stack/servers.ts).
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
const P = `FIO${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-A`;
const Q = 1_000_000_000;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'ferret inc overflow');
  api = new ApiClient(t.key);
  tenantId = t.tenantId;
});
afterAll(() => deps.close());

test('a location holding 2e9 units that receives 1e9 more holds 3e9, not a negative balance', async () => {
  expect((await api.post('/products', { sku: SKU, title: { value: SKU }, price: 1 })).status).toBe(201);
  const dest = (await api.post('/locations', { name: `Dest ${P}`, type: 'location' })).body.id as string;
  expect((await api.put(`/inventory/location/${dest}/product/${SKU}`, { stock: Q })).status).toBe(200);
  // what a transfer's receive does for each line (transfer lines hold up to 1,000,000 units: 148
  // received transfers reach the same balance through the API; two ledger movements stand for them)
  const ledger = new Ledger(new TenantDb(deps.db, tenantId));
  for (let i = 0; i < 2; i++)
    await ledger.apply({ sku: SKU, locationId: dest, delta: Q, reason: 'restock', actor: 'test' });

  const level = await api.get(`/inventory/location/${dest}/product/${SKU}`);
  expect(level.status).toBe(200);
  expect(level.body.onHand).toBe(3 * Q);
  const item = await api.get(`/inventory/items/${SKU}`);
  expect(item.body.total).toBe(3 * Q);
});

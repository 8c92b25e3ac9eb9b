import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { Ledger } from '../../shared/inventory/ledger';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * A transfer changes balances by hand, so a SKU or a location an integration manages
 * (POST /inventory/handlers) is refused 403 forbidden/inventory-handler, as a stock PUT is: at
 * create, and again at receive for a handler made since. Nothing moves.
 */
let deps: TestDeps;
let api: ApiClient;
let origin: string;
let dest: string;
let ledger: Ledger;
const P = `THD${Date.now().toString(36).toUpperCase()}`;
const MANAGED = `${P}-ERP`;
const FREE = `${P}-FREE`;
const LATE = `${P}-LATE`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey(undefined, 'transfer handler');
  api = new ApiClient(tenant.key);
  ledger = new Ledger(new TenantDb(deps.db, tenant.tenantId));
  origin = systemLocationId(tenant.tenantId);
  const loc = await api.post('/locations', { name: `Store ${P}`, type: 'location' });
  expect(loc.status).toBe(201);
  dest = loc.body.id;
  for (const sku of [MANAGED, FREE, LATE]) {
    expect((await api.post('/products', { sku, title: { value: sku }, price: 1 })).status).toBe(201);
    await ledger.apply({ sku, locationId: origin, delta: 10, reason: 'restock', actor: 'test' });
  }
});
afterAll(() => deps.close());

test('a transfer of a SKU an integration manages is refused 403 forbidden/inventory-handler; nothing moves', async () => {
  const h = await api.post('/inventory/handlers', { name: 'ERP', type: 'erp', skus: [MANAGED] });
  expect(h.status).toBe(201);
  // control: a manual edit of it is refused
  const put = await api.put(`/inventory/location/${origin}/product/${MANAGED}`, { stock: 3 });
  expect({ status: put.status, code: put.body.code }).toEqual({ status: 403, code: 'forbidden/inventory-handler' });

  const refused = await transferAndReceive(MANAGED);
  expect(refused).toEqual({ status: 403, code: 'forbidden/inventory-handler' });
  expect([await ledger.onHand(MANAGED, origin), await ledger.onHand(MANAGED, dest)]).toEqual([10, 0]);
});

test('a transfer into a location an integration manages is refused 403 forbidden/inventory-handler; nothing moves', async () => {
  const h = await api.post('/inventory/handlers', { name: 'WMS', type: 'wms', locationIds: [dest] });
  expect(h.status).toBe(201);
  const put = await api.put(`/inventory/location/${dest}/product/${FREE}`, { stock: 3 });
  expect({ status: put.status, code: put.body.code }).toEqual({ status: 403, code: 'forbidden/inventory-handler' });

  const refused = await transferAndReceive(FREE);
  expect(refused).toEqual({ status: 403, code: 'forbidden/inventory-handler' });
  expect([await ledger.onHand(FREE, origin), await ledger.onHand(FREE, dest)]).toEqual([10, 0]);
});

test('a handler made after the transfer was approved: its receive is refused 403, nothing moves', async () => {
  // a destination no handler manages (the one above is managed by now)
  const other = (await api.post('/locations', { name: `Other ${P}`, type: 'location' })).body.id as string;
  const created = await api.post('/inventory/transfers', {
    originId: origin,
    destinationId: other,
    productsList: [{ sku: LATE, quantity: 4 }],
  });
  expect(created.status).toBe(201);
  expect((await api.post(`/inventory/transfers/${created.body.id}/approve`)).status).toBe(200);
  expect((await api.post('/inventory/handlers', { name: 'Late ERP', type: 'erp', skus: [LATE] })).status).toBe(201);
  const receive = await api.post(`/inventory/transfers/${created.body.id}/receive`);
  expect({ status: receive.status, code: receive.body.code }).toEqual({
    status: 403,
    code: 'forbidden/inventory-handler',
  });
  expect([await ledger.onHand(LATE, origin), await ledger.onHand(LATE, other)]).toEqual([10, 0]);
  expect((await api.get(`/inventory/transfers/${created.body.id}`)).body.status).toBe('approved');
});

/** Creates, approves and receives a transfer of 4 units; the first refusal, or the receive's answer. */
async function transferAndReceive(sku: string) {
  const created = await api.post('/inventory/transfers', {
    originId: origin,
    destinationId: dest,
    productsList: [{ sku, quantity: 4 }],
  });
  if (created.status !== 201) return { status: created.status, code: created.body.code };
  const approve = await api.post(`/inventory/transfers/${created.body.id}/approve`);
  if (approve.status !== 200) return { status: approve.status, code: approve.body.code };
  const receive = await api.post(`/inventory/transfers/${created.body.id}/receive`);
  return { status: receive.status, code: receive.body.code };
}

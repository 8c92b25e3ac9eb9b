import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { Ledger } from '../../shared/inventory/ledger';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * A transfer created while its destination is deleted: the delete marks the location before it
 * looks for open transfers, and the create reads both locations after it records the transfer,
 * so never do both succeed (a pending transfer to a location that is gone could never be received).
 */
let deps: TestDeps;
let api: ApiClient;
let origin: string;
const P = `LDT${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-A`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'location delete transfer race');
  api = new ApiClient(t.key);
  origin = systemLocationId(t.tenantId);
  expect((await api.post('/products', { sku: SKU, title: { value: 'x' }, price: 10 })).status).toBe(201);
  await new Ledger(new TenantDb(deps.db, t.tenantId)).apply({
    sku: SKU,
    locationId: origin,
    delta: 100,
    reason: 'restock',
    actor: 'test',
  });
});
afterAll(() => deps.close());

test('a transfer created racing its destination delete: never both succeed', async () => {
  const both: string[] = [];
  for (let i = 0; i < 16; i++) {
    const dest = (await api.post('/locations', { name: `Race ${P} ${i}`, type: 'location' })).body.id as string;
    const [created, del] = await Promise.all([
      api.post('/inventory/transfers', {
        originId: origin,
        destinationId: dest,
        productsList: [{ sku: SKU, quantity: 1 }],
      }),
      new Promise((r) => setTimeout(r, i % 4)).then(() => api.delete(`/locations/${dest}`)),
    ]);
    expect([created.status, del.status].filter((s) => ![200, 201, 400, 404, 409].includes(s))).toEqual([]);
    if (created.status === 201 && del.status === 200)
      both.push(`round ${i}: transfer ${created.body.id} to deleted ${dest}`);
    if (del.status === 200) {
      const listed = (await api.get('/inventory/transfers', { query: { status: 'pending' } })).body;
      const pendingTo = JSON.stringify(listed).includes(dest);
      if (pendingTo) both.push(`round ${i}: a pending transfer names deleted ${dest}`);
    }
  }
  expect(both).toEqual([]);
});

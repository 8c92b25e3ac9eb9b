import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * The listings of ledger balances (GET /inventory, /inventory/items, /inventory/location) show a
 * calculated bundle's row as its single read does: what its components make up, marked
 * calculated, not the balance its own SKU holds, which nothing sells from.
 */
let api: ApiClient;
let deps: TestDeps;
let A: string;
const P = `RBL${Date.now().toString(36).toUpperCase()}`;
const cup = `${P}-CUP`;
const set = `${P}-SET`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'bundle stock lists');
  api = new ApiClient(t.key);
  A = systemLocationId(t.tenantId);
  expect((await api.post('/products', { sku: cup, title: { value: cup }, price: 5 })).status).toBe(201);
  expect(
    (
      await api.post('/products', {
        sku: set,
        title: { value: 'Tea set' },
        price: 18,
        productType: 'bundle',
        bundleConfig: { components: [{ productSku: cup, quantity: 2 }] },
      })
    ).status,
  ).toBe(201);
  expect((await api.put(`/inventory/location/${A}/product/${cup}`, { stock: 4 })).status).toBe(200);
  expect((await api.put(`/inventory/location/${A}/product/${set}`, { stock: 99 })).status).toBe(200);
  // the single read: 4 cups make 2 sets
  expect((await api.get(`/inventory/items/${set}`)).body).toMatchObject({ total: 2, calculated: true });
});
afterAll(() => deps.close());

test('GET /inventory/items shows the calculated bundle as GET /inventory/items/{sku} does', async () => {
  const res = await api.get('/inventory/items?limit=200');
  expect(res.status).toBe(200);
  const row = (res.body.items as { sku: string; total: number }[]).find((i) => i.sku === set);
  expect(row?.total).toBe(2);
});

test('GET /inventory/location lists the calculated bundle at a location as its single read does', async () => {
  const res = await api.get(`/inventory/location?locationId=${A}&limit=200`);
  expect(res.status).toBe(200);
  const rows = (res.body.items ?? res.body.data ?? res.body) as { sku: string; onHand: number }[];
  expect(rows.find((i) => i.sku === set)).toMatchObject({ onHand: 2, calculated: true });
  const cupRow = rows.find((i) => i.sku === cup);
  expect(cupRow).toMatchObject({ onHand: 4 });
  expect(cupRow).not.toHaveProperty('calculated');
  const all = await api.get(`/inventory?sku=${set}`);
  expect(all.body.items).toEqual([expect.objectContaining({ sku: set, locationId: A, onHand: 2, calculated: true })]);
});

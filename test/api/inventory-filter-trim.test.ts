import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/** Inventory lists read a locationId (and a SKU) filter as every other path does: trimmed. */
let deps: TestDeps;
let api: ApiClient;
let loc: string;
const P = `IFT${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-A`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'inventory filter trim')).key);
  expect((await api.post('/products', { sku: SKU, title: { value: 'x' }, price: 10 })).status).toBe(201);
  loc = (await api.post('/locations', { name: `Trim ${P}`, type: 'location' })).body.id;
  expect((await api.put(`/inventory/location/${loc}/product/${SKU}`, { stock: 3 })).status).toBe(200);
  const adj = await api.post('/inventory/adjustments', { locationId: loc, sku: SKU, newQuantity: 2, reason: 'damage' });
  expect(adj.status).toBe(201);
  const count = await api.post('/inventory/counts', { name: 'Trim count', locationId: loc, countType: 'spot' });
  expect(count.status).toBe(201);
});
afterAll(() => deps.close());

test.each([
  ['/inventory', 'items'],
  ['/inventory/adjustments', 'adjustments'],
  ['/inventory/counts', 'counts'],
])('GET %s?locationId=" <id> " lists what the id lists', async (path, member) => {
  const exact = await api.get(path, { query: { locationId: loc } });
  const padded = await api.get(path, { query: { locationId: ` ${loc} ` } });
  expect(exact.status).toBe(200);
  expect((exact.body[member] as unknown[]).length).toBeGreaterThan(0);
  expect({ status: padded.status, rows: padded.body[member] }).toEqual({ status: 200, rows: exact.body[member] });
});

test('GET /inventory?sku=" <sku> " lists that SKU', async () => {
  const padded = await api.get('/inventory', { query: { sku: ` ${SKU.toLowerCase()} ` } });
  expect((padded.body.items as { sku: string }[]).map((i) => i.sku)).toEqual([SKU]);
});

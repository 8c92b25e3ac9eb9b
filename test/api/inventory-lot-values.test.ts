import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A valuation's lot values add up to its totalValue: under average cost three lots of 5/3 are
 * valued 1.67, 1.66 and 1.67 (each within a cent of its own rounding), not 1.67 three times.
 */
let deps: TestDeps;
let api: ApiClient;
let loc: string;
let productId: string;
const P = `AVG${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-A`;
const body = { sku: SKU, title: { value: 'x' }, price: 10, cost: 1 };

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'lot values add up');
  api = new ApiClient(t.key);
  loc = (await api.get('/locations')).body.locations[0].id;
  const p = await api.post('/products', body);
  expect(p.status).toBe(201);
  productId = p.body.id;
});
afterAll(() => deps.close());

async function receiveTo(newQuantity: number) {
  const a = await api.post('/inventory/adjustments', { locationId: loc, sku: SKU, newQuantity, reason: 'restock' });
  expect(a.status).toBe(201);
  expect((await api.post(`/inventory/adjustments/${a.body.id}/approve`)).status).toBe(200);
}

test('average: the lots’ values add up to totalValue', async () => {
  await receiveTo(1); // 1 unit at 1
  expect((await api.put(`/products/${productId}`, { ...body, cost: 2 })).status).toBe(200);
  await receiveTo(2); // 1 unit at 2
  await receiveTo(3); // 1 unit at 2   → average 5/3
  const v = await api.get(`/inventory/lots/sku/${SKU}/valuation`, { query: { locationId: loc, method: 'average' } });
  expect(v.status).toBe(200);
  expect(v.body.quantity).toBe(3);
  const sum = Math.round((v.body.lots as { value: number }[]).reduce((s, l) => s + l.value, 0) * 100) / 100;
  expect(sum).toBe(v.body.totalValue);
  expect(v.body.lots.map((l: { value: number }) => l.value)).toEqual([1.67, 1.66, 1.67]);
});

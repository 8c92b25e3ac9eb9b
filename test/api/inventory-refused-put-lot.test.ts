import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { locations } from '../../shared/locations/locations';

/**
 * A stock PUT taken back because its location was being deleted is no lot: it is not listed in
 * /inventory/lots and weighs nothing in a valuation.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let loc: string;
let productId: string;
const P = `IRL${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-A`;
const body = { sku: SKU, title: { value: 'x' }, price: 50 };

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'refused put lot');
  tenantId = t.tenantId;
  api = new ApiClient(t.key);
  const made = await api.post('/products', { ...body, cost: 20 });
  expect(made.status).toBe(201);
  productId = made.body.id;
  loc = (await api.post('/locations', { name: `Deciding ${P}`, type: 'location' })).body.id;
});
afterAll(() => deps.close());

const locs = () => new TenantDb(deps.db, tenantId).collection(locations);

test('a stock PUT refused (409) while a delete decided leaves no lot and no weight in the valuation', async () => {
  // a DELETE /locations/{id} is deciding: its mark is on the location
  await locs().updateById(loc, { $set: { deletingAt: new Date() } });
  const put = await api.put(`/inventory/location/${loc}/product/${SKU}`, { stock: 5 });
  expect(put.status).toBe(409);
  // ... and it refused (the location still held something else): the mark goes
  await locs().updateById(loc, { $unset: { deletingAt: '' } });
  expect((await api.get(`/inventory/location/${loc}/product/${SKU}`)).body.onHand).toBe(0);

  // a real receipt: 2 units at cost 20, through an approved adjustment (its cost is noted)
  const adj = await api.post('/inventory/adjustments', {
    locationId: loc,
    sku: SKU,
    newQuantity: 2,
    reason: 'restock',
  });
  expect((await api.post(`/inventory/adjustments/${adj.body.id}/approve`)).status).toBe(200);
  // the catalog cost changes later
  expect((await api.put(`/products/${productId}`, { ...body, cost: 100 })).status).toBe(200);

  const lots = await api.get('/inventory/lots', { query: { sku: SKU, locationId: loc } });
  const avg = await api.get(`/inventory/lots/sku/${SKU}/valuation`, { query: { locationId: loc, method: 'average' } });
  expect({
    lots: lots.body.lots.map((l: { reason: string; quantity: number }) => [l.reason, l.quantity]),
    valuation: { quantity: avg.body.quantity, unitCost: avg.body.unitCost, totalValue: avg.body.totalValue },
  }).toEqual({
    lots: [['restock', 2]],
    valuation: { quantity: 2, unitCost: 20, totalValue: 40 },
  });
});

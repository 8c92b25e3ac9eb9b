import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * A count whose SKU was deleted after it was counted (its balance was 0, so the product delete
 * is allowed) still completes: the other SKUs are corrected and the deleted one is listed in the
 * summary's `deleted`, uncorrected. Before, the complete answered 404 after correcting the others,
 * leaving the count `completing` for good.
 */
let deps: TestDeps;
let api: ApiClient;
let main: string;
const P = `RCDS${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey();
  api = new ApiClient(t.key);
  main = systemLocationId(t.tenantId);
});
afterAll(() => deps.close());

test('a count completes with a SKU deleted since it was counted, listing it as deleted', async () => {
  const mug = `${P}-MUG`;
  const gone = `${P}-GONE`;
  expect((await api.post('/products', { sku: mug, title: { value: 'Mug' }, price: 5 })).status).toBe(201);
  const made = await api.post('/products', { sku: gone, title: { value: 'Discontinued' }, price: 5 });
  expect(made.status).toBe(201);
  expect((await api.put(`/inventory/location/${main}/product/${mug}`, { stock: 10 })).status).toBe(200);

  const count = await api.post('/inventory/counts', { name: 'Shelf A', locationId: main, countType: 'cycle' });
  expect(count.status).toBe(201);
  const id = count.body.id;
  const items = await api.put(`/inventory/counts/${id}/items`, {
    countItems: [
      { sku: mug, countedQuantity: 7 },
      { sku: gone, countedQuantity: 3 },
    ],
  });
  expect(items.status).toBe(200);
  // the product held no stock (balance 0): its delete is allowed
  expect((await api.delete(`/products/${made.body.id}`)).status).toBe(200);

  const res = await api.post(`/inventory/counts/${id}/complete`);
  expect(res.status).toBe(200);
  expect(res.body.summary).toMatchObject({ itemsCounted: 2, discrepancies: 2, deleted: [gone] });
  expect(res.body.summary.adjustments).toHaveLength(1);
  const mugOnHand = (await api.get(`/inventory/location/${main}/product/${mug}`)).body.onHand;
  const status = (await api.get(`/inventory/counts/${id}`)).body.status;
  expect({ mugOnHand, status }).toEqual({ mugOnHand: 7, status: 'completed' });
});

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A manual set that confirms the balance after a count looked is the later word: completing the
 * count leaves the balance as set and lists the SKU as superseded.
 */
let deps: TestDeps;
let api: ApiClient;
let loc: string;
const P = `ICN${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-A`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'count noop set')).key);
  loc = (await api.get('/locations')).body.locations[0].id;
  expect((await api.post('/products', { sku: SKU, title: { value: 'x' }, price: 10 })).status).toBe(201);
  expect((await api.put(`/inventory/location/${loc}/product/${SKU}`, { stock: 10 })).status).toBe(200);
});
afterAll(() => deps.close());

test('a manual set to 10 after a count of 7 (balance 10) is the later word: completion leaves 10, SKU superseded', async () => {
  const count = await api.post('/inventory/counts', { name: 'shelf', locationId: loc, countType: 'spot' });
  expect(count.status).toBe(201);
  const items = await api.put(`/inventory/counts/${count.body.id}/items`, {
    countItems: [{ sku: SKU, countedQuantity: 7 }],
  });
  expect(items.status).toBe(200);
  await new Promise((r) => setTimeout(r, 20));
  // a recount at the shelf finds 10 after all: the stock is set to 10 by hand (it already is 10)
  const put = await api.put(`/inventory/location/${loc}/product/${SKU}`, { stock: 10 });
  expect(put.status).toBe(200);
  const done = await api.post(`/inventory/counts/${count.body.id}/complete`);
  expect(done.status).toBe(200);
  const onHand = (await api.get(`/inventory/location/${loc}/product/${SKU}`)).body.onHand;
  expect({ onHand, superseded: done.body.summary.superseded }).toEqual({ onHand: 10, superseded: [SKU] });
});

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * Lines of one SKU are merged into one transfer line, which is held to the 1,000,000-unit limit
 * of a line: 400 bad-request/invalid-items, nothing stored.
 */
let deps: TestDeps;
let api: ApiClient;
let main: string;
let dest: string;
const P = `TML${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-A`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'transfer merged limit');
  api = new ApiClient(t.key);
  main = (await api.get('/locations')).body.locations[0].id;
  dest = (await api.post('/locations', { name: `Dest ${P}`, type: 'location' })).body.id;
  expect((await api.post('/products', { sku: SKU, title: { value: 'x' }, price: 10 })).status).toBe(201);
});
afterAll(() => deps.close());

test('two lines of one SKU adding up to more than 1,000,000 units are refused', async () => {
  const res = await api.post('/inventory/transfers', {
    originId: main,
    destinationId: dest,
    productsList: [
      { sku: SKU, quantity: 1_000_000 },
      { sku: SKU.toLowerCase(), quantity: 1_000_000 },
    ],
  });
  expect(res.body.productsList).toBeUndefined();
  expect({ status: res.status, code: res.body.code }).toEqual({ status: 400, code: 'bad-request/invalid-items' });
});

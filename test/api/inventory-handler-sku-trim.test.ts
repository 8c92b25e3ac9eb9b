import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A handler's SKUs are stored as every inventory path names a SKU (trimmed, upper-case), so one
 * registered with spaces around it still refuses manual edits of that SKU.
 */
let deps: TestDeps;
let api: ApiClient;
let loc: string;
const P = `HSP${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-A`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'handler sku trim');
  api = new ApiClient(t.key);
  loc = (await api.get('/locations')).body.locations[0].id;
  expect((await api.post('/products', { sku: SKU, title: { value: 'x' }, price: 10 })).status).toBe(201);
});
afterAll(() => deps.close());

test('a handler registered with a padded SKU refuses manual edits of that SKU', async () => {
  const h = await api.post('/inventory/handlers', { name: 'ERP', type: 'erp', skus: [` ${SKU.toLowerCase()} `] });
  expect(h.status).toBe(201);
  const put = await api.put(`/inventory/location/${loc}/product/${SKU}`, { stock: 2 });
  expect({ status: put.status, code: put.body.code }).toEqual({ status: 403, code: 'forbidden/inventory-handler' });
});

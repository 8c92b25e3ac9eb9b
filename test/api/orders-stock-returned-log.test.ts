import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * Cancelling an accepted order records a `returned` stock_changed event listing the materials put
 * back, as the `taken` one lists what the accept consumed.
 */
let deps: TestDeps;
let api: ApiClient;
let A: string;
const P = `RVR${Date.now().toString(36).toUpperCase()}`;
beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'returned log');
  api = new ApiClient(t.key);
  A = systemLocationId(t.tenantId);
});
afterAll(() => deps.close());

test('the returned stock_changed event lists the materials put back, as the taken one lists them', async () => {
  const flour = `${P}-FLOUR`;
  expect(
    (
      await api.post('/products/materials', {
        sku: flour,
        title: 'Flour',
        baseUnit: { code: 'kg', name: 'kg', precision: 3 },
      })
    ).status,
  ).toBe(201);
  expect(
    (await api.post(`/products/materials/${flour}/stock/${A}`, { quantity: 5, lot: { costPerUnit: 2 } })).status,
  ).toBe(200);
  const bread = `${P}-BREAD`;
  const made = await api.post('/products', {
    sku: bread,
    title: { value: 'Bread' },
    price: 3,
    productType: 'service',
    billOfMaterials: {
      consumptionMode: 'on_sale',
      yield: { quantity: 1, unit: 'pza' },
      components: [{ materialSku: flour, quantity: 0.5, unit: 'kg' }],
    },
  });
  expect(made.status).toBe(201);
  const res = await api.post('/orders', {
    externalId: `${P}-1`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: bread, quantity: 2 }],
  });
  expect(res.status).toBe(201);
  const id = res.body.data._id;
  expect((await api.post(`/orders/${id}/accept`)).status).toBe(200);
  expect((await api.post(`/orders/${id}/cancel`, { reason: 'oven broke' })).status).toBe(200);
  expect((await api.get(`/products/materials/${flour}/stock/${A}`)).body.quantity).toBe(5);
  const log = (await api.get(`/orders/${id}/activity-log?limit=200`)).body.data as any[];
  const [taken, returned] = log.filter((e) => e.type === 'stock_changed').map((e) => e.details);
  expect(taken).toMatchObject({ effect: 'taken', materials: [{ sku: flour, quantity: 1, unit: 'kg' }] });
  // now: {effect: 'returned', locationId, sales: [], consumptionId} with no materials
  expect(returned).toMatchObject({ effect: 'returned', materials: [{ sku: flour, quantity: 1, unit: 'kg' }] });
});

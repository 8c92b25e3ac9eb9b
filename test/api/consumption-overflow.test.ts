import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * A requirement no stock can hold (a tiny yield and a large quantity, each within its schema) is
 * a 400 naming the quantity on every consumption route, and nothing is taken: never a 500, never a
 * `required: null` (Infinity).
 */
let deps: TestDeps;
let api: ApiClient;
let A: string;
const P = `CXO${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'consumption overflow');
  api = new ApiClient(t.key);
  A = systemLocationId(t.tenantId);
});
afterAll(() => deps.close());

test('a requirement beyond what a stock can hold: 400 naming quantity on estimate, check, consume and a BOM run; nothing taken', async () => {
  const material = `${P}-FLOUR`;
  expect(
    (
      await api.post('/products/materials', {
        sku: material,
        title: 'Flour',
        baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
        costingMethod: 'fifo',
      })
    ).status,
  ).toBe(201);
  expect(
    (await api.post(`/products/materials/${material}/stock/${A}`, { quantity: 1, lot: { costPerUnit: 1 } })).status,
  ).toBe(200);
  const product = `${P}-BREAD`;
  expect((await api.post('/products', { sku: product, title: { value: 'Bread' }, price: 10 })).status).toBe(201);
  const bom = await api.put(`/products/${product}/bom`, {
    consumptionMode: 'manual',
    yield: { quantity: 1e-300, unit: 'pza' },
    components: [{ materialSku: material, quantity: 1000, unit: 'kg' }],
  });
  expect(bom.status).toBe(200); // the BOM is accepted as valid input

  const body = { productSku: product, locationId: A, quantity: 1e12 }; // quantity within the route's maximum
  for (const path of ['estimate', 'check', 'consume']) {
    const res = await api.post(`/products/materials/consumption/${path}`, body);
    expect({ path, status: res.status, code: res.body.code, parameter: res.body.parameter }).toEqual({
      path,
      status: 400,
      code: 'bad-request',
      parameter: 'quantity',
    });
  }
  const run = await api.post(`/products/${product}/bom/consume`, {
    quantity: 1e12,
    referenceId: 'run-1',
    referenceType: 'production',
    locationId: A,
  });
  expect({ status: run.status, parameter: run.body.parameter }).toEqual({ status: 400, parameter: 'quantity' });
  const stock = await api.get(`/products/materials/${material}/stock/${A}`);
  expect(stock.body.quantity).toBe(1);
});

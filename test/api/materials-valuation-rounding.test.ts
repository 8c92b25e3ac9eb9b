import { ApiClient, type HttpResult } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * A FIFO/LIFO location's valuation is its lots' values summed exactly and rounded once, as a
 * consumption of them is costed: three 1 kg lots at 1.005 are worth 3.015 → 3.02 under every
 * costing method (rounding each lot first made FIFO say 3.03).
 */
let deps: TestDeps;
let api: ApiClient;
let A: string;
const P = `MV${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey(undefined, 'mat valuation valuation');
  api = new ApiClient(tenant.key);
  A = systemLocationId(tenant.tenantId);
});
afterAll(() => deps.close());

async function ok(res: Promise<HttpResult> | HttpResult, status = 200): Promise<HttpResult> {
  const r = await res;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text}`);
  return r;
}

async function threeLots(method: string): Promise<HttpResult> {
  const sku = `${P}-${method}-${++n}`.toUpperCase();
  await ok(
    api.post('/products/materials', {
      sku,
      title: 'Resin',
      baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
      costingMethod: method,
      stockAlerts: { minStock: 0, reorderPoint: 0, reorderQuantity: 0, alertEnabled: false },
    }),
    201,
  );
  for (const lotNumber of ['L1', 'L2', 'L3'])
    await ok(
      api.post(`/products/materials/${sku}/stock/${A}`, { quantity: 1, lot: { lotNumber, costPerUnit: 1.005 } }),
    );
  return ok(api.get(`/products/materials/${sku}/stock/${A}`));
}

test('3 lots of 1 kg at 1.005: worth 3.02 under average and under fifo alike', async () => {
  const average = await threeLots('average');
  const fifo = await threeLots('fifo');
  expect(average.body.valuation.totalValue).toBe(3.02);
  expect(fifo.body.valuation.totalValue).toBe(3.02);
});

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A rule reads `tenantId` as every product carries it (GET /products/{id} shows it; the flow
 * language declares it a server field, readable in conditions and never written): a condition on
 * it matches the tenant's products, and a copy from it writes the tenant id rather than clearing
 * the target as from an empty source.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let productId: string;
beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'flow server fields');
  api = new ApiClient(t.key);
  tenantId = t.tenantId;
  const p = await api.post('/products', { sku: 'SRV1', title: { value: 'One' }, price: 10, model: 'M-1' });
  expect(p.status).toBe(201);
  expect(p.body.tenantId).toBe(tenantId);
  productId = p.body.id;
});
afterAll(() => deps.close());

const FLOW = '/products/bulk/flow';

test('a condition on tenantId, which validate accepts, matches the tenant’s products', async () => {
  const flow = {
    selection: { all: true },
    rules: [
      {
        when: { field: 'tenantId', operator: 'equals', value: tenantId },
        actions: [{ type: 'add', field: 'tags', values: ['mine'] }],
      },
    ],
  };
  expect((await api.post(`${FLOW}/validate`, flow)).body).toEqual({ valid: true, errors: [] });
  const pv = await api.post(`${FLOW}/preview`, flow);
  expect(pv.status).toBe(200);
  expect(pv.body.counts).toMatchObject({ matched: 1, changed: 1 });
});

test('copy from tenantId does not erase the target as if the product had no tenantId', async () => {
  const flow = { selection: { all: true }, rules: [{ actions: [{ type: 'copy', field: 'model', from: 'tenantId' }] }] };
  expect((await api.post(`${FLOW}/validate`, flow)).body).toEqual({ valid: true, errors: [] });
  const ex = await api.post(`${FLOW}/execute`, flow);
  expect(ex.status).toBe(200);
  expect((await api.get(`/products/${productId}`)).body.model).toBe(tenantId);
});

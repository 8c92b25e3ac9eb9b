import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * The apply of a preview whose selection named an unknown SKU lists it as not-found, as the
 * preview did: the same counts and errors, answered 207.
 */
let deps: TestDeps;
let api: ApiClient;
beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'flow preview unknown skus');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

const FLOW = '/products/bulk/flow';

test('the apply of a preview that named an unknown SKU lists it as not-found (207), as the preview did', async () => {
  const created = await api.post('/products', { sku: 'UKA', title: { value: 'Known' }, price: 10 });
  expect(created.status).toBe(201);
  const flow = {
    selection: { skus: ['UKA', 'NO-SUCH-SKU'] },
    rules: [{ actions: [{ type: 'add', field: 'tags', values: ['x'] }] }],
  };
  const notFound = { productId: null, sku: 'NO-SUCH-SKU', code: 'not-found', message: expect.any(String) };

  const pv = await api.post(`${FLOW}/preview`, flow);
  expect(pv.status).toBe(200);
  expect(pv.body.counts).toEqual({ matched: 2, changed: 1, unchanged: 0, invalid: 0, failed: 1 });
  expect(pv.body.errors).toEqual([notFound]);

  const ex = await api.post(`${FLOW}/execute`, { previewId: pv.body.jobId });
  expect(ex.status).toBe(207);
  expect(ex.body.counts).toEqual(pv.body.counts);
  expect(ex.body.errors).toEqual([notFound]);
  expect((await api.get(`/products/${created.body.id}`)).body.tags).toEqual(['x']);
});

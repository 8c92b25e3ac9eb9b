import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * An apply by previewId sent together with the previewed flow is the previewed edit when its
 * selection names the same SKUs in another order or case (they select the same products) and
 * when only its name (a label) differs: the preview is applied, not refused preview-mismatch.
 */
let deps: TestDeps;
let api: ApiClient;
beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'flow preview selection');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

const FLOW = '/products/bulk/flow';

test('the previewed flow sent with its previewId, SKUs reordered and lower-cased, applies the preview (not 409)', async () => {
  const ids: Record<string, string> = {};
  for (const [sku, price] of [
    ['SELA', 10],
    ['SELB', 20],
  ] as const) {
    const res = await api.post('/products', { sku, title: { value: sku }, price });
    expect(res.status).toBe(201);
    ids[sku] = res.body.id;
  }
  const rules = [{ actions: [{ type: 'add', field: 'tags', values: ['promo'] }] }];
  const pv = await api.post(`${FLOW}/preview`, { selection: { skus: ['SELA', 'SELB'] }, rules });
  expect(pv.status).toBe(200);
  expect(pv.body.counts).toMatchObject({ matched: 2, changed: 2 });

  // the same two products, named in another order and case
  const ex = await api.post(`${FLOW}/execute`, {
    selection: { skus: ['selb', 'sela'] },
    rules,
    previewId: pv.body.jobId,
  });
  expect({ status: ex.status, code: ex.body.code }).toEqual({ status: 200, code: undefined });
  expect(ex.body).toMatchObject({ mode: 'apply', status: 'completed', previewId: pv.body.jobId });
  for (const id of Object.values(ids)) expect((await api.get(`/products/${id}`)).body.tags).toEqual(['promo']);
});

test('the previewed flow sent with another name applies the preview; other rules are 409 preview-mismatch', async () => {
  const res = await api.post('/products', { sku: 'SELC', title: { value: 'SELC' }, price: 5 });
  expect(res.status).toBe(201);
  const rules = [{ actions: [{ type: 'add', field: 'tags', values: ['named'] }] }];
  const pv = await api.post(`${FLOW}/preview`, { name: 'Monday promo', selection: { skus: ['SELC'] }, rules });
  expect(pv.status).toBe(200);
  const other = await api.post(`${FLOW}/execute`, {
    selection: { skus: ['SELC'] },
    rules: [{ actions: [{ type: 'add', field: 'tags', values: ['other'] }] }],
    previewId: pv.body.jobId,
  });
  expect([other.status, other.body.code]).toEqual([409, 'preview-mismatch']);
  const ex = await api.post(`${FLOW}/execute`, {
    name: 'Promo of Monday',
    selection: { skus: ['SELC'] },
    rules,
    previewId: pv.body.jobId,
  });
  expect(ex.status).toBe(200);
  expect((await api.get(`/products/${res.body.id}`)).body.tags).toEqual(['named']);
});

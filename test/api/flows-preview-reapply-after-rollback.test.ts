import { ApiClient, type HttpResult } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A preview is applied once: applying it again answers the first run (a retry is safe), unless
 * that run was rolled back since, when it is 409 conflict naming the job and its operation
 * (preview again to apply anew) and nothing is written. Before, it answered 200 with the first
 * run's `counts.changed: 2` and the id of an operation already rolled back, while a read showed
 * neither product changed.
 */
let deps: TestDeps;
beforeAll(async () => {
  deps = await TestDeps.open();
});
afterAll(() => deps.close());

function must(res: HttpResult, status: number, what: string): any {
  if (res.status !== status) throw new Error(`${what} → ${res.status} ${res.text}`);
  return res.body;
}

async function rollbackEnded(api: ApiClient, operationId: string): Promise<any> {
  for (let i = 0; i < 300; i++) {
    const s = await api.get(`/products/bulk/operations/${operationId}/rollback`);
    if (s.body.status === 'completed' || s.body.status === 'failed') return s.body;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('rollback did not end');
}

test('applying a preview again after its apply was rolled back does not answer "changed" while writing nothing', async () => {
  const t = await deps.tenantWithKey();
  const api = new ApiClient(t.key);
  const a = must(await api.post('/products', { sku: 'RVA', title: { value: 'A' }, price: 10 }), 201, 'create');
  const b = must(await api.post('/products', { sku: 'RVB', title: { value: 'B' }, price: 20 }), 201, 'create');
  const preview = must(
    await api.post('/products/bulk/flow/preview', {
      selection: { skus: ['RVA', 'RVB'] },
      rules: [{ actions: [{ type: 'add', field: 'tags', values: ['promo'] }] }],
    }),
    200,
    'preview',
  );
  const first = must(await api.post('/products/bulk/flow/execute', { previewId: preview.jobId }), 200, 'apply');
  expect(first.counts.changed).toBe(2);
  must(await api.post(`/products/bulk/operations/${first.operationId}/rollback`), 202, 'rollback');
  expect(await rollbackEnded(api, first.operationId)).toMatchObject({ status: 'completed', success: true });
  expect((await api.get(`/products/${a.id}`)).body.tags).toEqual([]);

  // the client applies the (still valid, < 24 h) preview again
  const again = await api.post('/products/bulk/flow/execute', { previewId: preview.jobId });
  const tagsA = (await api.get(`/products/${a.id}`)).body.tags;
  const tagsB = (await api.get(`/products/${b.id}`)).body.tags;
  expect(again.status).toBe(409);
  expect(again.body).toMatchObject({ code: 'conflict', details: { operationId: first.operationId } });
  expect(tagsA).toEqual([]);
  expect(tagsB).toEqual([]);
});

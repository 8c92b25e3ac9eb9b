import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { FINISHED_JOB_STATUSES, type JobStatus } from '../../shared/jobs/collection';

/**
 * An async import that changes nothing (every row skipped) records no bulk operation, as the
 * sync import does: its status names no operationId and the history lists no failed import.
 */
let deps: TestDeps;
let api: ApiClient;
beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'async no-op import')).key);
});
afterAll(() => deps.close());

async function upload(content: string): Promise<string> {
  const res = await api.post('/products/bulk/csv/upload-url');
  const form = new FormData();
  for (const [k, v] of Object.entries(res.body.fields as Record<string, string>)) form.append(k, v);
  form.append('file', new Blob([content]), 'products.csv');
  expect((await fetch(res.body.url, { method: 'POST', body: form })).status).toBeLessThan(300);
  return res.body.s3Key;
}

async function finished(jobId: string) {
  for (let i = 0; i < 300; i++) {
    const res = await api.get(`/products/bulk/csv/import/${jobId}`);
    if (FINISHED_JOB_STATUSES.includes(res.body.status as JobStatus)) return res.body;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`job ${jobId} did not finish`);
}

test('export then async import of the same file: completed, all skipped, no operation in the history', async () => {
  const sku = `NOOP${Date.now().toString(36).toUpperCase()}`;
  expect((await api.post('/products', { sku, title: { value: 'Same' }, price: 3 })).status).toBe(201);
  const exported = await api.post('/products/export-csv', {
    format: 'native',
    selection: 'selected',
    productIds: [sku],
  });
  expect(exported.status).toBe(200);

  // the sync import of this file: nothing changed, no operation
  const sync = await api.post('/products/bulk/csv/import', { content: exported.text });
  expect(sync.body).toMatchObject({ skipped: 1, updated: 0, operationId: null });

  const started = await api.post('/products/bulk/csv/import', { s3Key: await upload(exported.text) });
  expect(started.status).toBe(202);
  const status = await finished(started.body.jobId);
  expect(status).toMatchObject({ status: 'completed', skipped: 1, updated: 0, created: 0, failed: 0 });
  expect(status.operationId).toBeNull();

  const history = await api.get('/products/bulk/operations', { query: { type: 'csv-import', limit: 200 } });
  expect(history.status).toBe(200);
  const failedImports = history.body.operations.filter((op: { status: string }) => op.status === 'failed');
  expect(failedImports).toEqual([]);
});

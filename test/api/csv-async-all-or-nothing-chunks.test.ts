import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { toCsvText } from '../../shared/csv/parse';
import { ASYNC_LIMITS } from '../../shared/csv/limits';
import { FINISHED_JOB_STATUSES, type JobStatus } from '../../shared/jobs/collection';

/**
 * skipErrorRows false on an async import whose only bad row is a SKU the file gives to two
 * products that fall in different chunks: the dry pass claims every SKU for the job, so the clash
 * is found before anything is written (one failed row, nothing written).
 */
let deps: TestDeps;
let api: ApiClient;
beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'async all or nothing')).key);
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

test('a SKU given to two products in two chunks, skipErrorRows false: one failed row and nothing written', async () => {
  const n = ASYNC_LIMITS.chunkSize + 1; // the second holder of the SKU alone in the second chunk
  const tag = `AON${Date.now().toString(36).toUpperCase()}`;
  const dup = `${tag}-SKU`;
  const rows = Array.from({ length: n }, (_, i) => ({
    Handle: `${tag.toLowerCase()}-h${i}`,
    Title: `Product ${i}`,
    'Variant SKU': i === 0 || i === n - 1 ? dup : `${tag}-${i}`,
    'Variant Price': '5',
  }));
  const s3Key = await upload(toCsvText(['Handle', 'Title', 'Variant SKU', 'Variant Price'], rows));
  const started = await api.post('/products/bulk/csv/import', {
    s3Key,
    config: { format: 'shopify', createIfNotExists: true, skipErrorRows: false },
  });
  expect(started.status).toBe(202);
  let job: Record<string, unknown> = {};
  for (let i = 0; i < 600; i++) {
    job = (await api.get(`/products/bulk/csv/import/${started.body.jobId}`)).body;
    if (FINISHED_JOB_STATUSES.includes(job.status as JobStatus)) break;
    await new Promise((r) => setTimeout(r, 300));
  }
  expect(job).toMatchObject({ status: 'completed', created: 0, failed: 1 });
  expect((await api.get('/products/count')).body.count).toBe(0);
});

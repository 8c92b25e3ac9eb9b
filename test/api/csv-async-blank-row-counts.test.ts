import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { FINISHED_JOB_STATUSES, type JobStatus } from '../../shared/jobs/collection';

let deps: TestDeps;
beforeAll(async () => {
  deps = await TestDeps.open();
});
afterAll(() => deps.close());

let n = 0;
const P = () => `RC${Date.now().toString(36).toUpperCase()}${++n}`;

async function upload(api: ApiClient, content: string): Promise<string> {
  const res = await api.post('/products/bulk/csv/upload-url');
  expect(res.status).toBe(200);
  const form = new FormData();
  for (const [name, value] of Object.entries(res.body.fields as Record<string, string>)) form.append(name, value);
  form.append('file', new Blob([content]), 'products.csv');
  const put = await fetch(res.body.url, { method: 'POST', body: form });
  expect(put.status).toBeLessThan(300);
  return res.body.s3Key;
}

async function finished(api: ApiClient, jobId: string) {
  for (let i = 0; i < 300; i++) {
    const res = await api.get(`/products/bulk/csv/import/${jobId}`);
    expect(res.status).toBe(200);
    if (FINISHED_JOB_STATUSES.includes(res.body.status as JobStatus)) return res.body;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`job ${jobId} did not finish`);
}

/**
 * The same file (two good rows, a spreadsheet's row of empty cells, one row with a bad price)
 * imported with skipErrorRows false, sync and async: 3 rows processed, 1 failed, 2 skipped in
 * both (the empty row makes nothing and is counted nowhere, as with skipErrorRows true; spec
 * "Import job status" / docs/csv.md "Counts are in rows").
 */
test('async skipErrorRows false counts a blank row as the sync import does (not as skipped)', async () => {
  const api = new ApiClient((await deps.tenantWithKey(undefined, 'csv2 async counts')).key);
  const [a, b, c] = [P(), P(), P()];
  const content = `sku,title,price\r\n${a},A,10\r\n,,\r\n${b},B,11\r\n${c},C,abc\r\n`;

  const sync = await api.post('/products/bulk/csv/import', {
    content,
    createIfNotExists: true,
    skipErrorRows: false,
  });
  expect(sync.body.errors).toHaveLength(1);

  const api2 = new ApiClient((await deps.tenantWithKey(undefined, 'csv2 async counts 2')).key);
  const s3Key = await upload(api2, content);
  const started = await api2.post('/products/bulk/csv/import', {
    s3Key,
    config: { createIfNotExists: true, skipErrorRows: false },
  });
  expect(started.status).toBe(202);
  const job = await finished(api2, started.body.jobId);
  expect({
    processed: job.processedRows,
    created: job.created,
    updated: job.updated,
    skipped: job.skipped,
    failed: job.failed,
  }).toEqual({
    processed: sync.body.totalProcessed,
    created: sync.body.created,
    updated: sync.body.updated,
    skipped: sync.body.skipped,
    failed: sync.body.errors.length,
  });
});

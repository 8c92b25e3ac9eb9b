import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { toCsvText } from '../../shared/csv/parse';
import { ASYNC_LIMITS } from '../../shared/csv/limits';
import { FINISHED_JOB_STATUSES, type JobStatus } from '../../shared/jobs/collection';
import { TenantDb } from '../../shared/db/tenant-db';
import { bulkOperationItems } from '../../shared/bulk/operations';
import { products } from '../../shared/products/collections';

/**
 * An async import whose file gives one SKU to two products (Shopify allows a SKU twice), the
 * second in a later chunk than the first: one product's rows fail, the other is left as its own
 * rows made it (not updated by the other's), and a rollback removes everything the import created.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey();
  api = new ApiClient(t.key);
  tenantId = t.tenantId;
});
afterAll(() => deps.close());

async function upload(content: string): Promise<string> {
  const res = await api.post('/products/bulk/csv/upload-url');
  expect(res.status).toBe(200);
  const form = new FormData();
  for (const [name, value] of Object.entries(res.body.fields as Record<string, string>)) form.append(name, value);
  form.append('file', new Blob([content]), 'products.csv');
  expect((await fetch(res.body.url, { method: 'POST', body: form })).status).toBeLessThan(300);
  return res.body.s3Key;
}

async function until(url: string, done: (b: Record<string, unknown>) => boolean) {
  for (let i = 0; i < 1000; i++) {
    const res = await api.get(url);
    if (done(res.body)) return res.body;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${url} never ended`);
}

test('a SKU given to two products in two chunks fails one of them; the rollback removes all', async () => {
  const n = ASYNC_LIMITS.chunkSize + 1; // the second product alone in the second chunk
  const tag = `DUP${Date.now().toString(36).toUpperCase()}`;
  const dup = `${tag}-SKU`;
  const rows = Array.from({ length: n }, (_, i) => ({
    Handle: `${tag.toLowerCase()}-h${i}`,
    Title: i === 0 ? 'First handle' : i === n - 1 ? 'Second handle' : `Product ${i}`,
    'Variant SKU': i === 0 || i === n - 1 ? dup : `${tag}-${i}`,
    'Variant Price': i === n - 1 ? '7' : '5',
  }));
  const s3Key = await upload(toCsvText(['Handle', 'Title', 'Variant SKU', 'Variant Price'], rows));
  const started = await api.post('/products/bulk/csv/import', {
    s3Key,
    config: { format: 'shopify', createIfNotExists: true, skipErrorRows: true },
  });
  expect(started.status).toBe(202);
  const job = await until(`/products/bulk/csv/import/${started.body.jobId}`, (b) =>
    FINISHED_JOB_STATUSES.includes(b.status as JobStatus),
  );
  expect(job).toMatchObject({ status: 'completed', created: n - 1, updated: 0, failed: 1 });
  const tenantDb = new TenantDb(deps.db, tenantId);
  const docs = await tenantDb.collection(products).find({ sku: dup }).toArray();
  expect(docs).toHaveLength(1);
  // whichever chunk wrote first keeps the SKU (two chunks run at once), with its own rows' values
  const kept = docs[0].title.value === 'First handle' ? { price: 5 } : { title: { value: 'Second handle' }, price: 7 };
  expect(docs[0]).toMatchObject({ ...kept, version: 1 });
  const items = await tenantDb
    .collection(bulkOperationItems)
    .find({ operationId: job.operationId as string, sku: dup })
    .toArray();
  expect(items.map((i) => i.action)).toEqual(['created']);

  const url = `/products/bulk/operations/${job.operationId}/rollback`;
  expect([200, 202]).toContain((await api.post(url)).status);
  const rolled = await until(url, (b) => ['completed', 'failed'].includes(b.status as string));
  expect(rolled).toMatchObject({ status: 'completed' });
  expect(await tenantDb.collection(products).countDocuments({ sku: { $regex: `^${tag}-` } })).toBe(0);
});

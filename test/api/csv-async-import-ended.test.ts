import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';
import { jobs } from '../../shared/jobs/collection';
import { bulkOperationItems } from '../../shared/bulk/operations';
import { TenantDb } from '../../shared/db/tenant-db';

/**
 * An async import whose job ended failed after writing products (its workflow terminated, or an
 * activity failed past its retries) has its operation closed with what it recorded, so the
 * products it wrote can be rolled back.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantDb: TenantDb;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'async import ended');
  api = new ApiClient(t.key);
  tenantDb = new TenantDb(deps.db, t.tenantId);
});
afterAll(() => deps.close());

const sku = () => `AIEN${Date.now().toString(36).toUpperCase()}${++n}`;
const csv = (rows: Record<string, string | number>[]) =>
  toCsvText(
    nativeLayout.columns,
    rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, String(v)]))),
  );

async function upload(content: string): Promise<string> {
  const res = await api.post('/products/bulk/csv/upload-url');
  const form = new FormData();
  for (const [name, value] of Object.entries(res.body.fields as Record<string, string>)) form.append(name, value);
  form.append('file', new Blob([content]), 'products.csv');
  expect((await fetch(res.body.url, { method: 'POST', body: form })).status).toBeLessThan(300);
  return res.body.s3Key;
}

test('a failed async import that wrote products can be rolled back', async () => {
  const rows = Array.from({ length: 4000 }, () => ({ sku: sku(), title: 'x', price: 1 }));
  const started = await api.post('/products/bulk/csv/import', {
    s3Key: await upload(csv(rows)),
    config: { createIfNotExists: true },
  });
  expect(started.status).toBe(202);
  const jobId = started.body.jobId as string;
  const operationId = `bop_${jobId}`;
  // wait until a chunk has written products, then the operator terminates the workflow
  for (let i = 0; i < 600; i++) {
    if ((await tenantDb.collection(bulkOperationItems).countDocuments({ operationId })) >= 500) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const record = await tenantDb.collection(jobs).findOne({ _id: jobId });
  await deps.temporal.workflow.getHandle(record!.workflowId).terminate('operator: stuck');
  // a chunk in flight notices at its next heartbeat
  await new Promise((r) => setTimeout(r, 3000));
  const status = (await api.get(`/products/bulk/csv/import/${jobId}`)).body;
  expect(status.status).toBe('failed');
  const written = await tenantDb.collection(bulkOperationItems).countDocuments({ operationId });
  expect(written).toBeGreaterThan(0);
  expect(written).toBeLessThan(rows.length);

  const op = await api.get(`/products/bulk/operations/${operationId}`);
  expect(op.status).toBe(200);
  expect({ status: op.body.status, canRollback: op.body.canRollback }).toEqual({
    status: 'completed',
    canRollback: true,
  });
  expect((await api.post(`/products/bulk/operations/${operationId}/rollback`)).status).toBe(202);
  // the rollback deletes the products the operation recorded
  let rb = await api.get(`/products/bulk/operations/${operationId}/rollback`);
  for (let i = 0; i < 600 && rb.body.status !== 'completed' && rb.body.status !== 'failed'; i++) {
    await new Promise((r) => setTimeout(r, 200));
    rb = await api.get(`/products/bulk/operations/${operationId}/rollback`);
  }
  expect(rb.body.status).toBe('completed');
  expect(rb.body.deleted).toBeGreaterThan(0);
});

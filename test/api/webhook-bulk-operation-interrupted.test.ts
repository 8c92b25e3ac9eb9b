import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { WebhookReceiver } from '../helpers/webhook-receiver';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';
import { jobs } from '../../shared/jobs/collection';
import { bulkOperationItems } from '../../shared/bulk/operations';
import { TenantDb } from '../../shared/db/tenant-db';

/**
 * Every bulk operation that ends records bulk_operation.completed once, also one closed when next
 * read because the job that ran it stopped (an async import whose workflow was terminated: the
 * operation ends completed, error interrupted, the products it wrote counted). Before, only
 * BulkOperations.finish recorded it, so such an import was never announced, and its rollback's
 * event arrived at sequence 2 with no sequence 1 before it.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let tenantDb: TenantDb;
let receiver: WebhookReceiver;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'review interrupted op announced');
  tenantId = t.tenantId;
  api = new ApiClient(t.key);
  tenantDb = new TenantDb(deps.db, t.tenantId);
  receiver = await new WebhookReceiver().start();
  const ep = await api.post('/webhooks', { url: receiver.url, eventTypes: ['*'] });
  expect(ep.status).toBe(201);
});
afterAll(async () => {
  await receiver?.close();
  await deps.close();
});

const sku = () => `RGBI${Date.now().toString(36).toUpperCase()}${++n}`;
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

/** Events recorded for the operation, in the outbox or already fanned out. */
async function eventsAbout(id: string): Promise<string[]> {
  const filter = { tenantId, 'payload.data.id': id };
  const out = await deps.db.collection('webhook_outbox').find(filter).toArray();
  const done = await deps.db.collection('webhook_events').find(filter).toArray();
  return [...new Set([...out, ...done].map((e) => `${e.type}#${e.payload.data.sequence}`))].sort();
}

test('control: a sync import operation is announced, and found by this query', async () => {
  const res = await api.post('/products/bulk/csv/import', {
    content: csv([{ sku: sku(), title: 'x', price: 1 }]),
    createIfNotExists: true,
  });
  expect(res.status).toBe(200);
  await new Promise((r) => setTimeout(r, 1000));
  expect(await eventsAbout(res.body.operationId)).toEqual(['bulk_operation.completed#1']);
});

test('an async import operation closed as interrupted is announced by bulk_operation.completed', async () => {
  const rows = Array.from({ length: 4000 }, () => ({ sku: sku(), title: 'x', price: 1 }));
  const started = await api.post('/products/bulk/csv/import', {
    s3Key: await upload(csv(rows)),
    config: { createIfNotExists: true },
  });
  expect(started.status).toBe(202);
  const jobId = started.body.jobId as string;
  const operationId = `bop_${jobId}`;
  for (let i = 0; i < 600; i++) {
    if ((await tenantDb.collection(bulkOperationItems).countDocuments({ operationId })) >= 300) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const record = await tenantDb.collection(jobs).findOne({ _id: jobId });
  await deps.temporal.workflow.getHandle(record!.workflowId).terminate('operator: stuck');
  await new Promise((r) => setTimeout(r, 3000));
  expect((await api.get(`/products/bulk/csv/import/${jobId}`)).body.status).toBe('failed');

  const op = await api.get(`/products/bulk/operations/${operationId}`);
  expect({ status: op.body.status, error: op.body.error?.code }).toEqual({ status: 'completed', error: 'interrupted' });
  expect(op.body.counts.created).toBeGreaterThan(0);
  await new Promise((r) => setTimeout(r, 3000));
  // now: [] — the operation ended (completed, with products created) and nothing announces it
  expect(await eventsAbout(operationId)).toEqual(['bulk_operation.completed#1']);
});

import { DeleteObjectCommand, GetObjectCommand, ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import type { WorkflowHandle } from '@temporalio/client';
import { ObjectId } from 'mongodb';
import { TenantDb } from '../../shared/db/tenant-db';
import { Jobs } from '../../shared/jobs/jobs';
import { jobs } from '../../shared/jobs/collection';
import { Catalog } from '../../shared/products/catalog';
import { parseCsvText } from '../../shared/csv/parse';
import { exportObjectKey } from '../../shared/csv/uploads';
import { csvExport } from '../../shared/csv/messages';
import { workflowHandle } from '../../shared/temporal/workflows';
import { waitFor, type Proc } from '../../scripts/stack/process';
import { TestDeps } from '../helpers/stack';
import { startWorker } from '../helpers/worker';

/**
 * An async export of a catalog large enough to take a while, with the worker killed (SIGKILL)
 * in the middle of the stream, and again in the middle of the retried stream; a third worker
 * finishes it. The job completes and its file has every product exactly once (a retry starts the
 * file over under the same key; the killed attempts' multipart uploads are not left open).
 * Runs its own workers on its own task queue, over its own database.
 *
 * "Mid-stream" is told by the object store: the attempt has opened its multipart upload (its
 * first 5 MiB part is written) and has not finished. Products carry a long description so the
 * file is several parts long, and a kill lands well inside it whatever the machine's speed.
 */
const PRODUCTS = Number(process.env.EXPORT_KILL_PRODUCTS ?? 4000);
const VARIANTS = 3;
const DATABASE = 'export_kill_test';
jest.setTimeout(900_000);

let deps: TestDeps;
beforeAll(async () => {
  deps = await TestDeps.open({ database: DATABASE });
});
afterAll(() => deps.close());

const worker = (taskQueue: string, name: string): Proc => startWorker(taskQueue, name, DATABASE);

/** The attempt the export activity is at, as the server sees it (null when it is not pending). */
async function exportAttempt(handle: WorkflowHandle): Promise<number | null> {
  const pending = (await handle.describe()).raw.pendingActivities ?? [];
  return pending.find((a) => a.activityType?.name === 'exportCsv')?.attempt ?? null;
}

/** The attempt the export activity ended with, as the history records it. */
async function finalExportAttempt(handle: WorkflowHandle): Promise<number> {
  const events = (await handle.fetchHistory()).events ?? [];
  const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'exportCsv');
  const started = events.find(
    (e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled?.eventId),
  );
  return Number(started?.activityTaskStartedEventAttributes?.attempt);
}

test(`an async export of ${PRODUCTS} products survives a worker SIGKILLed mid-stream, twice`, async () => {
  const taskQueue = `export-kill-${Date.now()}`;
  const { tenantId } = await deps.tenantWithKey();
  const tenantDb = new TenantDb(deps.db, tenantId);

  // the catalog, stored directly (an import would take longer than the export under test)
  const catalog = new Catalog(tenantDb);
  const skus: string[] = [];
  for (let from = 0; from < PRODUCTS; from += 500) {
    const batch = [];
    for (let i = from; i < Math.min(from + 500, PRODUCTS); i++) {
      const sku = `X${String(i).padStart(6, '0')}`;
      skus.push(sku);
      batch.push({
        product: await catalog.prepare({
          sku,
          title: { value: `Exported product ${i}` },
          description: { value: `<p>${'A product worth exporting, at length. '.repeat(50)}</p>` },
          price: 10 + (i % 50),
          tags: ['kill', `t${i % 7}`],
          options: [{ id: 'size', name: 'Size', values: ['S', 'M', 'L'].slice(0, VARIANTS) }],
          variants: ['S', 'M', 'L'].slice(0, VARIANTS).map((size, v) => ({
            sku: `${sku}-${size}`,
            title: { value: size },
            price: 10 + v,
            position: v,
            options: [{ id: 'size', name: 'Size', value: size }],
          })),
        }),
        _id: new ObjectId(),
      });
    }
    await catalog.insertMany(batch);
  }

  const jobsOnQueue = new Jobs(deps.temporal, taskQueue);
  let current = worker(taskQueue, 'worker-export-kill-1');
  const { job } = await jobsOnQueue.start(tenantDb, {
    type: 'csv-export',
    prefix: 'csvexp',
    workflow: csvExport,
    workflowInput: (jobId) => ({ tenantId, jobId, format: 'native', selection: 'all' }),
  });
  const handle = workflowHandle(deps.temporal, csvExport, job.workflowId);
  const key = exportObjectKey(tenantId, job._id);
  const openUploads = async () =>
    (
      (await deps.s3.send(new ListMultipartUploadsCommand({ Bucket: deps.config.s3.bucket, Prefix: key }))).Uploads ??
      []
    ).flatMap((u) => (u.Key === key && u.UploadId ? [u.UploadId] : []));
  const written = async () => {
    const record = await tenantDb.collection(jobs).findOne({ _id: job._id });
    return Number((record?.result as { processedRows?: number } | null)?.processedRows ?? 0);
  };

  // 1. mid-stream: the first attempt's upload is open
  await waitFor('the first attempt streaming', async () => (await openUploads()).length > 0, {
    timeoutMs: 600_000,
    proc: current,
  });
  current.child.kill('SIGKILL');
  await current.exited;
  const firstUploads = await openUploads();
  expect(await written()).toBeLessThan(PRODUCTS);
  current = worker(taskQueue, 'worker-export-kill-2');

  // 2. mid-stream again: the second attempt has opened an upload of its own
  await waitFor(
    'the second attempt streaming',
    async () => (await openUploads()).some((id) => !firstUploads.includes(id)),
    { timeoutMs: 600_000, proc: current },
  );
  current.child.kill('SIGKILL');
  await current.exited;
  expect(await exportAttempt(handle)).toBe(2);
  expect(await written()).toBeLessThan(PRODUCTS);
  current = worker(taskQueue, 'worker-export-kill-3');

  try {
    const result = await handle.result();
    expect(result).toMatchObject({
      key,
      count: PRODUCTS,
      totalRows: PRODUCTS,
      processedRows: PRODUCTS,
      rows: PRODUCTS * VARIANTS,
    });
    expect(await tenantDb.collection(jobs).findOne({ _id: job._id })).toMatchObject({
      status: 'completed',
      result: { count: PRODUCTS },
    });
    // the file: every product exactly once, each with its variants, in SKU order
    const object = await deps.s3.send(new GetObjectCommand({ Bucket: deps.config.s3.bucket, Key: result.key }));
    const { records } = parseCsvText(await object.Body!.transformToString());
    expect(records).toHaveLength(PRODUCTS * VARIANTS);
    const perProduct = new Map<string, number>();
    for (const r of records) perProduct.set(r.values.sku, (perProduct.get(r.values.sku) ?? 0) + 1);
    expect([...perProduct.keys()]).toEqual(skus);
    expect([...perProduct.values()].every((n) => n === VARIANTS)).toBe(true);
    // no upload of the killed attempts is left open
    const open = await deps.s3.send(
      new ListMultipartUploadsCommand({ Bucket: deps.config.s3.bucket, Prefix: result.key }),
    );
    expect(open.Uploads ?? []).toEqual([]);
    // the export ran three times: each kill cut an attempt short
    expect(await finalExportAttempt(handle)).toBe(3);
  } finally {
    await current.stop();
    // the file is tens of MiB: not left in the shared bucket
    await deps.s3.send(new DeleteObjectCommand({ Bucket: deps.config.s3.bucket, Key: key })).catch(() => undefined);
  }
});

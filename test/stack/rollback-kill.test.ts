import { isDeepStrictEqual } from 'node:util';
import { ObjectId } from 'mongodb';
import { BulkOperations, bulkOperationItems } from '../../shared/bulk/operations';
import { requestRollback, rollbackStatus } from '../../shared/bulk/rollback-jobs';
import { rollback } from '../../shared/bulk/messages';
import { TenantDb } from '../../shared/db/tenant-db';
import { jobs } from '../../shared/jobs/collection';
import { Jobs } from '../../shared/jobs/jobs';
import { Catalog } from '../../shared/products/catalog';
import { productSkus, products } from '../../shared/products/collections';
import { skusOf } from '../../shared/products/normalize';
import type { ProductDoc } from '../../shared/products/types';
import { workflowHandle } from '../../shared/temporal/workflows';
import { waitFor, type Proc } from '../../scripts/stack/process';
import { TestDeps } from '../helpers/stack';
import { startWorker } from '../helpers/worker';

/**
 * The rollback of a large bulk operation with the worker killed (SIGKILL) three times, early, in
 * the middle and late, a new worker started after each: the job completes, every product the
 * operation created is gone (with its SKUs), every product it changed is back at its
 * before-image, each counted once, and each killed attempt is handed on within seconds (the
 * activity heartbeats), not after its start-to-close limit. Runs its own workers on its own
 * task queue, over its own database.
 */
// 1,200 products (900 created, 300 changed): about 95 s on 2 cores, most of it waiting out three
// heartbeat timeouts and worker starts; ROLLBACK_KILL_PRODUCTS changes it.
const PRODUCTS = Number(process.env.ROLLBACK_KILL_PRODUCTS ?? 1200);
const CHANGED = Math.floor(PRODUCTS / 4);
const CREATED = PRODUCTS - CHANGED;
// progress counts a batch's intents (100 products) at its start: the last kill leaves two batches to do
const KILL_AT = [0.1, 0.45, 0.8];
/** The workflow's heartbeat timeout is 20 s: a dead worker's attempt must be retried well before a minute. */
const HANDED_ON_WITHIN_MS = 40_000;
const DATABASE = 'rollback_kill_test';
jest.setTimeout(600_000);

let deps: TestDeps;
beforeAll(async () => {
  deps = await TestDeps.open({ database: DATABASE });
});
afterAll(() => deps.close());

const worker = (taskQueue: string, name: string): Proc => startWorker(taskQueue, name, DATABASE);

const product = (sku: string, title: string, variants: string[] = []) => ({
  sku,
  title: { value: title },
  price: 10,
  variants: variants.map((v, position) => ({ sku: v, title: { value: v }, price: 11, position })),
});

/** A product's own content, without what every write moves. */
function content(p: ProductDoc): Record<string, unknown> {
  const { version: _v, updatedAt: _u, ...rest } = p;
  return rest;
}

/**
 * An operation as an import records one: CHANGED existing products rewritten (a new title and
 * a variant each, so the rollback must give that variant's SKU back), CREATED new ones (every
 * third with a variant), each with its before-image and the version it left.
 */
async function importLikeOperation(tenantDb: TenantDb, actor: string) {
  const catalog = new Catalog(tenantDb);
  const ops = new BulkOperations(tenantDb);
  const existing: ProductDoc[] = [];
  for (let i = 0; i < CHANGED; i += 200) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(200, CHANGED - i) }, async (_, j) => ({
        product: await catalog.prepare(product(`KEEP${i + j}`, `Kept ${i + j}`)),
        _id: new ObjectId(),
      })),
    );
    for (const stored of await catalog.insertMany(batch)) expect(stored).not.toBeInstanceOf(Error);
    // as stored (what the import reads as the before-image), not as handed to the driver
    existing.push(
      ...(await tenantDb
        .collection(products)
        .find({ _id: { $in: batch.map((b) => b._id) } })
        .toArray()),
    );
  }
  const operationId = await ops.start({ type: 'csv-import', actor, operationName: 'rollback kill test' });
  for (let i = 0; i < CREATED; i += 200) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(200, CREATED - i) }, async (_, j) => {
        const n = i + j;
        return {
          product: await catalog.prepare(product(`NEW${n}`, `New ${n}`, n % 3 === 0 ? [`NEW${n}-V`] : [])),
          _id: new ObjectId(),
        };
      }),
    );
    await ops.recordMany(
      operationId,
      batch.map((b) => ({
        productId: b._id.toHexString(),
        sku: b.product.sku,
        action: 'created' as const,
        before: null,
        afterVersion: 1,
      })),
    );
    for (const stored of await catalog.insertMany(batch)) expect(stored).not.toBeInstanceOf(Error);
  }
  for (const current of existing) {
    const doc = await catalog.write(
      current,
      await catalog.prepare(product(current.sku, `Changed ${current.sku}`, [`${current.sku}-V`])),
    );
    await ops.record(operationId, {
      productId: doc._id.toHexString(),
      sku: doc.sku,
      action: 'updated',
      before: current,
      afterVersion: doc.version,
    });
  }
  await ops.finish(operationId, 'completed', {
    totalProcessed: PRODUCTS,
    created: CREATED,
    updated: CHANGED,
    skipped: 0,
    failed: 0,
  });
  return { operationId, existing };
}

test(`a rollback of ${PRODUCTS} products survives a worker SIGKILLed ${KILL_AT.length} times`, async () => {
  const taskQueue = `rollback-kill-${Date.now()}`;
  const { tenantId, keyId } = await deps.tenantWithKey();
  const tenantDb = new TenantDb(deps.db, tenantId);
  const { operationId, existing } = await importLikeOperation(tenantDb, keyId);

  const jobsOnQueue = new Jobs(deps.temporal, taskQueue);
  let current = worker(taskQueue, 'rollback-kill-1');
  const workers = [current];
  try {
    // the use case POST /products/bulk/operations/{id}/rollback runs, on this test's task queue
    const { job: started, finished } = await requestRollback(tenantDb, jobsOnQueue, operationId, keyId);
    expect(finished).toBe(false);
    const rollbackOperationId = started.rollbackOperationId!;
    const record = (await tenantDb.collection(jobs).findOne({ _id: started.jobId }))!;
    const handle = workflowHandle(deps.temporal, rollback, record.workflowId);
    const progress = () => tenantDb.collection(bulkOperationItems).countDocuments({ operationId: rollbackOperationId });
    const rollbackAttempt = async () => {
      const { raw } = await handle.describe();
      return raw.pendingActivities?.find((a) => a.activityType?.name === 'rollbackOperation')?.attempt ?? null;
    };

    const handedOn: number[] = [];
    for (const [i, fraction] of KILL_AT.entries()) {
      await waitFor(`rollback past ${fraction * 100}%`, async () => (await progress()) >= fraction * PRODUCTS, {
        timeoutMs: 300_000,
        proc: current,
      });
      // not always attempt i + 1: on a loaded machine a live attempt may miss its heartbeat and be retried (harmless too)
      const attempt = await rollbackAttempt();
      expect(attempt).not.toBeNull();
      current.child.kill('SIGKILL');
      await current.exited;
      const killedAt = Date.now();
      const atKill = await progress();
      expect(atKill).toBeLessThan(PRODUCTS);
      current = worker(taskQueue, `rollback-kill-${i + 2}`);
      workers.push(current);
      // the server gives up on the dead worker's attempt when its heartbeats stop, and schedules the next
      await waitFor('the killed attempt handed on', async () => ((await rollbackAttempt()) ?? 0) > attempt!, {
        timeoutMs: 5 * 60_000,
        proc: current,
      });
      handedOn.push(Date.now() - killedAt);
      // and the new worker carries on where the last one stopped
      await waitFor('rollback resumed', async () => (await progress()) > atKill, { timeoutMs: 120_000, proc: current });
    }
    for (const ms of handedOn) expect(ms).toBeLessThan(HANDED_ON_WITHIN_MS);

    const result = await handle.result();
    expect(result).toEqual({ operationId, rollbackOperationId, deleted: CREATED, restored: CHANGED, failed: [] });
    expect(await rollbackStatus(tenantDb, jobsOnQueue, operationId)).toEqual({
      jobId: started.jobId,
      status: 'completed',
      operationId,
      rollbackOperationId,
      success: true,
      deleted: CREATED,
      restored: CHANGED,
      failed: [],
    });

    // every created product gone, every changed one at its before-image, and the SKUs exactly theirs
    const left = await tenantDb.collection(products).find({}).toArray();
    expect(left).toHaveLength(CHANGED);
    const byId = new Map(left.map((p) => [p._id.toHexString(), p]));
    for (const before of existing) {
      const now = byId.get(before._id.toHexString());
      expect(now && isDeepStrictEqual(content(now), content(before))).toBe(true);
      expect(now!.version).toBe(before.version + 2); // the operation's write and the rollback's, once each
    }
    const claims = (await tenantDb.collection(productSkus).find({}).toArray()).map((c) => c.sku).sort();
    expect(claims).toEqual(existing.flatMap((p) => skusOf(p).map((s) => s.sku)).sort());

    const ops = new BulkOperations(tenantDb);
    expect(await ops.get(operationId)).toMatchObject({ status: 'rolled_back', rolledBackBy: rollbackOperationId });
    expect(await ops.get(rollbackOperationId)).toMatchObject({
      type: 'rollback',
      status: 'completed',
      rollbackOf: operationId,
      counts: { totalProcessed: PRODUCTS, created: 0, updated: CHANGED, skipped: 0, failed: 0 },
    });
    const items = await ops.itemsOf(rollbackOperationId);
    expect(items).toHaveLength(PRODUCTS);
    expect(items.filter((i) => i.pending)).toEqual([]);
    expect(items.filter((i) => i.action === 'deleted')).toHaveLength(CREATED);
    expect(items.filter((i) => i.action === 'restored')).toHaveLength(CHANGED);
    expect((await tenantDb.collection(jobs).findOne({ _id: started.jobId }))?.status).toBe('completed');
  } finally {
    for (const w of workers) await w.stop();
  }
});

import type { WorkflowHandle } from '@temporalio/client';
import { ObjectId } from 'mongodb';
import { BulkOperations, bulkOperationItems } from '../../shared/bulk/operations';
import { TenantDb } from '../../shared/db/tenant-db';
import { flowProblems } from '../../shared/edits/inputs';
import { bulkEdit, editProgress } from '../../shared/edits/messages';
import { EditRuns } from '../../shared/edits/runs';
import type { FlowDefinition } from '../../shared/flows/definition';
import { jobs } from '../../shared/jobs/collection';
import { Jobs } from '../../shared/jobs/jobs';
import { Catalog } from '../../shared/products/catalog';
import { products } from '../../shared/products/collections';
import { queryOrNull, workflowHandle } from '../../shared/temporal/workflows';
import { waitFor, type Proc } from '../../scripts/stack/process';
import { TestDeps } from '../helpers/stack';
import { startWorker } from '../helpers/worker';

/**
 * A flow job of 20,000 products with the worker killed (SIGKILL) at about 30% and 70% of the
 * products processed, a new worker started after each: it ends with every product changed exactly
 * once. The flow multiplies the price by 1.1, which is not idempotent: a product changed twice
 * would cost 12.1, not 11, and stand at version 3. Each kill is timed by progress, not by the
 * clock: once the workflow reports the fraction processed, the worker dies at a given point of the
 * page in flight. The first kill comes at once, while the next page reads and plans its products
 * (nothing of it written: the retry does it all, once); the second once that page has written its
 * first product (written, the activity not finished: the retry must recognise them and write
 * nothing). A kill between a page's records and its writes cannot be timed from outside on
 * FerretDB: its front door holds reads back while writes run, so a poll sees the mark or the records
 * only once the page's writes are through. Runs its own workers on its own task queue, over
 * its own database.
 */
// 20,000 products: about 110 s on 2 cores shared with other suites (seeding ~10 s, the run ~90 s
// with two heartbeat timeouts of 20 s and two worker starts); FLOW_KILL_PRODUCTS changes it.
const PRODUCTS = Number(process.env.FLOW_KILL_PRODUCTS ?? 20_000);
const KILL_AT: { fraction: number; cut: 'planning' | 'written' }[] = [
  { fraction: 0.3, cut: 'planning' },
  { fraction: 0.7, cut: 'written' },
];
const DATABASE = 'flow_kill_test';
const SEED_BATCH = 1000;
jest.setTimeout(900_000);

let deps: TestDeps;
beforeAll(async () => {
  deps = await TestDeps.open({ database: DATABASE });
});
afterAll(async () => {
  // the database is this file's own: 20,000 products a run would otherwise pile up in the shared server
  await deps.db.dropDatabase();
  await deps.close();
});

const worker = (taskQueue: string, name: string): Proc => startWorker(taskQueue, name, DATABASE);

const FLOW: FlowDefinition = {
  name: 'flow kill test',
  selection: { all: true },
  rules: [
    {
      actions: [
        { type: 'calculate', field: 'price', operation: 'multiply', operand: 1.1 },
        { type: 'add', field: 'tags', values: ['flowed'] },
      ],
    },
  ],
};

/** PRODUCTS products at 10.00 without tags, stored as the catalog stores them; their ids in page order. */
async function seed(tenantDb: TenantDb): Promise<ObjectId[]> {
  const catalog = new Catalog(tenantDb);
  const ids: ObjectId[] = [];
  for (let from = 0; from < PRODUCTS; from += SEED_BATCH) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(SEED_BATCH, PRODUCTS - from) }, async (_, j) => ({
        product: await catalog.prepare({ sku: `FK${from + j}`, title: { value: `Flowed ${from + j}` }, price: 10 }),
        _id: new ObjectId(),
      })),
    );
    for (const stored of await catalog.insertMany(batch)) expect(stored).not.toBeInstanceOf(Error);
    ids.push(...batch.map((b) => b._id));
  }
  // pages walk the products by id
  return ids.sort((a, b) => a.toHexString().localeCompare(b.toHexString()));
}

/** The pages of a bulk edit that ran more than once, from its history (each attempt records its start). */
async function retriedPages(handle: WorkflowHandle): Promise<Set<number>> {
  const events = (await handle.fetchHistory()).events ?? [];
  const pageOf = new Map<string, number>();
  for (const e of events) {
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name !== 'editPage') continue;
    const [input] = scheduled.input?.payloads ?? [];
    pageOf.set(String(e.eventId), (JSON.parse(Buffer.from(input.data!).toString()) as { page: number }).page);
  }
  const retried = new Set<number>();
  for (const e of events) {
    const started = e.activityTaskStartedEventAttributes;
    const page = pageOf.get(String(started?.scheduledEventId));
    if (started && page !== undefined && Number(started.attempt) > 1) retried.add(page);
  }
  return retried;
}

test(`a flow job of ${PRODUCTS} products with the worker SIGKILLed twice changes every product exactly once`, async () => {
  const started = Date.now();
  const taskQueue = `flow-kill-${Date.now()}`;
  const pageSize = deps.config.editPageSize;
  let current = worker(taskQueue, 'worker-flow-kill-1'); // it starts up while the data is made
  const workers = [current];
  let workflowId: string | null = null;
  try {
    const { tenantId, keyId } = await deps.tenantWithKey();
    const tenantDb = new TenantDb(deps.db, tenantId);
    const ids = await seed(tenantDb);
    const seededIn = (Date.now() - started) / 1000;
    expect(flowProblems(FLOW)).toEqual([]);

    // the use case POST /products/bulk/flow/execute runs, as a job on this test's task queue
    const runs = new EditRuns({
      tenantDb,
      jobs: new Jobs(deps.temporal, taskQueue),
      temporal: deps.temporal,
      actor: keyId,
      syncMax: 0,
    });
    const run = await runs.start({ type: 'flow', mode: 'apply', flow: FLOW, selection: FLOW.selection });
    expect(run.finished).toBe(false);
    const { jobId } = run.view;
    const record = (await tenantDb.collection(jobs).findOne({ _id: jobId }))!;
    expect(record.input).toMatchObject({ sync: false }); // its total is known once its start fixes the pages
    workflowId = record.workflowId;
    const handle = workflowHandle(deps.temporal, bulkEdit, workflowId);
    // progress as the workflow answers it: a query, no database read (FerretDB holds reads back while writes run)
    const processed = async () =>
      (await queryOrNull(deps.temporal, record.workflowId, editProgress, 2000))?.processed ?? 0;
    const operationId = (record.input as { operationId: string }).operationId;
    const versionOf = async (id: ObjectId) =>
      (await tenantDb.collection(products).findOne({ _id: id }, { projection: { version: 1 } }))?.version;

    const cuts: { page: number; note: string }[] = [];
    for (const [i, { fraction, cut }] of KILL_AT.entries()) {
      let done = 0;
      await waitFor(
        `${fraction * 100}% processed`,
        async () => {
          done = await processed();
          return done >= fraction * PRODUCTS;
        },
        { timeoutMs: 600_000, proc: current },
      );
      // the page after the `done` products is the one in flight
      const page = ids.slice(done, done + pageSize);
      expect(page.length).toBeGreaterThan(0);
      if (cut === 'written')
        await waitFor('the page in flight written', async () => (await versionOf(page[0])) === 2, {
          timeoutMs: 300_000,
          proc: current,
        });
      current.child.kill('SIGKILL');
      await current.exited;
      const recorded = await tenantDb
        .collection(bulkOperationItems)
        .countDocuments({ _id: { $in: page.map((id) => `${operationId}:${id.toHexString()}`) } });
      const written = await tenantDb.collection(products).countDocuments({ _id: { $in: page }, version: 2 });
      cuts.push({
        page: done / pageSize,
        note: `kill ${i + 1} (${cut}) at ${done} processed: ${recorded} of the next page's ${page.length} products recorded, ${written} written`,
      });
      current = worker(taskQueue, `worker-flow-kill-${i + 2}`);
      workers.push(current);
      // the killed page is handed on when its heartbeats stop, and the new worker carries on past it
      await waitFor('the run resumed past the killed page', async () => (await processed()) > done, {
        timeoutMs: 300_000,
        proc: current,
      });
    }

    const result = await handle.result();
    const retried = await retriedPages(handle);
    const elapsed = (Date.now() - started) / 1000;
    console.log(
      `flow kill test: ${PRODUCTS} products seeded in ${seededIn.toFixed(1)} s, all done in ${elapsed.toFixed(1)} s; ${cuts.map((c) => c.note).join('; ')}; pages run again: ${[...retried].join(', ')}`,
    );
    expect(result).toMatchObject({
      status: 'completed',
      total: PRODUCTS,
      processed: PRODUCTS,
      counts: { matched: PRODUCTS, changed: PRODUCTS, unchanged: 0, invalid: 0, failed: 0 },
      errors: [],
    });
    const view = await runs.get('flow', jobId);
    expect(view).toMatchObject({
      status: 'completed',
      counts: { matched: PRODUCTS, changed: PRODUCTS, failed: 0 },
      operationId: result.operationId,
    });

    // every product changed once: 10 × 1.1 (twice would be 12.1), the tag once, one write each
    const stored = await tenantDb
      .collection(products)
      .find({}, { projection: { price: 1, tags: 1, version: 1 } })
      .toArray();
    expect(stored).toHaveLength(PRODUCTS);
    const wrong = stored.filter((p) => p.price !== 11 || (p.tags ?? []).join() !== 'flowed' || p.version !== 2);
    expect(wrong.slice(0, 5)).toEqual([]);

    // one record per product, each with the version its one write left
    expect(result.operationId).toBe(operationId);
    const items = await tenantDb
      .collection(bulkOperationItems)
      .find({ operationId }, { projection: { productId: 1, afterVersion: 1 } })
      .toArray();
    expect(items).toHaveLength(PRODUCTS);
    expect(new Set(items.map((i) => i.productId)).size).toBe(PRODUCTS);
    expect(items.filter((i) => i.afterVersion !== 2)).toEqual([]);
    const ops = new BulkOperations(tenantDb);
    const op = (await ops.get(operationId))!;
    expect(op).toMatchObject({ type: 'flow', status: 'completed', counts: { updated: PRODUCTS, failed: 0 } });

    // the first kill cut its page short: it ran again (the second may come as its page reports its end)
    expect(retried.has(cuts[0].page)).toBe(true);

    // and the operation can be undone: every product still at the version it left
    expect(await ops.rollbackCheck(op)).toEqual({ canRollback: true, reason: null, blockedSkus: [] });
  } finally {
    // a run the test left unfinished is no one's to finish: its task queue dies with the test
    if (workflowId)
      await deps.temporal.workflow
        .getHandle(workflowId)
        .terminate('the test ended')
        .catch(() => undefined);
    for (const w of workers) await w.stop();
  }
});

import { join } from 'node:path';
import pino from 'pino';
import { startNodeProcess, waitFor, type Proc } from '../../scripts/stack/process';
import { TenantDb } from '../../shared/db/tenant-db';
import { jobs } from '../../shared/jobs/collection';
import { Jobs } from '../../shared/jobs/jobs';
import type { PublicationContext } from '../../shared/publication/context';
import { publication } from '../../shared/publication/messages';
import { OPTION_DEFAULTS, publicationLocks } from '../../shared/publication/publication';
import { startPublication } from '../../shared/publication/start';
import { workflowIdFor } from '../../shared/temporal/workflow-ids';
import { QUERY_WAIT_MS, workflowHandle } from '../../shared/temporal/workflows';
import { ChannelServer, type Received } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps, testStack } from '../helpers/stack';

/**
 * Publications with the worker SIGKILLed and started again: early, in the middle, late, and while
 * a cancel is under way. The channel holds the requests in flight at the kill, so the kill point
 * is exact: those requests are cut off (their sender is gone), and a restarted worker must re-send
 * them with the same Idempotency-Key. Each product is published exactly once, the counts are
 * exact, the channel's lock is freed, and a status read while no worker runs answers at once.
 * Each channel has a site of its own and a category predictor, so every product is also
 * categorized first: asked for once, and recorded once in the job's bulk operation.
 * The jobs run on a task queue of their own, served by this file's worker processes; the
 * suite's API answers the status and cancel requests.
 */
jest.setTimeout(600_000);

const ROOT = join(__dirname, '..', '..');
const SECRET = 'kill-test-signing-secret-0123456789';
const PRODUCTS = 40;
/** Sends in flight per batch: as many requests as this are cut off at each kill. */
const CONCURRENCY = 4;
const P = `PK${Date.now().toString(36).toUpperCase()}`;

let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let tenantDb: TenantDb;
let server: ChannelServer;
const items: { id: string; sku: string }[] = [];
const taskQueue = `publish-kill-${Date.now()}`;
let worker: Proc;
let workers = 0;

function startWorker(): Proc {
  const { env, dataDir } = testStack();
  return startNodeProcess(`worker-publish-kill-${++workers}`, join(ROOT, 'worker', 'main.ts'), {
    cwd: ROOT,
    logDir: join(dataDir, 'logs'),
    env: { ...process.env, ...env, TEMPORAL_TASK_QUEUE: taskQueue },
  });
}

async function killWorker(): Promise<void> {
  worker.child.kill('SIGKILL');
  await worker.exited;
}

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey();
  api = new ApiClient(t.key);
  tenantId = t.tenantId;
  tenantDb = new TenantDb(deps.db, tenantId);
  server = await new ChannelServer(SECRET).start();
  server.predictor = (title) => [{ categoryId: `CAT-${title.length}`, categoryName: 'Kill test' }];
  worker = startWorker();
  for (let i = 0; i < PRODUCTS; i++) {
    const res = await api.post('/products', {
      sku: `${P}-${i}`,
      title: { value: `Product ${i}` },
      price: 10,
      status: 'active',
      media: [{ src: `https://img.example.com/${i}.jpg`, name: 'front', alt: { value: 'front' }, position: 0 }],
    });
    expect(res.status).toBe(201);
    items.push(res.body as { id: string; sku: string });
  }
});

afterAll(async () => {
  await worker?.stop();
  await server?.close();
  await deps?.close();
});

/** The site of each channel: its products' categories live under `custom:<site>`. */
const sites = new Map<string, string>();

async function channel(): Promise<string> {
  const siteId = `K${sites.size + 1}`;
  const res = await api.post('/channels', {
    name: `Kill ${Date.now()}`,
    type: 'custom',
    settings: { endpointUrl: server.url, concurrency: CONCURRENCY, siteId },
    secret: SECRET,
  });
  expect(res.status).toBe(201);
  sites.set(res.body.id, siteId);
  return res.body.id as string;
}

/** Every product was asked for once on the channel's site and its suggestion recorded once in the job's operation. */
async function expectCategorizedOnce(jobId: string, channelId: string, count = PRODUCTS): Promise<void> {
  const asked = server.predictions.filter((p) => p.site === sites.get(channelId)).map((p) => p.title);
  expect(asked).toHaveLength(count);
  expect(new Set(asked).size).toBe(count);
  const op = await api.get(`/products/bulk/operations/bop_${jobId}`);
  expect(op.body).toMatchObject({ type: 'marketplace-category', status: 'completed', counts: { updated: count } });
  expect(new Set(op.body.products.map((x: { sku: string }) => x.sku)).size).toBe(count);
}

/** The publication use case as the API runs it, but starting its jobs on this file's task queue. */
function context(): PublicationContext {
  return {
    tenantDb,
    temporal: deps.temporal,
    jobs: new Jobs(deps.temporal, taskQueue),
    secretsKey: deps.config.secretsKey,
    syncMax: deps.config.publishSyncMax,
    log: pino({ level: 'silent' }),
  };
}

/** Publishes every product to a new channel, the channel holding every request after the first `answered`. */
async function publishHoldingAfter(answered: number) {
  const channelId = await channel();
  server.holdAfter(answered);
  const answer = await startPublication(context(), {
    channelId,
    selection: { mode: 'selected', productIds: items.map((i) => i.id) },
    options: { ...OPTION_DEFAULTS },
    targetMarketplaces: [],
  });
  expect(answer.async).toBe(true);
  const { jobId } = answer;
  await waitFor('the channel holding the requests in flight', async () => server.heldCount() === CONCURRENCY, {
    timeoutMs: 120_000,
    proc: worker,
  });
  expect(published(jobId)).toHaveLength(answered);
  return { channelId, jobId, handle: workflowHandle(deps.temporal, publication, workflowIdFor(tenantId, jobId)) };
}

/** Kills the worker with requests in flight, lets the channel see them cut off, and starts another worker. */
async function killAndRestart(afterKill: () => Promise<void> = async () => undefined): Promise<void> {
  await killWorker();
  await waitFor('the cut-off requests seen by the channel', async () => server.heldCount(true) === CONCURRENCY);
  try {
    await afterKill();
  } finally {
    // a failed check must not leave the next test without a worker and with a channel holding
    server.release();
    worker = startWorker();
  }
}

const requestsOf = (jobId: string): Received[] =>
  server.received.filter((r) => r.idempotencyKey.startsWith(`${jobId}:`));
const published = (jobId: string): Received[] =>
  [...server.published.values()].filter((r) => r.idempotencyKey.startsWith(`${jobId}:`));

/** Each product's requests carry one key, its own; the channel published each key once. */
function expectOneKeyPerProduct(jobId: string): void {
  const keys = new Map<string, Set<string>>();
  for (const r of requestsOf(jobId)) keys.set(r.sku, (keys.get(r.sku) ?? new Set()).add(r.idempotencyKey));
  for (const [sku, set] of keys) {
    const item = items.find((i) => i.sku === sku)!;
    expect([...set]).toEqual([`${jobId}:${item.id}`]);
  }
  const once = published(jobId).map((r) => r.sku);
  expect(new Set(once).size).toBe(once.length);
}

async function expectLockFreed(channelId: string): Promise<void> {
  expect(await tenantDb.collection(publicationLocks).findOne({ _id: `${tenantId}:${channelId}` })).toBeNull();
}

describe.each([
  ['early', 4],
  ['in the middle', PRODUCTS / 2],
  ['late', PRODUCTS - CONCURRENCY],
])('the worker killed %s', (_when, answered) => {
  test(`after ${answered} of ${PRODUCTS} products: the job completes, each product published once, the cut-off ones re-sent with their key`, async () => {
    const { channelId, jobId, handle } = await publishHoldingAfter(answered);
    await killAndRestart(async () => {
      // no worker runs: the status comes from the job record once the query's short wait is over,
      // not after a query's full timeout (the margin is for a loaded machine)
      const started = Date.now();
      const status = await api.get(`/products/export/${jobId}`);
      const took = Date.now() - started;
      expect(status.status).toBe(200);
      expect(status.body).toMatchObject({ jobId, status: 'processing', total: PRODUCTS });
      expect(took).toBeLessThan(QUERY_WAIT_MS + 4000);
    });
    const result = await handle.result();
    expect(result).toMatchObject({
      status: 'completed',
      total: PRODUCTS,
      processed: PRODUCTS,
      published: PRODUCTS,
      failed: 0,
      skipped: 0,
    });
    expect((await api.get(`/products/export/${jobId}`)).body).toMatchObject({
      status: 'completed',
      total: PRODUCTS,
      processed: PRODUCTS,
      published: PRODUCTS,
      failed: 0,
      skipped: 0,
      percent: 100,
    });
    expectOneKeyPerProduct(jobId);
    expect(
      published(jobId)
        .map((r) => r.sku)
        .sort(),
    ).toEqual(items.map((i) => i.sku).sort());
    const sent = requestsOf(jobId);
    // the cut-off requests, and nothing else, were sent twice
    expect(sent.filter((r) => r.outcome === 'aborted')).toHaveLength(CONCURRENCY);
    expect(sent).toHaveLength(PRODUCTS + CONCURRENCY);
    expect(sent.filter((r) => r.duplicate)).toEqual([]);
    await expectCategorizedOnce(jobId, channelId);
    await expectLockFreed(channelId);
  });
});

test('the worker killed while a cancel is under way: the job ends cancelled with exact counts, nothing sent after the cancel', async () => {
  const answered = 12;
  const { channelId, jobId, handle } = await publishHoldingAfter(answered);
  const cancel = await api.post(`/products/export/${jobId}/cancel`, { reason: 'killed mid-cancel' });
  expect(cancel.status).toBe(200);
  const cancelledAt = Date.now();
  await killAndRestart();
  const result = await handle.result();
  expect(result).toMatchObject({
    status: 'cancelled',
    cancelReason: 'killed mid-cancel',
    total: PRODUCTS,
    processed: answered,
    published: answered,
    failed: 0,
    skipped: 0,
  });
  expect((await tenantDb.collection(jobs).findOne({ _id: jobId }))?.status).toBe('cancelled');
  expect((await api.get(`/products/export/${jobId}`)).body).toMatchObject({
    status: 'cancelled',
    processed: answered,
    published: answered,
    cancelReason: 'killed mid-cancel',
  });
  // give a stray send time to show
  await new Promise((r) => setTimeout(r, 1500));
  const sent = requestsOf(jobId);
  expect(sent.filter((r) => r.at > cancelledAt)).toEqual([]);
  expect(sent).toHaveLength(answered + CONCURRENCY);
  expect(published(jobId)).toHaveLength(answered);
  expectOneKeyPerProduct(jobId);
  // categorized: those sent, and those of the batch under way that were asked for before the cancel
  const asked = server.predictions.filter((p) => p.site === sites.get(channelId)).length;
  expect(asked).toBeGreaterThanOrEqual(answered + CONCURRENCY);
  await expectCategorizedOnce(jobId, channelId, asked);
  await expectLockFreed(channelId);
});

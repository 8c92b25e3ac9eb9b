import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { ObjectId } from 'mongodb';
import pino from 'pino';
import type { Client } from '@temporalio/client';
import type { Activities } from '../../activities';
import { createApp } from '../../api/app';
import { allRoutes } from '../../api/routes';
import { Tenancy } from '../../shared/auth/tenancy';
import { TenantDb } from '../../shared/db/tenant-db';
import { Jobs } from '../../shared/jobs/jobs';
import { Ledger } from '../../shared/inventory/ledger';
import { stockLevels, stockMovements } from '../../shared/inventory/collections';
import { transfer, transferState } from '../../shared/inventory/messages';
import type { TransferLine } from '../../shared/inventory/transfer-rules';
import { Catalog } from '../../shared/products/catalog';
import { queryOrNull, workflowHandle } from '../../shared/temporal/workflows';
import { startNodeProcess, waitFor, type Proc } from '../../scripts/stack/process';
import { ApiClient, type HttpResult } from '../helpers/client';
import { TestDeps, testStack } from '../helpers/stack';

/**
 * Transfers with the worker SIGKILLed at several points of a transfer's life and another worker
 * started: each transfer still ends received exactly once (stock out of the origin and into the
 * destination once per line, one history entry per action), and a receive retried with its
 * Idempotency-Key answers what the first one did. Runs its own workers on its own task queue,
 * behind an API of its own that starts transfers on that queue.
 */
// enough lines that moving them takes a few seconds, so the kill lands in the middle of the move
const LINES = Number(process.env.TRANSFER_KILL_LINES ?? 300);
const ROOT = join(__dirname, '..', '..');
// Its own database: its products and movements stay out of the scans of the suite's tests.
const DATABASE = 'transfer_kill_test';
const taskQueue = `transfer-kill-${Date.now()}`;
const P = `K${Date.now().toString(36).toUpperCase()}`;
const SKUS = Array.from({ length: LINES }, (_, i) => `${P}-${String(i).padStart(4, '0')}`);
jest.setTimeout(600_000);

let deps: TestDeps;
let api: ApiClient;
let tenantDb: TenantDb;
let origin: string;
let dest: string;
let closeApi: () => Promise<void>;
let worker: Proc | null = null;
let workers = 0;

/** A worker of this file's task queue and database. */
function startWorker(): Proc {
  const { env, dataDir } = testStack();
  return startNodeProcess(`worker-transfer-kill-${++workers}`, join(ROOT, 'worker', 'main.ts'), {
    cwd: ROOT,
    logDir: join(dataDir, 'logs'),
    env: { ...process.env, ...env, MONGODB_DB: DATABASE, TEMPORAL_TASK_QUEUE: taskQueue },
  });
}

async function killWorker(): Promise<void> {
  worker!.child.kill('SIGKILL');
  await worker!.exited;
  worker = null;
}

/** The API app over this file's database, starting workflows on this file's task queue. */
async function serveApi(): Promise<{ url: string; close: () => Promise<void> }> {
  const config = { ...deps.config, taskQueue };
  const tenancy = new Tenancy(deps.db, { cache: true });
  const app = createApp(
    {
      config,
      db: deps.db,
      tenancy,
      temporal: deps.temporal,
      jobs: new Jobs(deps.temporal, taskQueue),
      s3: deps.s3,
      log: pino({ level: 'silent' }),
    },
    allRoutes,
  );
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const close = () => {
    tenancy.close();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close };
}

beforeAll(async () => {
  deps = await TestDeps.open({ database: DATABASE });
  worker = startWorker(); // it starts up while the data is made
  const served = await serveApi();
  closeApi = served.close;
  const tenant = await deps.tenantWithKey();
  api = new ApiClient(tenant.key, served.url);
  tenantDb = new TenantDb(deps.db, tenant.tenantId);
  const location = async (name: string) => {
    const res = await api.post('/locations', { name, type: 'location' });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  origin = await location('Warehouse');
  dest = await location('Store');
  const catalog = new Catalog(tenantDb);
  const products = await Promise.all(
    SKUS.map(async (sku) => ({
      product: await catalog.prepare({ sku, title: { value: sku }, price: 1 }),
      _id: new ObjectId(),
    })),
  );
  for (const stored of await catalog.insertMany(products)) expect(stored).not.toBeInstanceOf(Error);
  const ledger = new Ledger(tenantDb);
  for (let i = 0; i < SKUS.length; i += 20)
    await Promise.all(
      SKUS.slice(i, i + 20).map((sku) =>
        ledger.apply({ sku, locationId: origin, delta: 1000, reason: 'restock', actor: 'test' }),
      ),
    );
});
afterAll(async () => {
  await worker?.stop();
  await closeApi?.();
  await deps?.close();
});

interface Transfer {
  id: string;
  workflowId: string;
  status: string;
  history: { action: string; outcome: string; state: string }[];
}

/** Each SKU's balance at a location. */
async function balances(locationId: string, skus: string[]): Promise<Map<string, number>> {
  const levels = await tenantDb
    .collection(stockLevels)
    .find({ locationId, sku: { $in: skus } })
    .toArray();
  return new Map(skus.map((sku) => [sku, levels.find((l) => l.sku === sku)?.onHand ?? 0]));
}

async function createTransfer(lines: TransferLine[]): Promise<Transfer> {
  const res = await api.post('/inventory/transfers', { originId: origin, destinationId: dest, productsList: lines });
  expect(res.status).toBe(201);
  return res.body as Transfer;
}

const act = (t: Transfer, action: string, key: string) =>
  api.post(`/inventory/transfers/${t.id}/${action}`, undefined, { headers: { 'idempotency-key': key } });

/** The id of a line's movement in the ledger (transfer, receive attempt, direction, SKU). */
const movementId = (t: Transfer, what: 'out' | 'in', sku: string) =>
  `${tenantDb.tenantId}:trf:${t.id}:1:${what}:${sku}`;

const movementApplied = async (t: Transfer, what: 'out' | 'in', sku: string) =>
  (await tenantDb.collection(stockMovements).findOne({ _id: movementId(t, what, sku) }))?.status === 'applied';

type HistoryEvent = NonNullable<
  NonNullable<Awaited<ReturnType<Client['workflowService']['getWorkflowExecutionHistory']>>['history']>['events']
>[number];

/**
 * Resolves as soon as the workflow's history holds an event `match` accepts (given the events
 * before it): a long poll of the history, so it returns within milliseconds of the event, before
 * the worker has gone much further.
 */
async function untilHistoryEvent(
  t: Transfer,
  match: (e: HistoryEvent, before: HistoryEvent[]) => boolean,
): Promise<void> {
  const seen: HistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  for (;;) {
    const res = await deps.temporal.workflowService.getWorkflowExecutionHistory({
      namespace: deps.config.temporalNamespace,
      execution: { workflowId: t.workflowId },
      waitNewEvent: true,
      ...(nextPageToken?.length ? { nextPageToken } : {}),
    });
    for (const e of res.history?.events ?? []) {
      if (match(e, seen)) return;
      seen.push(e);
    }
    if (!res.nextPageToken?.length) throw new Error(`${t.workflowId} closed without the awaited event`);
    nextPageToken = res.nextPageToken;
  }
}

const MOVE = 'moveTransferStock' satisfies keyof Activities;

/** The receive's stock move has completed: its activity's completion is in the history. */
function moveCompleted(e: HistoryEvent, before: HistoryEvent[]): boolean {
  const done = e.activityTaskCompletedEventAttributes;
  if (!done) return false;
  const scheduled = before.find((s) => String(s.eventId) === String(done.scheduledEventId));
  return scheduled?.activityTaskScheduledEventAttributes?.activityType?.name === MOVE;
}

/**
 * The transfer ended right, exactly once: each line left the origin once and entered the
 * destination once, the record is received with one applied entry per action and no refusal,
 * the workflow ended received, and the receive retried with its key answers what it did first.
 */
async function expectReceivedOnce(
  t: Transfer,
  lines: TransferLine[],
  before: { origin: Map<string, number>; dest: Map<string, number> },
  receive: { key: string; answer: HttpResult },
): Promise<void> {
  expect(receive.answer.status).toBe(200);
  expect(receive.answer.body.status).toBe('received');
  const skus = lines.map((l) => l.sku);
  const [atOrigin, atDest] = [await balances(origin, skus), await balances(dest, skus)];
  for (const { sku, quantity } of lines) {
    expect({ sku, origin: atOrigin.get(sku) }).toEqual({ sku, origin: before.origin.get(sku)! - quantity });
    expect({ sku, dest: atDest.get(sku) }).toEqual({ sku, dest: before.dest.get(sku)! + quantity });
  }
  const moves = await tenantDb.collection(stockMovements).find({ 'reference.id': t.id }).toArray();
  expect(moves.map((m) => `${m.reason}:${m.sku}:${m.delta}:${m.status}`).sort()).toEqual(
    lines
      .flatMap((l) => [`transfer_in:${l.sku}:${l.quantity}:applied`, `transfer_out:${l.sku}:${-l.quantity}:applied`])
      .sort(),
  );
  const record = (await api.get(`/inventory/transfers/${t.id}`)).body as Transfer;
  expect(record.status).toBe('received');
  expect(record.history.map((h) => `${h.action}:${h.outcome}:${h.state}`)).toEqual([
    'create:applied:pending',
    'approve:applied:pending',
    'receive:applied:approved',
  ]);
  expect(await workflowHandle(deps.temporal, transfer, t.workflowId).result()).toBe('received');
  const again = await act(t, 'receive', receive.key);
  expect(again.status).toBe(200);
  expect(again.body).toEqual(receive.answer.body);
  expect(again.body).toEqual(record);
}

const someLines = (from: number, n: number): TransferLine[] =>
  SKUS.slice(from, from + n).map((sku, i) => ({ sku, quantity: i + 1 }));

async function balancesBefore(lines: TransferLine[]) {
  const skus = lines.map((l) => l.sku);
  return { origin: await balances(origin, skus), dest: await balances(dest, skus) };
}

test('killed before the approve is handled: the approve waits for the next worker, then the transfer ends once', async () => {
  const lines = someLines(0, 3);
  const before = await balancesBefore(lines);
  const t = await createTransfer(lines);
  // the first worker has run the workflow (and holds it in its cache) before it dies
  await waitFor(
    'the first worker runs the workflow',
    async () => (await queryOrNull(deps.temporal, t.workflowId, transferState, 5000)) === 'pending',
    { proc: worker! },
  );
  await killWorker();
  const approving = act(t, 'approve', `${t.id}-approve`);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  expect((await api.get(`/inventory/transfers/${t.id}`)).body.status).toBe('pending');
  worker = startWorker();
  const approved = await approving;
  expect(approved.status).toBe(200);
  expect(approved.body.status).toBe('approved');
  const key = `${t.id}-receive`;
  await expectReceivedOnce(t, lines, before, { key, answer: await act(t, 'receive', key) });
});

test('killed between approve and receive: the receive works on the next worker, once', async () => {
  const lines = someLines(3, 3);
  const before = await balancesBefore(lines);
  const t = await createTransfer(lines);
  expect((await act(t, 'approve', `${t.id}-approve`)).status).toBe(200);
  await killWorker();
  worker = startWorker();
  const key = `${t.id}-receive`;
  await expectReceivedOnce(t, lines, before, { key, answer: await act(t, 'receive', key) });
});

test(`killed while the receive moves ${LINES} lines: the next worker finishes the move, each line once`, async () => {
  const lines = someLines(0, LINES);
  const before = await balancesBefore(lines);
  const t = await createTransfer(lines);
  expect((await act(t, 'approve', `${t.id}-approve`)).status).toBe(200);
  const key = `${t.id}-receive`;
  const receiving = act(t, 'receive', key);
  const third = lines[Math.floor(LINES / 3)].sku;
  await waitFor('a third of the lines out of the origin', () => movementApplied(t, 'out', third), {
    timeoutMs: 120_000,
    proc: worker!,
  });
  await killWorker();
  // cut off in the middle: the last line has not entered the destination
  expect(await movementApplied(t, 'in', lines.at(-1)!.sku)).toBe(false);
  // a client that gave up waiting sends the receive again, with its key, while no worker runs
  const resent = act(t, 'receive', key);
  worker = startWorker();
  const answer = await receiving;
  await expectReceivedOnce(t, lines, before, { key, answer });
  expect((await resent).body).toEqual(answer.body);
  // the move was handed to the new worker as a retry of the same activity, not run again by a new receive
  const history = await workflowHandle(deps.temporal, transfer, t.workflowId).fetchHistory();
  const starts = (history.events ?? []).filter((e) => e.activityTaskStartedEventAttributes);
  expect(Math.max(...starts.map((e) => e.activityTaskStartedEventAttributes!.attempt ?? 1))).toBeGreaterThan(1);
});

test('killed after the stock moved, before the workflow ended: nothing moves again and the transfer ends received', async () => {
  const lines = someLines(6, 3);
  const before = await balancesBefore(lines);
  const t = await createTransfer(lines);
  expect((await act(t, 'approve', `${t.id}-approve`)).status).toBe(200);
  const key = `${t.id}-receive`;
  const receiving = act(t, 'receive', key);
  await untilHistoryEvent(t, moveCompleted);
  await killWorker();
  // the kill came before the end: the workflow still runs, on no worker
  expect((await deps.temporal.workflow.getHandle(t.workflowId).describe()).status.name).toBe('RUNNING');
  for (const { sku } of lines) expect(await movementApplied(t, 'in', sku)).toBe(true);
  worker = startWorker();
  await expectReceivedOnce(t, lines, before, { key, answer: await receiving });
});

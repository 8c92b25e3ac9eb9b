import { join } from 'node:path';
import { TenantDb } from '../../shared/db/tenant-db';
import { webhookOutbox } from '../../shared/webhooks/collections';
import { eventIdOf } from '../../shared/webhooks/events';
import { freePort, portOpen, startNodeProcess, waitFor, type Proc } from '../../scripts/stack/process';
import { ApiClient } from '../helpers/client';
import { TestDeps, testStack } from '../helpers/stack';
import { WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * No event is lost when the processes die between a change and its delivery. The API and the
 * worker run as child processes over a database of their own; a receiver verifies every
 * delivery with the `standardwebhooks` library.
 *
 * - The worker is killed, customers are created and changed through the API (their events are
 *   recorded and handed to the endpoint's workflow, which no worker runs), then the API is killed
 *   too, right after the last answer (events it had not fanned out yet stay in the outbox). Both
 *   start again: every event arrives; duplicates share a webhook-id.
 * - A worker killed while an attempt waits for the receiver: the attempt is made again.
 * - What a request killed between its change and its event leaves (a pending outbox entry): the
 *   relay delivers it when the change happened and drops it when it did not.
 */
const DATABASE = 'webhook_kill_test';
const ROOT = join(__dirname, '..', '..');
const QUEUE = `webhook-kill-${Date.now()}`;
const CHANGES = 12;
jest.setTimeout(240_000);

let deps: TestDeps;
let tenantDb: TenantDb;
let key: string;
let api: ApiClient;
let apiProc: Proc | null = null;
let workerProc: Proc | null = null;
let starts = 0;
const receiver = new WebhookReceiver();

const env = () => {
  const { env: stackEnv } = testStack();
  return {
    ...process.env,
    ...stackEnv,
    MONGODB_DB: DATABASE,
    TEMPORAL_TASK_QUEUE: QUEUE,
    WEBHOOK_TARGETS: 'loopback',
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_RELAY_INTERVAL_MS: '500',
    LOG_LEVEL: 'warn',
  };
};

async function startApi(): Promise<void> {
  const port = await freePort();
  const proc = startNodeProcess(`api-webhook-kill-${++starts}`, join(ROOT, 'api', 'server.ts'), {
    cwd: ROOT,
    logDir: join(testStack().dataDir, 'logs'),
    env: { ...env(), PORT: String(port) },
  });
  await waitFor('the API', () => portOpen(port), { proc, timeoutMs: 60_000 });
  apiProc = proc;
  api = new ApiClient(key, `http://127.0.0.1:${port}`);
}

function startWorker(): void {
  workerProc = startNodeProcess(`worker-webhook-kill-${++starts}`, join(ROOT, 'worker', 'main.ts'), {
    cwd: ROOT,
    logDir: join(testStack().dataDir, 'logs'),
    env: env(),
  });
}

async function kill(proc: Proc | null): Promise<void> {
  if (!proc) return;
  proc.child.kill('SIGKILL');
  await proc.exited;
}

const until = (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 90_000) =>
  waitFor(what, async () => !!(await check()), { timeoutMs });

beforeAll(async () => {
  deps = await TestDeps.open({ database: DATABASE });
  const tenant = await deps.tenantWithKey();
  key = tenant.key;
  tenantDb = new TenantDb(deps.db, tenant.tenantId);
  await receiver.start();
  await startApi();
  startWorker();
  const created = await api.post('/webhooks', { url: receiver.url, eventTypes: ['*'] });
  expect(created.status).toBe(201);
  receiver.secrets = [created.body.secret];
});

afterAll(async () => {
  await apiProc?.stop();
  await workerProc?.stop();
  await receiver.close();
  await deps?.close();
});

/** The distinct events the receiver verified, by webhook-id. */
const distinct = () =>
  new Map(receiver.received.filter((r) => r.payload).map((r) => [r.headers['webhook-id'], r.payload!]));

test('worker and API killed between changes and their delivery: every event arrives', async () => {
  await kill(workerProc);
  workerProc = null;
  const ids: string[] = [];
  for (let i = 0; i < CHANGES; i++) {
    const res = await api.post('/customers', { name: `Kill ${i}`, email: `kill-${i}-${Date.now()}@example.com` });
    expect(res.status).toBe(201);
    ids.push(res.body.id);
    const renamed = await api.patch(`/customers/${res.body.id}`, { name: `Kill ${i} renamed` });
    expect(renamed.status).toBe(200);
  }
  await kill(apiProc);
  apiProc = null;
  expect(receiver.received).toHaveLength(0);

  await startApi();
  startWorker();
  await until('every event', () => [...distinct().values()].length >= 2 * CHANGES);
  const events = [...distinct().values()];
  const created = events.filter((e) => e.type === 'customer.created').map((e) => e.data.id);
  const updated = events.filter((e) => e.type === 'customer.updated');
  expect(created.sort()).toEqual([...ids].sort());
  expect(updated.map((e) => e.data.id).sort()).toEqual([...ids].sort());
  // the update came after the create: its sequence is higher, and it carries the new name
  for (const u of updated) {
    expect(u.data.sequence).toBeGreaterThan(
      events.find((e) => e.type === 'customer.created' && e.data.id === u.data.id)!.data.sequence,
    );
    expect(u.data.resource.name).toMatch(/renamed$/);
  }
  expect(events).toHaveLength(2 * CHANGES);
});

test('a worker killed while an attempt waits for the answer: the attempt is made again', async () => {
  receiver.received.length = 0;
  let calls = 0;
  receiver.respond = () => (++calls === 1 ? { status: 200, delayMs: 20_000 } : { status: 200 });
  const res = await api.post('/customers', { name: 'Slow answer' });
  expect(res.status).toBe(201);
  await until('the first attempt in flight', () => calls === 1, 30_000);
  await kill(workerProc);
  startWorker();
  await until('attempted again', () => calls >= 2, 120_000);
  await until('delivered', () =>
    receiver.received.some((r) => r.answered === 200 && r.payload?.data.id === res.body.id),
  );
  const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']));
  expect(ids.size).toBe(1);
  receiver.respond = () => ({ status: 200 });
});

test('a request killed between its change and its event: the relay decides from the resource', async () => {
  receiver.received.length = 0;
  const landed = await api.post('/customers', { name: 'Landed' });
  await until('its own event', () => receiver.events('customer.created').some((e) => e.data.id === landed.body.id));
  receiver.received.length = 0;
  // what such a request leaves: a pending entry, older than the relay's lease; for a change that
  // landed (the customer exists) and one that did not (no such customer)
  const outbox = tenantDb.collection(webhookOutbox);
  const old = new Date(Date.now() - 60_000);
  const entry = (k: string, id: string) => ({
    _id: eventIdOf(tenantDb.tenantId, k),
    state: 'pending' as const,
    type: 'customer.updated',
    resource: { kind: 'customer', id, expect: 'present' as const },
    createdAt: old,
  });
  await outbox.insertOne(entry('crash:landed', landed.body.id));
  await outbox.insertOne(entry('crash:never', 'ffffffffffffffffffffffff'));
  await until('the landed change delivered', () => receiver.events('customer.updated').length === 1);
  const [event] = receiver.events('customer.updated');
  expect(event.data).toMatchObject({ id: landed.body.id, resource: { name: 'Landed' } });
  expect(receiver.received[0].headers['webhook-id']).toBe(eventIdOf(tenantDb.tenantId, 'crash:landed'));
  await until('the outbox empty', async () => (await outbox.countDocuments({})) === 0, 30_000);
  await new Promise((r) => setTimeout(r, 1500));
  expect(receiver.events()).toHaveLength(1);
});

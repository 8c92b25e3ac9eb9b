import { allRoutes } from '../../api/routes';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { startWorker } from '../helpers/worker';
import { WebhookReceiver } from '../helpers/webhook-receiver';
import { waitFor, type Proc } from '../../scripts/stack/process';

/**
 * One endpoint's deliveries are attempted one at a time by its workflow, earliest due first
 * (workflows/webhooks/endpoint-deliveries.workflow.ts); docs/webhooks.md promises a failed
 * delivery is retried on its schedule, or when a 429/503's Retry-After says. Before, a due retry
 * was taken only when no new delivery was waiting: with events arriving a little faster than the
 * endpoint answered, a retry due 1 s after its 503 came 24 s later, after 38 newer deliveries
 * (under steady traffic, never).
 */
const QUEUE = `hook-due-first-${Date.now()}`;
const SCALE = 0.00001;
let deps: TestDeps;
let app: { url: string; close: () => Promise<void> };
let worker: Proc;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  deps = await TestDeps.open();
  worker = startWorker(QUEUE, 'hook-due-first-worker', undefined, {
    WEBHOOK_TARGETS: 'loopback',
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_RETRY_SCALE: String(SCALE),
    WEBHOOK_TIMEOUT_MS: '5000',
  });
  const webhooks = { ...deps.config.webhooks, targets: 'loopback' as const, allowHttp: true, retryScale: SCALE };
  app = await deps.serveApp(allRoutes, { taskQueue: QUEUE, webhooks });
}, 120_000);

afterAll(async () => {
  for (const r of receivers) await r.close();
  await app?.close();
  await worker?.stop();
  await deps?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a retry that is due is not starved by newer deliveries to the same endpoint', async () => {
  const client = new ApiClient((await deps.tenantWithKey()).key, app.url);
  const r = await new WebhookReceiver().start();
  receivers.push(r);
  const created = await client.post('/webhooks', { url: r.url, eventTypes: ['customer.created'] });
  expect(created.status).toBe(201);
  r.secrets = [created.body.secret];
  const id = created.body.id as string;

  // warm the endpoint's workflow up with one delivery
  r.respond = () => ({ status: 200 });
  expect((await client.post('/customers', { name: 'Warm-up' })).status).toBe(201);
  await waitFor('warm-up delivered', async () => r.events('customer.created').length === 1, { timeoutMs: 60_000 });

  // the first event is refused once with "come back in 1 s"; every other answer is a slow 200
  let first: string | null = null;
  r.respond = (req) => {
    if (req.payload?.data.resource.name === 'Retried' && first === null) {
      first = req.headers['webhook-id'];
      return { status: 503, headers: { 'retry-after': '1' } };
    }
    return { status: 200, delayMs: 400 };
  };
  expect((await client.post('/customers', { name: 'Retried' })).status).toBe(201);
  await waitFor('the 503', async () => first !== null, { timeoutMs: 30_000 });
  const refusedAt = r.received.find((x) => x.headers['webhook-id'] === first)!.at;

  // steady traffic: a new customer every 300 ms for 12 s (the endpoint takes 400 ms per event)
  for (let i = 0; i < 40; i++) {
    await client.post('/customers', { name: `Busy ${i}` });
    await sleep(300);
  }
  await waitFor('the retry', async () => r.received.filter((x) => x.headers['webhook-id'] === first).length === 2, {
    timeoutMs: 60_000,
  });
  const retriedAt = r.received.filter((x) => x.headers['webhook-id'] === first)[1].at;
  // those that arrived before it was due go first: at most the ones of its first 2 s
  const overtaking = r.received.filter((x) => x.at > refusedAt + 2000 && x.at < retriedAt).length;
  // due 1 s after the refusal; one attempt in flight (≤ 0.4 s) and some slack may delay it
  expect(retriedAt - refusedAt).toBeLessThan(4000);
  expect(overtaking).toBeLessThanOrEqual(5);
  const [delivery] = (await client.get(`/webhooks/${id}/deliveries?limit=100`)).body.deliveries.filter(
    (d: any) => d.eventId === first,
  );
  expect(delivery.status).toBe('delivered');
}, 180_000);

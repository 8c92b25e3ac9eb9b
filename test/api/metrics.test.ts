import { allRoutes } from '../../api/routes';
import { isFinished } from '../../shared/jobs/collection';
import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { http, TestDeps } from '../helpers/stack';
import { startWorker } from '../helpers/worker';
import { WebhookReceiver } from '../helpers/webhook-receiver';
import { freePort, waitFor, type Proc } from '../../scripts/stack/process';

/**
 * Metrics move when requests and jobs happen: the API's `GET /metrics` (request durations by
 * route template, jobs started) and a worker's endpoint (jobs finished by type and outcome, and
 * the Temporal SDK's own metrics relayed).
 */
const QUEUE = `metrics-${Date.now()}`;
const SECRET = 'metrics-signing-secret-0123456789';
let deps: TestDeps;
let app: { url: string; close: () => Promise<void> };
let worker: Proc;
let workerPort: number;
let channel: ChannelServer;
let api: ApiClient;

beforeAll(async () => {
  deps = await TestDeps.open();
  workerPort = await freePort();
  worker = startWorker(QUEUE, 'metrics-worker', undefined, { WORKER_METRICS_PORT: String(workerPort) });
  // every publication a job, so one product is enough to start and finish one
  app = await deps.serveApp(allRoutes, { taskQueue: QUEUE, publishSyncMax: 0 });
  channel = await new ChannelServer(SECRET).start();
  api = new ApiClient((await deps.tenantWithKey()).key, app.url);
}, 120_000);

afterAll(async () => {
  await channel?.close();
  await app?.close();
  await worker?.stop();
  await deps?.close();
});

/** The value of one series in a Prometheus text page (0 when absent). */
function valueOf(page: string, series: string): number {
  const line = page.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

const apiMetrics = async () => {
  const res = await http(app.url, 'GET', '/metrics');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return res.text;
};

test('request durations are counted by route template, method and status; unmatched paths are one series', async () => {
  const created = 'http_request_duration_seconds_count{route="/products",method="POST",status="201"}';
  const read = 'http_request_duration_seconds_count{route="/products/:id",method="GET",status="404"}';
  const unmatched = 'http_request_duration_seconds_count{route="(unmatched)",method="GET",status="404"}';
  const before = await apiMetrics();
  const sku = `MET${Date.now().toString(36).toUpperCase()}`;
  expect((await api.post('/products', { sku, title: { value: 'Metered' }, price: 1 })).status).toBe(201);
  expect((await api.get('/products/000000000000000000000000')).status).toBe(404);
  expect((await http(app.url, 'GET', `/nowhere/${sku}`)).status).toBe(404);
  const after = await apiMetrics();
  expect(valueOf(after, created) - valueOf(before, created)).toBe(1);
  expect(valueOf(after, read) - valueOf(before, read)).toBe(1);
  expect(valueOf(after, unmatched) - valueOf(before, unmatched)).toBe(1);
  // what a client typed never becomes a label
  expect(after).not.toContain(sku);
  expect(after).toContain('http_request_duration_seconds_bucket{le="0.005"');
  expect(after).toContain('process_resident_memory_bytes');
});

test('a job counts once when started (not again for a retried start) and once when finished, on the worker', async () => {
  const started = 'jobs_started_total{type="publication"}';
  const finished = 'jobs_finished_total{type="publication",outcome="completed"}';
  const workerUrl = `http://127.0.0.1:${workerPort}`;
  await waitFor(
    'the worker metrics endpoint',
    async () => (await fetch(`${workerUrl}/metrics`).catch(() => null))?.ok === true,
    {
      timeoutMs: 60_000,
      proc: worker,
    },
  );
  const page = async () => (await fetch(`${workerUrl}/metrics`)).text();
  const ch = await api.post('/channels', {
    name: 'Metrics channel',
    type: 'custom',
    settings: { endpointUrl: channel.url },
    secret: SECRET,
  });
  const sku = `MJ${Date.now().toString(36).toUpperCase()}`;
  await api.post('/products', {
    sku,
    title: { value: 'Published' },
    price: 3,
    status: 'active',
    media: [{ src: 'https://img.example.com/m.jpg', name: 'front', alt: { value: 'front' }, position: 0 }],
  });
  const apiBefore = await apiMetrics();
  const workerBefore = await page();
  const body = { channelId: ch.body.id, mode: 'single', productIds: [sku] };
  const res = await api.post('/products/export', body, { headers: { 'idempotency-key': `metrics-${sku}` } });
  expect(res.status).toBe(202);
  const again = await api.post('/products/export', body, { headers: { 'idempotency-key': `metrics-${sku}` } });
  expect(again.body.jobId).toBe(res.body.jobId);
  expect(valueOf(await apiMetrics(), started) - valueOf(apiBefore, started)).toBe(1);
  await waitFor(
    'the publication to finish',
    async () => isFinished((await api.get(`/products/export/${res.body.jobId}`)).body.status),
    {
      timeoutMs: 60_000,
    },
  );
  // the API can read the finished record before the worker, whose write it was, counts it
  let workerAfter = '';
  await waitFor(
    'the worker to count the finish',
    async () => valueOf((workerAfter = await page()), finished) > valueOf(workerBefore, finished),
    { timeoutMs: 10_000 },
  );
  expect(valueOf(workerAfter, finished) - valueOf(workerBefore, finished)).toBe(1);
  // the Temporal SDK's own metrics, relayed on the same page
  expect(workerAfter).toMatch(/^temporal_\w+/m);
  expect(workerAfter).toContain('process_resident_memory_bytes');
});

test('webhook delivery attempts are counted by outcome, on the worker', async () => {
  const page = async () => (await fetch(`http://127.0.0.1:${workerPort}/metrics`)).text();
  await waitFor(
    'the worker metrics endpoint',
    async () => (await fetch(`http://127.0.0.1:${workerPort}/metrics`).catch(() => null))?.ok === true,
    { timeoutMs: 60_000, proc: worker },
  );
  const receiver = await new WebhookReceiver().start();
  try {
    let calls = 0;
    receiver.respond = () => ({ status: ++calls === 1 ? 500 : 200 });
    const created = await api.post('/webhooks', { url: receiver.url, eventTypes: ['*'] });
    expect(created.status).toBe(201);
    receiver.secrets = [created.body.secret];
    const before = await page();
    await api.post(`/webhooks/${created.body.id}/test`);
    await waitFor('delivered after one failure', async () => receiver.events().length === 1, { timeoutMs: 60_000 });
    const delivered = 'webhook_deliveries_total{outcome="delivered"}';
    const failed = 'webhook_deliveries_total{outcome="failed"}';
    await waitFor('counted', async () => valueOf(await page(), delivered) - valueOf(before, delivered) === 1, {
      timeoutMs: 10_000,
    });
    expect(valueOf(await page(), failed) - valueOf(before, failed)).toBe(1);
  } finally {
    await receiver.close();
  }
});

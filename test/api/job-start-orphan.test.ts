import type { Client } from '@temporalio/client';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';
import { jobs } from '../../shared/jobs/collection';
import { ChannelServer } from '../helpers/channel-server';
import { ApiClient, type HttpResult } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * An API process that dies after writing a job's record and before starting its workflow. The
 * dying process is an app whose Temporal client never answers a start; the client, having had no
 * answer, retries with the same Idempotency-Key on the suite's API: the job runs, once.
 */
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let dying: ApiClient;
let closeDying: () => Promise<void>;
let tenantId: string;
let channels: ChannelServer;
/** Releases the dying app's stalled starts (they fail, as its process would have): once a case has ended. */
let release: () => void;
const P = `JO${Date.now().toString(36).toUpperCase()}`;

/** The suite's Temporal client, except that a workflow start never returns until `release`. */
function stalling(real: Client): Client {
  const gate = new Promise<void>((resolve) => (release = resolve));
  const workflow = new Proxy(real.workflow, {
    get(target, name) {
      if (name === 'start')
        return () =>
          gate.then(() => {
            throw new Error('the API process died');
          });
      const value = Reflect.get(target, name) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return new Proxy(real, { get: (target, name) => (name === 'workflow' ? workflow : Reflect.get(target, name)) });
}

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey();
  tenantId = t.tenantId;
  api = new ApiClient(t.key);
  const app = await deps.serveApp(undefined, {}, stalling(deps.temporal));
  dying = new ApiClient(t.key, app.url);
  closeDying = app.close;
  channels = await new ChannelServer(SECRET).start();
});
afterAll(async () => {
  release();
  await closeDying();
  await channels.close();
  await deps.close();
});

/** Sends a request to the dying app and waits until its job's record exists, its workflow unstarted. */
async function dieMidStart(type: string, key: string, send: () => Promise<HttpResult>) {
  void send().catch(() => undefined);
  const col = deps.db.collection(jobs.name);
  for (let i = 0; i < 200; i++) {
    // a client's key is kept with the time of its binding (`<key>@<ms>`); a rollback's is its operation id
    const job = await col.findOne({ tenantId, type, idempotencyKey: { $in: [key, new RegExp(`^${key}@\\d+$`)] } });
    if (job) {
      // older than a start can take: no live request is starting it any more
      await col.updateOne({ _id: job._id }, { $set: { createdAt: new Date(Date.now() - 10_000) } });
      return job;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the dying request wrote no ${type} job`);
}

async function until(read: () => Promise<HttpResult>, done: (body: any) => boolean): Promise<HttpResult> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await read();
    if (done(res.body)) return res;
    if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const withKey = (key: string) => ({ headers: { 'Idempotency-Key': key } });

async function product(sku: string): Promise<string> {
  const res = await api.post('/products', {
    sku,
    title: { value: 'Orphan test' },
    price: 10,
    status: 'active',
    brand: 'Acme',
    category: { name: 'Tools', path: 'Home > Tools' },
    media: [{ src: 'https://img.example.com/1.jpg', name: 'front', alt: { value: 'front' }, position: 0 }],
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

test('a CSV export whose first request died before its workflow: the retry runs it', async () => {
  await product(`${P}-X1`);
  const key = `${P}-export`;
  const body = { format: 'native', selection: 'all' };
  const orphan = await dieMidStart('csv-export', key, () =>
    dying.post('/products/bulk/csv/export', body, withKey(key)),
  );
  const retry = await api.post('/products/bulk/csv/export', body, withKey(key));
  expect(retry.status).toBe(202);
  expect(retry.body.jobId).toBe(orphan._id);
  const done = await until(
    () => api.get(`/products/bulk/csv/export/${orphan._id}`),
    (b) => b.status !== 'queued' && b.status !== 'processing',
  );
  expect(done.body).toMatchObject({ status: 'completed', count: 1 });
  // once more: the same job, not run again
  const again = await api.post('/products/bulk/csv/export', body, withKey(key));
  expect(again.body.jobId).toBe(orphan._id);
});

test('a publication whose first request died holding the channel lock: the retry publishes, and frees the lock', async () => {
  const ch = await api.post('/channels', {
    name: 'Orphan',
    type: 'custom',
    settings: { endpointUrl: channels.url },
    secret: SECRET,
  });
  expect(ch.status).toBe(201);
  const id = await product(`${P}-PUB`);
  const key = `${P}-publish`;
  const body = { channelId: ch.body.id, mode: 'selected', productIds: [id] };
  const orphan = await dieMidStart('publication', key, () => dying.post('/products/export', body, withKey(key)));
  const retry = await api.post('/products/export', body, withKey(key));
  expect(retry.status).toBe(201);
  expect(channels.skus()).toEqual([`${P}-PUB`]);
  expect(retry.body).toMatchObject({ jobId: orphan._id });
  // the lock went with the job: another publication to the channel runs
  const next = await api.post('/products/export', body);
  expect(next.status).toBe(201);
  expect(next.body.jobId).not.toBe(orphan._id);
});

test('a rollback whose first request died before its workflow: the retry rolls back, as the operation the job named', async () => {
  const sku = `${P}-RB`;
  const content = toCsvText(nativeLayout.columns, [{ sku, title: 'Rolled back', price: '1' }]);
  const imported = await api.post('/products/bulk/csv/import', { content, createIfNotExists: true });
  expect(imported.status).toBe(200);
  const url = `/products/bulk/operations/${imported.body.operationId}/rollback`;
  const orphan = await dieMidStart('bulk-rollback', imported.body.operationId, () => dying.post(url));
  const retry = await api.post(url);
  expect(retry.status).toBe(202);
  expect(retry.body).toMatchObject({ jobId: orphan._id, rollbackOperationId: orphan.input.rollbackOperationId });
  const done = await until(
    () => api.get(url),
    (b) => b.status !== 'queued' && b.status !== 'processing',
  );
  expect(done.body).toMatchObject({
    status: 'completed',
    deleted: 1,
    rollbackOperationId: orphan.input.rollbackOperationId,
  });
  expect((await api.get(`/products/sku/${sku}/exists`)).body.exists).toBe(false);
  const recorded = await api.get(`/products/bulk/operations/${orphan.input.rollbackOperationId}`);
  expect(recorded.body).toMatchObject({ type: 'rollback', status: 'completed' });
});

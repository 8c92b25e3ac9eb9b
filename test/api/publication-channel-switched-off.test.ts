import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { waitFor } from '../../scripts/stack/process';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';
import { isFinished } from '../../shared/jobs/collection';

/**
 * A channel switched off (inactive, disconnected) or deleted while a publication to it runs
 * receives nothing more: the products not yet sent are skipped with the spec's per-product literal
 * (CHANNEL_INACTIVE, or CHANNEL_NOT_FOUND for a deleted channel), and published + failed + skipped
 * still add up to the job's total.
 */
const SECRET = 'switched-off-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let server: ChannelServer;
const P = `SWO${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'publication channel switched off');
  api = new ApiClient(t.key);
  server = await new ChannelServer(SECRET).start();
});
afterAll(async () => {
  await server.close();
  await deps.close();
});

async function catalog(prefix: string, n: number): Promise<string[]> {
  const skus = Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(3, '0')}`);
  const imp = await api.post('/products/bulk/csv/import', {
    format: 'native',
    content: toCsvText(
      nativeLayout.columns,
      skus.map((sku) => ({ sku, title: `T ${sku}`, price: '5' })),
    ),
    createIfNotExists: true,
  });
  expect(imp.status).toBe(200);
  return skus;
}

async function channel(): Promise<string> {
  const ch = await api.post('/channels', {
    name: `Shop ${Math.random()}`,
    type: 'custom',
    settings: { endpointUrl: server.url, concurrency: 1 },
    secret: SECRET,
  });
  expect(ch.status).toBe(201);
  return ch.body.id;
}

/** Starts a publication of `skus` and answers once the channel holds its first send. */
async function publishHeld(channelId: string, prefix: string, skus: string[]): Promise<string> {
  server.hold();
  const res = await api.post('/products/export', {
    channelId,
    mode: 'selected',
    productIds: skus,
    options: { enableCategorization: false },
  });
  expect(res.status).toBe(202);
  await waitFor('a send held by the channel', async () => server.received.some((r) => r.sku.startsWith(prefix)), {
    timeoutMs: 60_000,
  });
  return res.body.jobId;
}

async function finished(jobId: string) {
  let job: any;
  for (let i = 0; i < 600; i++) {
    job = (await api.get(`/products/export/${jobId}`)).body;
    if (isFinished(job.status)) return job;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`job ${jobId} did not finish: ${JSON.stringify(job)}`);
}

test('a channel made inactive mid-publication gets no further product; the rest is skipped CHANNEL_INACTIVE', async () => {
  const prefix = `${P}A`;
  const skus = await catalog(prefix, 30);
  const channelId = await channel();
  const jobId = await publishHeld(channelId, prefix, skus);
  expect((await api.put(`/channels/${channelId}`, { status: 'inactive' })).status).toBe(200);
  server.release();

  const job = await finished(jobId);
  const sent = server.received.filter((r) => r.sku.startsWith(prefix)).length;
  expect(job).toMatchObject({ status: 'completed', total: 30, published: sent, failed: 0, skipped: 30 - sent });
  // the send under way when the switch came ends; the next one reads the channel first
  expect(sent).toBe(1);
  const bound = await api.get(`/products/${skus[1]}`);
  expect((bound.body.bindings ?? []).filter((b: any) => b.channelId === channelId)).toEqual([]);
}, 180_000);

test('a channel deleted mid-publication: every product not yet sent is skipped CHANNEL_NOT_FOUND, next batches too', async () => {
  const prefix = `${P}B`;
  const skus = await catalog(prefix, 260); // two batches of at most 250
  const channelId = await channel();
  const jobId = await publishHeld(channelId, prefix, skus);
  expect((await api.delete(`/channels/${channelId}`)).status).toBe(200);
  server.release();

  const job = await finished(jobId);
  const sent = server.received.filter((r) => r.sku.startsWith(prefix)).length;
  expect(sent).toBe(1);
  expect(job).toMatchObject({ status: 'completed', total: 260, published: 1, failed: 0, skipped: 259 });
}, 180_000);

test('a sync publication to a channel switched off while it runs answers each skipped product CHANNEL_INACTIVE', async () => {
  const prefix = `${P}C`;
  const skus = await catalog(prefix, 3);
  const channelId = await channel();
  server.hold();
  const pending = api.post('/products/export', {
    channelId,
    mode: 'selected',
    productIds: skus,
    options: { enableCategorization: false },
  });
  await waitFor('a send held by the channel', async () => server.received.some((r) => r.sku.startsWith(prefix)), {
    timeoutMs: 60_000,
  });
  expect((await api.put(`/channels/${channelId}`, { status: 'disconnected' })).status).toBe(200);
  server.release();
  const res = await pending;
  expect(res.status).toBe(201);
  const first = server.received.find((r) => r.sku.startsWith(prefix))!.sku;
  expect(res.body.results).toEqual(
    expect.arrayContaining(
      skus.map((sku) => (sku === first ? { sku, success: true } : { sku, success: false, error: 'CHANNEL_INACTIVE' })),
    ),
  );
  expect(res.body.results).toHaveLength(3);
}, 180_000);

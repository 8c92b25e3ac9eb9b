import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { waitFor } from '../../scripts/stack/process';
import { isFinished } from '../../shared/jobs/collection';

/**
 * A batch sends a few products at once. When one send fails (the channel answers 5xx) while
 * another is still under way, the batch must not be reported failed before that other send has
 * ended: otherwise its answer lands after the job has been counted and closed, and the channel
 * holds a product the job says it did not publish.
 */
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let server: ChannelServer;
const P = `PBF${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey();
  api = new ApiClient(t.key);
  server = await new ChannelServer(SECRET).start();
});
afterAll(async () => {
  await server.close();
  await deps.close();
});

async function finished(jobId: string) {
  for (let i = 0; i < 600; i++) {
    const res = await api.get(`/products/export/${jobId}`);
    if (isFinished(res.body.status)) return res.body;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('not finished');
}

test('a send failing while another is under way: nothing reaches the channel or the bindings after the job ends', async () => {
  // two sends in flight; a time-out long enough that only the channel decides when the held send ends
  const ch = await api.post('/channels', {
    name: `C${++n}`,
    type: 'custom',
    settings: { endpointUrl: server.url, concurrency: 2, timeoutMs: 60_000 },
    secret: SECRET,
  });
  expect(ch.status).toBe(201);
  const channelId = ch.body.id as string;
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) {
    const res = await api.post('/products', {
      sku: `${P}-${++n}`,
      title: { value: 'Product' },
      price: 10,
      status: 'active',
      brand: 'Acme',
      media: [{ src: 'https://img.example.com/1.jpg', name: 'front', alt: { value: 'front' }, position: 0 }],
    });
    ids.push(res.body.id);
  }
  // the first send is answered 503 at once, the other one is held by the channel
  server.hold();
  server.errorNext = 1;
  const res = await api.post('/products/export', { channelId, mode: 'selected', productIds: ids });
  expect(res.status).toBe(202);
  const jobId = res.body.jobId as string;
  await waitFor('one send failed, one held', async () => server.errorNext === 0 && server.heldCount() === 1, {
    timeoutMs: 60_000,
  });

  const cancel = await api.post(`/products/export/${jobId}/cancel`, { reason: 'stop' });
  expect(cancel.status).toBeLessThan(300);
  const job = await finished(jobId);
  expect(job.status).toBe('cancelled');

  // the channel answers the held send now; give whatever still runs time to write
  server.release();
  await waitFor('the channel answered', async () => server.received.every((r) => r.outcome !== undefined), {
    timeoutMs: 30_000,
  });
  await new Promise((r) => setTimeout(r, 1500));

  const after = (await api.get(`/products/export/${jobId}`)).body;
  const publishedAtChannel = [...server.published.keys()].filter((k) => k.startsWith(`${jobId}:`));
  expect(publishedAtChannel.length).toBe(after.published);
  const synced: string[] = [];
  for (const id of ids) {
    const p = (await api.get(`/products/${id}`)).body;
    const b = (p.bindings ?? []).find((x: { channelId: string }) => x.channelId === channelId);
    if (b?.syncStatus === 'synced') synced.push(p.sku);
  }
  expect(synced.length).toBe(after.published);
});

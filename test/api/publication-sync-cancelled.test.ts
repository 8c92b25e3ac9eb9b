import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { waitFor } from '../../scripts/stack/process';

/**
 * A sync publication cancelled while it runs was cut short: its waiting caller gets 400
 * PRODUCT_EXPORT_FAILED naming the cancel and the job (whose counts and items have each product's
 * outcome), never the 201 of a publication that tried every product.
 */
const SECRET = 'cancel-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let server: ChannelServer;
const P = `RCS${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'sync publication cancelled');
  api = new ApiClient(t.key);
  server = await new ChannelServer(SECRET).start();
});
afterAll(async () => {
  await server.close();
  await deps.close();
});

test('a cancelled sync publication does not answer 201 success with no result per product', async () => {
  const ch = await api.post('/channels', {
    name: 'Shop',
    type: 'custom',
    settings: { endpointUrl: server.url, concurrency: 1 },
    secret: SECRET,
  });
  expect(ch.status).toBe(201);
  const skus = [`${P}-1`, `${P}-2`, `${P}-3`];
  for (const sku of skus) {
    const res = await api.post('/products', { sku, title: { value: sku }, price: 10, status: 'active' });
    expect(res.status).toBe(201);
  }
  server.hold();
  const pending = api.post('/products/export', { channelId: ch.body.id, mode: 'selected', productIds: skus });
  await waitFor('a send held by the channel', async () => server.received.some((r) => r.sku.startsWith(P)), {
    timeoutMs: 60_000,
  });
  const list = await api.get('/products/export');
  const jobId = list.body.jobs[0].jobId as string;
  const cancel = await api.post(`/products/export/${jobId}/cancel`, { reason: 'stop' });
  expect(cancel.status).toBe(200);
  server.release();
  const res = await pending;
  const job = await api.get(`/products/export/${jobId}`);
  expect(job.body).toMatchObject({ status: 'cancelled', total: 3 });
  expect(job.body.published).toBeLessThan(3);
  expect({ status: res.status, code: res.body.code, jobId: res.body.details?.jobId }).toEqual({
    status: 400,
    code: 'PRODUCT_EXPORT_FAILED',
    jobId,
  });
  expect(res.body.message).toContain('cancelled (stop)');
  expect(res.body.message).toContain(`${job.body.published} of 3 products published`);
});

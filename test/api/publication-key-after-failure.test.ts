import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';

/**
 * A sync publication whose products failed (400 PRODUCT_EXPORT_FAILED) ran as a job: its
 * Idempotency-Key stays bound to it. A retry of the same request answers the same failure with
 * the same job; another request under the key is 409 idempotency-key-reused.
 */
const SECRET = 'pubkey-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let server: ChannelServer;
const P = `RIK${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'publication key after failure');
  api = new ApiClient(t.key);
  server = await new ChannelServer(SECRET).start();
});
afterAll(async () => {
  await server.close();
  await deps.close();
});

async function product(sku: string) {
  const res = await api.post('/products', {
    sku,
    title: { value: sku },
    price: 10,
    status: 'active',
    brand: 'Acme',
    media: [{ src: 'https://img.example.com/1.jpg', name: 'front', alt: { value: 'front' }, position: 0 }],
  });
  expect(res.status).toBe(201);
}

test('another request under the key of a failed sync publication is 409, not the old job’s answer', async () => {
  const ch = await api.post('/channels', {
    name: 'Shop',
    type: 'custom',
    settings: { endpointUrl: server.url },
    secret: SECRET,
  });
  expect(ch.status).toBe(201);
  await product(`${P}-X`);
  await product(`${P}-Y`);
  server.failSkus.set(`${P}-X`, { status: 422, message: 'bad product' });
  const headers = { headers: { 'Idempotency-Key': `${P}-key` } };

  const first = await api.post(
    '/products/export',
    { channelId: ch.body.id, mode: 'single', productIds: [`${P}-X`] },
    headers,
  );
  expectError(first, 400, 'PRODUCT_EXPORT_FAILED');

  // the same request again: the same job's answer
  const retry = await api.post(
    '/products/export',
    { channelId: ch.body.id, mode: 'single', productIds: [`${P}-X`] },
    headers,
  );
  expectError(retry, 400, 'PRODUCT_EXPORT_FAILED');
  expect(retry.body.details.jobId).toBe(first.body.details.jobId);

  // a different request (another product) under the same key
  const second = await api.post(
    '/products/export',
    { channelId: ch.body.id, mode: 'single', productIds: [`${P}-Y`] },
    headers,
  );
  expect({ status: second.status, code: second.body?.code }).toEqual({ status: 409, code: 'idempotency-key-reused' });
  // with a key of its own it publishes
  const own = await api.post('/products/export', { channelId: ch.body.id, mode: 'single', productIds: [`${P}-Y`] });
  expect(own.status).toBe(201);
});

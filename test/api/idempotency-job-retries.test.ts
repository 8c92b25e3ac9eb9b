import { randomUUID } from 'node:crypto';
import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { idempotencyKeys } from '../../shared/idempotency/keys';

/**
 * A retried job start (same Idempotency-Key, same request) answers the job its first request
 * started, even when the request would be refused now: its channel paused, its product deleted
 * since. A key used more than 24 hours ago is free again: a new request under it starts a new job.
 */
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let server: ChannelServer;
const P = `IJR${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'idempotency job retries');
  tenantId = t.tenantId;
  api = new ApiClient(t.key);
  server = await new ChannelServer(SECRET).start();
});
afterAll(async () => {
  await server.close();
  await deps.close();
});

const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });

async function product(sku: string): Promise<string> {
  const res = await api.post('/products', {
    sku,
    title: { value: sku },
    price: 10,
    status: 'active',
    brand: 'Acme',
    category: { name: 'Tools', path: 'Home > Tools' },
    media: [{ src: 'https://img.example.com/1.jpg', name: 'front', alt: { value: 'front' }, position: 0 }],
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function channel(name: string): Promise<string> {
  const res = await api.post('/channels', {
    name,
    type: 'custom',
    settings: { endpointUrl: server.url },
    secret: SECRET,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

test('a retried publication answers its job even when the channel was paused since', async () => {
  const ch = await channel(`Paused ${P}`);
  const id = await product(`${P}-PAUSE`);
  const key = randomUUID();
  const body = { channelId: ch, mode: 'selected', productIds: [id] };
  const first = await api.post('/products/export', body, withKey(key));
  expect(first.status).toBe(201);
  expect((await api.put(`/channels/${ch}`, { status: 'inactive' })).status).toBe(200);
  const retry = await api.post('/products/export', body, withKey(key));
  expect([retry.status, retry.body.code, retry.body.jobId]).toEqual([201, undefined, first.body.jobId]);
});

test('a retried publication answers its job even when its product was deleted since', async () => {
  const ch = await channel(`Deleted ${P}`);
  const id = await product(`${P}-GONE`);
  const key = randomUUID();
  const body = { channelId: ch, mode: 'selected', productIds: [id] };
  const first = await api.post('/products/export', body, withKey(key));
  expect(first.status).toBe(201);
  expect((await api.delete(`/products/${id}`)).status).toBeLessThan(300);
  const retry = await api.post('/products/export', body, withKey(key));
  expect([retry.status, retry.body.code, retry.body.jobId]).toEqual([201, undefined, first.body.jobId]);
});

// the 24 hours are simulated by ageing the key's binding, as its expiry check sees it
test('a key used more than 24 hours ago starts a new job for a new request, not the old one', async () => {
  const id = await product(`${P}-OLD`);
  const key = randomUUID();
  const first = await api.post('/products/bulk/csv/export', { format: 'native', selection: 'all' }, withKey(key));
  expect(first.status).toBe(202);
  await new TenantDb(deps.db, tenantId)
    .collection(idempotencyKeys)
    .updateOne({ _id: `${tenantId}:${key}` }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
  const later = await api.post(
    '/products/bulk/csv/export',
    { format: 'native', selection: 'selected', productIds: [id] },
    withKey(key),
  );
  expect(later.status).toBe(202);
  expect(later.body.jobId).not.toBe(first.body.jobId);
});

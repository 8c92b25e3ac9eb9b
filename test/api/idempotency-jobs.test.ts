import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';

/**
 * Routes that start jobs find a retry's job by its Idempotency-Key, and the key is bound to the
 * request: the same key with another request is 409 idempotency-key-reused, and that request is
 * not run (the contract the OpenAPI document states on every such route). A sync CSV import keeps
 * its first answer for its retry.
 */
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let server: ChannelServer;
const P = `IJ${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key);
  server = await new ChannelServer(SECRET).start();
});
afterAll(async () => {
  await server.close();
  await deps.close();
});

const key = () => ({ headers: { 'Idempotency-Key': `${P}-${++n}` } });
async function product(sku: string) {
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
const file = (sku: string) => toCsvText(nativeLayout.columns, [{ sku, title: `T ${sku}`, price: '5' }]);

test('the OpenAPI document promises 409 idempotency-key-reused on the job routes', async () => {
  const doc = (await new ApiClient().get('/openapi.json')).body;
  for (const path of [
    '/products/bulk/flow/execute',
    '/products/bulk/ai/transform',
    '/products/export',
    '/products/bulk/csv/export',
    '/products/bulk/csv/import',
  ]) {
    const param = doc.paths[path].post.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key');
    expect({ path, description: param?.description }).toEqual({
      path,
      description: expect.stringContaining('409 `idempotency-key-reused`'),
    });
  }
});

test('a retried sync CSV import answers its first answer; another file under the key is 409, not run', async () => {
  const headers = key();
  const body = { format: 'native', content: file(`${P}-A`), createIfNotExists: true };
  const first = await api.post('/products/bulk/csv/import', body, headers);
  expect(first).toMatchObject({ status: 200, body: { created: 1 } });
  const again = await api.post('/products/bulk/csv/import', body, headers);
  expect({ status: again.status, body: again.body }).toEqual({ status: 200, body: first.body });
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  const other = { ...body, content: file(`${P}-B`) };
  expectError(await api.post('/products/bulk/csv/import', other, headers), 409, 'idempotency-key-reused');
  expect((await api.get(`/products/sku/${P}-B/exists`)).body.exists).toBe(false);
});

test('an async CSV export: the same request answers its job, another under the key is 409', async () => {
  await product(`${P}-C`);
  const headers = key();
  const body = { format: 'native', selection: 'all' };
  const first = await api.post('/products/bulk/csv/export', body, headers);
  expect(first.status).toBe(202);
  const again = await api.post('/products/bulk/csv/export', body, headers);
  expect(again.body.jobId).toBe(first.body.jobId);
  const other = { format: 'shopify', selection: 'selected', productIds: [`${P}-C`] };
  expectError(await api.post('/products/bulk/csv/export', other, headers), 409, 'idempotency-key-reused');
});

test('a publication with a used key and another selection is 409, and nothing of it is sent', async () => {
  const ch = await api.post('/channels', {
    name: 'Shop',
    type: 'custom',
    settings: { endpointUrl: server.url },
    secret: SECRET,
  });
  expect(ch.status).toBe(201);
  await product(`${P}-D`);
  await product(`${P}-E`);
  const headers = key();
  const first = await api.post(
    '/products/export',
    { channelId: ch.body.id, mode: 'single', productIds: [`${P}-D`] },
    headers,
  );
  expect(first.status).toBe(201);
  const second = await api.post(
    '/products/export',
    { channelId: ch.body.id, mode: 'single', productIds: [`${P}-E`] },
    headers,
  );
  expectError(second, 409, 'idempotency-key-reused');
  expect(server.received.map((r) => r.sku)).not.toContain(`${P}-E`);
});

test('a flow run with a used key and another flow is 409, and the product keeps the first run’s change', async () => {
  const id = await product(`${P}-F`);
  const headers = key();
  const setPrice = (value: number) => ({
    selection: { skus: [`${P}-F`] },
    rules: [{ actions: [{ type: 'set', field: 'price', value }] }],
  });
  expect((await api.post('/products/bulk/flow/execute', setPrice(12), headers)).status).toBe(200);
  expectError(await api.post('/products/bulk/flow/execute', setPrice(99), headers), 409, 'idempotency-key-reused');
  expect((await api.get(`/products/${id}`)).body.price).toBe(12);
});

test('a refused request does not bind its key: the corrected request runs under it', async () => {
  const headers = key();
  const s3Key = `uploads/${tenantId}/never-uploaded.csv`;
  expectError(await api.post('/products/bulk/csv/import', { s3Key }, headers), 404, 'not-found/s3-object');
  const body = { format: 'native', content: file(`${P}-G`), createIfNotExists: true };
  expect(await api.post('/products/bulk/csv/import', body, headers)).toMatchObject({
    status: 200,
    body: { created: 1 },
  });
});

import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';

/**
 * A product's channel bindings: two publications at once each write their own, and both stay; a
 * rollback of an earlier import keeps them.
 */
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let server: ChannelServer;
const P = `PB${Date.now().toString(36).toUpperCase()}`;

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

async function channel(name: string) {
  const res = await api.post('/channels', {
    name,
    type: 'custom',
    settings: { endpointUrl: server.url },
    secret: SECRET,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

test('a product published to channels A and B concurrently keeps both bindings', async () => {
  const a = await channel('A');
  const b = await channel('B');
  const res = await api.post('/products', {
    sku: `${P}-1`,
    title: { value: 'Product' },
    price: 10,
    status: 'active',
    brand: 'Acme',
    category: { name: 'Tools', path: 'Home > Tools' },
    media: [{ src: 'https://img.example.com/1.jpg', name: 'front', alt: { value: 'front' }, position: 0 }],
  });
  expect(res.status).toBe(201);
  const id = res.body.id as string;
  server.delayMs = 1500; // the channel answers slowly: both batches read the product before either writes
  const [ra, rb] = await Promise.all([
    api.post('/products/export', { channelId: a, mode: 'selected', productIds: [id] }),
    api.post('/products/export', { channelId: b, mode: 'selected', productIds: [id] }),
  ]);
  server.delayMs = 0;
  expect(ra.status).toBe(201);
  expect(rb.status).toBe(201);
  const read = await api.get(`/products/${id}`);
  const bound = (read.body.bindings as { channelId: string }[]).map((x) => x.channelId).sort();
  expect(bound).toEqual([a, b].sort());
});

test('rolling back an import keeps the binding a publication recorded after it; the import’s change is undone', async () => {
  const ch = await channel('C');
  const sku = `${P}-2`;
  const created = await api.post('/products', {
    sku,
    title: { value: 'Mug' },
    price: 10,
    status: 'active',
    brand: 'Acme',
    category: { name: 'Tools', path: 'Home > Tools' },
    media: [{ src: 'https://img.example.com/1.jpg', name: 'front', alt: { value: 'front' }, position: 0 }],
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  // the import adds a variant (a change of the product's SKUs, written whole)
  const row = {
    sku,
    title: 'Mug',
    price: '10',
    'variant.sku': `${sku}-L`,
    'variant.title': 'L',
    'variant.price': '12',
  };
  const imp = await api.post('/products/bulk/csv/import', {
    content: toCsvText(nativeLayout.columns, [{ ...row, 'variant.position': '0' }]),
    format: 'native',
  });
  expect(imp.body).toMatchObject({ updated: 1, errors: [] });
  const pub = await api.post('/products/export', { channelId: ch, mode: 'selected', productIds: [id] });
  expect(pub.body.results).toEqual([{ sku, success: true }]);

  const operationId = imp.body.operationId as string;
  expect((await api.post(`/products/bulk/operations/${operationId}/rollback`)).status).toBe(202);
  let status = '';
  for (let i = 0; i < 300 && status !== 'completed' && status !== 'failed'; i++) {
    await new Promise((r) => setTimeout(r, 200));
    status = (await api.get(`/products/bulk/operations/${operationId}/rollback`)).body.status;
  }
  expect(status).toBe('completed');
  const after = (await api.get(`/products/${id}`)).body;
  expect(after.variants).toEqual([]);
  expect(after.bindings).toEqual([expect.objectContaining({ channelId: ch })]);
});

import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/** Two publications of one product to two channels at once: each writes its own binding, and both stay. */
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

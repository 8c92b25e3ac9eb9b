import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';

/**
 * A product's channel bindings: two publications at once each write their own, and both stay; a
 * rollback of an earlier import keeps them. A publication writes only bindings the product's own
 * schema accepts, so the product can still be imported over afterwards: a channel of the
 * catalog-only type `pos` (which a binding may not name) is published to without a binding, and a
 * handle the channel answers blank or too long gives way to the SKU. Each binding written has an
 * id, kept when the binding is written again.
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

async function channel(name: string, type = 'custom', endpointUrl = server.url) {
  const res = await api.post('/channels', { name, type, settings: { endpointUrl }, secret: SECRET });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function activeProduct(sku: string) {
  const res = await api.post('/products', {
    sku,
    title: { value: 'Mug' },
    price: 10,
    status: 'active',
    media: [{ src: 'https://img.example.com/1.jpg', name: 'front', alt: { value: 'front' }, position: 0 }],
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

/** A CSV import that changes only the price: it keeps the product's bindings as they are. */
async function importPrice(sku: string, price: string) {
  const content = toCsvText(nativeLayout.columns, [{ sku, title: 'Mug', price }]);
  const res = await api.post('/products/bulk/csv/import', { format: 'native', content });
  return { status: res.status, errors: res.body.errors, updated: res.body.updated };
}

/** A channel that answers every send with `answer` (200), and 404 to anything else. */
async function answeringChannel(answer: unknown) {
  const http = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(req.method === 'PUT' ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(req.method === 'PUT' ? answer : { message: 'no' }));
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    close: () => new Promise((r) => http.close(r)),
  };
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

test('a product published to a pos channel gets no binding and can still be updated by a CSV import', async () => {
  const ch = await channel('Store POS', 'pos');
  const sku = `${P}-POS`;
  const id = await activeProduct(sku);
  const pub = await api.post('/products/export', { channelId: ch, mode: 'single', productIds: [sku] });
  expect(pub.status).toBe(201);
  expect(pub.body.results).toEqual([{ sku, success: true }]);
  expect(server.received.filter((r) => r.sku === sku)).toHaveLength(1);
  expect((await api.get(`/products/${id}`)).body.bindings).toEqual([]);

  expect(await importPrice(sku, '12')).toEqual({ status: 200, errors: [], updated: 1 });
  expect((await api.get(`/products/${id}`)).body.price).toBe(12);
});

test.each([
  ['empty', { handle: '' }],
  ['blank', { handle: '   ' }],
  ['longer than 500 characters', { handle: 'h'.repeat(501) }],
])(
  'a handle the channel answers %s is stored as the SKU; the product can still be imported over',
  async (_, answer) => {
    const channelServer = await answeringChannel(answer);
    try {
      const ch = await channel('Odd handles', 'custom', channelServer.url);
      const sku = `${P}-H${answer.handle.length}`;
      const id = await activeProduct(sku);
      const pub = await api.post('/products/export', { channelId: ch, mode: 'single', productIds: [sku] });
      expect(pub.status).toBe(201);
      expect((await api.get(`/products/${id}`)).body.bindings).toEqual([
        expect.objectContaining({ channelId: ch, type: 'custom', handle: sku, syncStatus: 'synced' }),
      ]);
      expect(await importPrice(sku, '12')).toEqual({ status: 200, errors: [], updated: 1 });
    } finally {
      await channelServer.close();
    }
  },
);

test('a binding a publication writes has an id, kept by later publications and imports', async () => {
  const ch = await channel('D');
  const sku = `${P}-ID`;
  const id = await activeProduct(sku);
  const publish = () => api.post('/products/export', { channelId: ch, mode: 'single', productIds: [sku] });
  const bindings = async () => (await api.get(`/products/${id}`)).body.bindings as { id: string; handle: string }[];

  expect((await publish()).status).toBe(201);
  const [first] = await bindings();
  expect(first).toMatchObject({ id: expect.stringMatching(/^bnd_/), channelId: ch, handle: `ch-${sku.toLowerCase()}` });

  expect(await importPrice(sku, '12')).toEqual({ status: 200, errors: [], updated: 1 });
  expect((await publish()).status).toBe(201);
  expect(await importPrice(sku, '13')).toEqual({ status: 200, errors: [], updated: 1 });
  const after = await bindings();
  expect(after).toHaveLength(1);
  expect(after[0].id).toBe(first.id);
});

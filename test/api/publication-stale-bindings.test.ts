import { waitFor } from '../../scripts/stack/process';
import { closeHarness, openHarness, type Harness } from '../helpers/publication-harness';

/**
 * A binding's syncStatus says whether the channel holds the product as it is (spec: synced,
 * pending, error); validate's `published` and pending feeds are built on it. A product changed
 * after (or while) it was sent is no longer what the channel holds. Before, a binding stayed
 * `synced` through every later write: validate listed the edited product as published, pending
 * feeds listed nothing, and an edit made during the send was reported synced.
 */
let h: Harness;
beforeAll(async () => {
  h = await openHarness('RVE');
});
afterAll(() => closeHarness(h));

const body = (sku: string, price: number, bindings?: unknown) => ({
  sku,
  title: { value: 'Edited' },
  price,
  status: 'active',
  brand: 'Acme',
  category: { name: 'Tools', path: 'Home > Tools' },
  media: [{ src: 'https://img.example.com/e.jpg', name: 'front', alt: { value: 'front' }, position: 0 }],
  ...(bindings ? { bindings } : {}),
});

test('a product edited while its publication is in flight is not reported synced with the old data on the channel', async () => {
  const ch = await h.channel();
  const p = await h.product();
  h.server.hold();
  const pending = h.api.post('/products/export', { channelId: ch, mode: 'single', productIds: [p.sku] });
  try {
    await waitFor('the send held by the channel', async () => h.server.received.some((r) => r.sku === p.sku), {
      timeoutMs: 60_000,
    });
    // the merchant changes the price while the old one is on its way
    const put = await h.api.put(`/products/${p.id}`, body(p.sku, 99));
    expect(put.status).toBe(200);
  } finally {
    h.server.release();
  }
  const res = await pending;
  expect(res.status).toBe(201);
  expect(h.server.received.find((r) => r.sku === p.sku)!.body.price).toBe(10); // the channel holds 10
  const read = await h.api.get(`/products/${p.id}`);
  expect(read.body.price).toBe(99);
  const binding = read.body.bindings.find((b: { channelId: string }) => b.channelId === ch);
  // the publication recorded the version it sent, which the edit has since moved past
  expect(binding.syncStatus).not.toBe('synced');
});

test('a published product edited afterwards: validate does not list it as published, pending feeds lists the feed', async () => {
  const ch = await h.channel();
  const p = await h.product();
  const res = await h.api.post('/products/export', { channelId: ch, mode: 'single', productIds: [p.sku] });
  expect(res.status).toBe(201);
  expect(res.body.results).toEqual([{ sku: p.sku, success: true }]);
  const before = await h.api.post('/products/export/validate', {
    channelId: ch,
    selectionMode: 'selected',
    skus: [p.sku],
  });
  expect(before.body.published.map((x: { sku: string }) => x.sku)).toEqual([p.sku]);
  // the price changes; the bindings are sent back as read
  const read = await h.api.get(`/products/${p.id}`);
  const put = await h.api.put(`/products/${p.id}`, body(p.sku, 25, read.body.bindings));
  expect(put.status).toBe(200);
  const after = await h.api.post('/products/export/validate', {
    channelId: ch,
    selectionMode: 'selected',
    skus: [p.sku],
  });
  const feeds = await h.api.get('/products/export/pending-feeds', { query: { sku: p.sku, destination: 'custom' } });
  // the channel holds price 10, the product 25
  expect({
    published: after.body.published.map((x: { sku: string }) => x.sku),
    feeds: feeds.body.feeds.map((f: { channelId: string }) => f.channelId),
  }).toEqual({ published: [], feeds: [ch] });
});

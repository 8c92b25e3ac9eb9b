import { closeHarness, openHarness, type Harness } from '../helpers/publication-harness';

/**
 * A channel answering 5xx is retried with backoff (docs/publication.md); once the retries are
 * spent the job fails, and every product without an outcome is recorded failed with
 * `CHANNEL_UNAVAILABLE` and the channel's answer: the sync answer has one result per product and
 * the job's published, failed and skipped add up to its total. Their bindings are left as they
 * were (nothing is known to have reached the channel). Before, the answer's results were [] and
 * the failed job counted 0 of 0 of its 2 products.
 */
jest.setTimeout(420_000);
let h: Harness;
beforeAll(async () => {
  h = await openHarness('PCD');
});
afterAll(() => closeHarness(h));

test('a channel answering 503 to every send: a failed result per product, and the counts add up', async () => {
  const ch = await h.channel();
  const items = [await h.product(), await h.product()];
  h.server.errorNext = 1_000_000;
  let res;
  try {
    res = await h.api.post('/products/export', {
      channelId: ch,
      mode: 'selected',
      productIds: items.map((i) => i.sku),
    });
  } finally {
    h.server.errorNext = 0;
  }
  expect(res.status).toBe(400);
  expect(res.body.code).toBe('PRODUCT_EXPORT_FAILED');
  expect(res.body.message).toMatch(/503/);
  const results = res.body.details.results as { sku: string; success: boolean; error: string }[];
  expect(results.map((r) => r.sku).sort()).toEqual(items.map((i) => i.sku).sort());
  for (const r of results) {
    expect(r.success).toBe(false);
    expect(r.error).toMatch(/^CHANNEL_UNAVAILABLE: /);
  }
  const job = await h.finished(res.body.details.jobId);
  expect(job).toMatchObject({ status: 'failed', total: 2, published: 0, failed: 2, skipped: 0 });
  // a keyless repeat is a new job: the channel is free again, and the product was never bound
  const read = await h.api.get(`/products/${items[0].id}`);
  expect(read.body.bindings).toEqual([]);
});

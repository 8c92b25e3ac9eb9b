import { waitFor } from '../../scripts/stack/process';
import { closeHarness, openHarness, type Harness } from '../helpers/publication-harness';

/**
 * The status of a running publication is its live progress (docs/publication.md: the list "shows
 * each running job with its live progress as the read by id does"): the products of the batch
 * under way count as they settle, not once their batch of 250 has ended. A cancelled job's
 * percent says how far it got. Before, a job with 20 of its 30 products published and bound read
 * processed 0, published 0, percent 0, and a cancelled job read percent 100.
 */
let h: Harness;
beforeAll(async () => {
  h = await openHarness('RVP');
});
afterAll(() => closeHarness(h));

test('live progress: 20 of 30 products published and bound, the job says so while its batch runs', async () => {
  const ch = await h.channel();
  const items: { id: string; sku: string }[] = [];
  for (let i = 0; i < 30; i++) items.push(await h.product());
  h.server.holdAfter(20);
  let jobId = '';
  try {
    const res = await h.api.post('/products/export', {
      channelId: ch,
      mode: 'selected',
      productIds: items.map((i) => i.id),
    });
    expect(res.status).toBe(202);
    jobId = res.body.jobId;
    await waitFor(
      '20 answered, the rest held',
      async () => h.server.heldCount() > 0 && h.server.received.length >= 21,
      {
        timeoutMs: 90_000,
      },
    );
    // the answered ones are recorded: their bindings say synced
    const bound = await h.api.get(`/products/${items[0].id}`);
    expect(bound.body.bindings[0]).toMatchObject({ channelId: ch, syncStatus: 'synced' });
    const status = await h.api.get(`/products/export/${jobId}`);
    const listed = (await h.api.get('/products/export')).body.jobs.find((j: { jobId: string }) => j.jobId === jobId);
    expect(status.body).toMatchObject({ status: 'processing', total: 30 });
    expect(status.body.published).toBeGreaterThanOrEqual(20);
    expect(status.body.percent).toBeGreaterThan(0);
    expect(listed.published).toBeGreaterThanOrEqual(20);
  } finally {
    h.server.release();
    if (jobId) await h.finished(jobId);
  }
});

test('a job cancelled after a few of its products says how far it got: percent is not 100', async () => {
  const ch = await h.channel();
  const items: { id: string; sku: string }[] = [];
  for (let i = 0; i < 30; i++) items.push(await h.product());
  h.server.holdAfter(5);
  const res = await h.api.post('/products/export', {
    channelId: ch,
    mode: 'selected',
    productIds: items.map((i) => i.id),
  });
  expect(res.status).toBe(202);
  try {
    await waitFor('5 answered, the rest held', async () => h.server.heldCount() > 0, { timeoutMs: 90_000 });
    const cancel = await h.api.post(`/products/export/${res.body.jobId}/cancel`, { reason: 'stop' });
    expect(cancel.status).toBe(200);
  } finally {
    h.server.release();
  }
  await h.finished(res.body.jobId);
  await waitFor(
    'the record written',
    async () => (await h.api.get(`/products/export/${res.body.jobId}`)).body.finishedAt !== null,
    {
      timeoutMs: 60_000,
    },
  );
  const job = (await h.api.get(`/products/export/${res.body.jobId}`)).body;
  expect(job.status).toBe('cancelled');
  expect(job.processed).toBeLessThan(30);
  expect(job.percent).toBe(Math.floor((job.processed / job.total) * 100));
});

import { waitFor } from '../../scripts/stack/process';
import { TenantDb } from '../../shared/db/tenant-db';
import { jobs } from '../../shared/jobs/collection';
import { expectError } from '../helpers/expect-error';
import { closeHarness, openHarness, type Harness } from '../helpers/publication-harness';

/**
 * A sync publication (≤ PUBLISH_SYNC_MAX products) whose workflow an operator terminates in the
 * Temporal UI: the waiting request is 400 PRODUCT_EXPORT_FAILED naming the job (recorded failed),
 * and its Idempotency-Key retry answers that job. Before, the request was 500, which freed the key,
 * so the retry started a second job and sent every product again.
 */
let h: Harness;
beforeAll(async () => {
  h = await openHarness('RVT');
});
afterAll(() => closeHarness(h));

test('a sync publication whose workflow is terminated answers a 4xx naming its job, not 500; its keyed retry too', async () => {
  const ch = await h.channel();
  const items = [await h.product(), await h.product()];
  const key = `term-${Date.now()}`;
  let firstJob: string | undefined;
  h.server.hold();
  const pending = h.api.post(
    '/products/export',
    { channelId: ch, mode: 'selected', productIds: items.map((i) => i.sku) },
    { headers: { 'idempotency-key': key } },
  );
  try {
    await waitFor('the channel holding the sends', async () => h.server.received.some((r) => r.sku === items[0].sku), {
      timeoutMs: 60_000,
    });
    const job = await new TenantDb(h.deps.db, h.tenantId)
      .collection(jobs)
      .findOne({ type: 'publication', idempotencyKey: { $regex: `^${key}@` } } as never);
    expect(job).not.toBeNull();
    firstJob = job!._id;
    await h.deps.temporal.workflow.getHandle(job!.workflowId).terminate('operator: channel stuck');
  } finally {
    h.server.release();
  }
  const res = await pending;
  const retry = await h.api.post(
    '/products/export',
    { channelId: ch, mode: 'selected', productIds: items.map((i) => i.sku) },
    { headers: { 'idempotency-key': key } },
  );
  expect(res.status).toBe(400);
  expectError(res, 400, 'PRODUCT_EXPORT_FAILED');
  expect(res.body.details.jobId).toBe(firstJob);
  expect(retry.body.details?.jobId ?? retry.body.jobId).toBe(firstJob);
});

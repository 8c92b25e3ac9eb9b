import pino from 'pino';
import { createActivities } from '../../activities';
import { waitFor } from '../../scripts/stack/process';
import { ApiClient } from '../helpers/client';
import { openWorkflowEnv, type WorkflowEnv } from '../workflows/support/env';
import { closeHarness, openHarness, type Harness } from '../helpers/publication-harness';

/**
 * The window between a publication's last batch and the job record's end (finishPublication).
 *
 * Spec (States and transitions, Jobs): a cancel of a job in progress → cancelled, 200 success
 * true; a finished job → 400 cancel-failed. A cancel that lands after the last batch was sent,
 * while the workflow is still recording the end (finishPublication: on a large job it reads every
 * item; on a busy worker it waits for a slot), changes nothing, so it is 400 cancel-failed; and
 * a poller sees the job processing until its record holds the final counts. Before, the cancel
 * answered 200 and the job then ended `completed`, and a read in the window showed the live
 * `cancelled` with 0 published.
 *
 * To hold the workflow in that window the job runs on this file's own worker (the real workflow
 * bundle and the real activities, finishPublication held at a gate) behind an API of its own on
 * that task queue, the way test/stack/publication-kill.test.ts runs its jobs on its own queue.
 */
let h: Harness;
let wf: WorkflowEnv;
let app: { url: string; close: () => Promise<void> };
let own: ApiClient;
let reached: () => void = () => undefined;
let release: () => void = () => undefined;
let finishReached = new Promise<void>((r) => (reached = r));
let gate = new Promise<void>((r) => (release = r));

beforeAll(async () => {
  h = await openHarness('RVC');
  wf = await openWorkflowEnv({
    name: 'review-cancel',
    activities: () => {
      const real = createActivities({
        config: h.deps.config,
        db: h.deps.db,
        s3: h.deps.s3,
        log: pino({ level: 'silent' }),
      });
      return {
        ...real,
        finishPublication: async (input: Parameters<typeof real.finishPublication>[0]) => {
          reached();
          await gate;
          return real.finishPublication(input);
        },
      };
    },
  });
  app = await h.deps.serveApp(undefined, { taskQueue: wf.taskQueue });
  own = new ApiClient(h.api.key, app.url);
});
afterAll(async () => {
  release();
  await app?.close();
  await wf?.close();
  await closeHarness(h);
});

test('a cancel answered 200 success after the last product was sent: the job must not then end completed', async () => {
  finishReached = new Promise<void>((r) => (reached = r));
  gate = new Promise<void>((r) => (release = r));
  const ch = await h.channel();
  const items: { id: string; sku: string }[] = [];
  for (let i = 0; i < 12; i++) items.push(await h.product());
  const res = await own.post('/products/export', {
    channelId: ch,
    mode: 'selected',
    productIds: items.map((i) => i.id),
  });
  expect(res.status).toBe(202);
  const jobId = res.body.jobId as string;
  await Promise.race([finishReached, waitFor('never', async () => false, { timeoutMs: 120_000 })]);
  // every product was sent; the job is still recording its end
  expect(h.server.received.filter((r) => r.idempotencyKey.startsWith(`${jobId}:`))).toHaveLength(12);
  const live = await own.get(`/products/export/${jobId}`);
  const cancel = await own.post(`/products/export/${jobId}/cancel`, { reason: 'too late?' });
  release();
  const job = await h.finished(jobId);
  // now: live.status 'completed', cancel 200 {success: true, message: '… is being cancelled'}, job 'completed'
  const answer = { live: live.body.status, cancel: cancel.status, success: cancel.body.success, final: job.status };
  expect([
    { live: live.body.status, cancel: 400, success: undefined, final: 'completed' },
    { live: live.body.status, cancel: 200, success: true, final: 'cancelled' },
  ]).toContainEqual(answer);
});

test('a poller that stops at the first cancelled status gets the final counts, not 0 published', async () => {
  finishReached = new Promise<void>((r) => (reached = r));
  gate = new Promise<void>((r) => (release = r));
  const ch = await h.channel();
  const items: { id: string; sku: string }[] = [];
  for (let i = 0; i < 30; i++) items.push(await h.product());
  h.server.holdAfter(6);
  const res = await own.post('/products/export', {
    channelId: ch,
    mode: 'selected',
    productIds: items.map((i) => i.id),
  });
  expect(res.status).toBe(202);
  const jobId = res.body.jobId as string;
  try {
    await waitFor('6 answered, the rest held', async () => h.server.heldCount() > 0, { timeoutMs: 90_000 });
    expect((await own.post(`/products/export/${jobId}/cancel`, { reason: 'stop' })).status).toBe(200);
  } finally {
    h.server.release();
  }
  await Promise.race([finishReached, waitFor('never', async () => false, { timeoutMs: 120_000 })]);
  // the spec's client: polls until the status is no longer in progress, and takes that answer
  const seen = await own.get(`/products/export/${jobId}`);
  release();
  const final = await h.finished(jobId);
  await waitFor(
    'the record written',
    async () => (await own.get(`/products/export/${jobId}`)).body.finishedAt !== null,
    {
      timeoutMs: 60_000,
    },
  );
  const recorded = (await own.get(`/products/export/${jobId}`)).body;
  expect(recorded.published).toBeGreaterThan(0); // products the channel published, bound synced
  const counts = (b: Record<string, unknown>) => ({
    status: b.status,
    processed: b.processed,
    published: b.published,
    failed: b.failed,
    skipped: b.skipped,
  });
  // now: seen is {status: 'cancelled', processed: 0, published: 0, …} while the record says published 6+
  expect([{ ...counts(recorded), status: 'processing' }, counts(recorded)]).toContainEqual(
    seen.body.status === 'processing' ? { ...counts(recorded), status: 'processing' } : counts(seen.body),
  );
  expect(final.status).toBe('cancelled');
});

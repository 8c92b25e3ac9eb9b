import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { publication, publicationProgress } from '../../shared/publication/messages';
import { startWorkflow } from '../../shared/temporal/workflows';
import { openWorkflowEnv, testContext, type WorkflowEnv } from './support/env';
import { publicationInput, scenario, TENANT } from './support/scenarios';

/** A publication in batches: outcomes, the progress query, the cancel signal, workflow cancellation, a failed batch. */
let wf: WorkflowEnv;
beforeAll(async () => {
  wf = await openWorkflowEnv({ name: 'publication' });
});
afterAll(() => wf?.close());

const jobIdOf = (workflowId: string) => workflowId.slice(`${TENANT}/`.length);
const batchesOf = (jobId: string) =>
  wf.world
    .callsOf(jobId)
    .filter((c) => c.activity === 'publishBatch')
    .map((c) => (c.input as { productIds: string[] }).productIds);
const finishOf = (jobId: string) => wf.world.callsOf(jobId).find((c) => c.activity === 'finishPublication')?.input;

test('publishes batch after batch and counts each outcome', async () => {
  const run = await scenario(publication, 'completed').run(testContext(wf));
  const jobId = jobIdOf(run.workflowId);
  expect(batchesOf(jobId)).toEqual([['p1', 'p2'], ['p3', 'p4'], ['p5']]);
  expect(run.result).toEqual({
    status: 'completed',
    total: 5,
    processed: 5,
    published: 3,
    failed: 1,
    skipped: 1,
    percent: 100,
    cancelReason: null,
    error: null,
    results: [
      { sku: 'p1', success: true },
      { sku: 'p2', success: false, error: 'the channel refused it' },
      { sku: 'p3', success: true },
      { sku: 'p4', success: false, error: 'CHANNEL_INACTIVE' },
      { sku: 'p5', success: true },
    ],
  });
  expect(finishOf(jobId)).toMatchObject({ status: 'completed', cancelReason: null, total: 5 });
});

test('the progress query answers the batches done so far', async () => {
  const ctx = testContext(wf);
  const jobId = ctx.id('exp-progress');
  const second = wf.world.gate(jobId, 'publishBatch', 2);
  const handle = await startWorkflow(wf.client, publication, publicationInput(jobId, 6), {
    taskQueue: wf.taskQueue,
    workflowId: `${TENANT}/${jobId}`,
  });
  await second.reached;
  expect(await handle.query(publicationProgress)).toEqual({
    status: 'processing',
    total: 6,
    processed: 2,
    published: 2,
    failed: 0,
    skipped: 0,
    percent: 33,
    cancelReason: null,
  });
  second.release();
  expect(await handle.result()).toMatchObject({ status: 'completed', processed: 6, published: 6 });
});

test('the cancel signal stops the batch under way, runs no further batch, and reports cancelled with its counts', async () => {
  const run = await scenario(publication, 'cancel-signal').run(testContext(wf));
  const jobId = jobIdOf(run.workflowId);
  // the second batch was cancelled after its first product; the third never ran
  expect(batchesOf(jobId)).toEqual([
    ['p1', 'p2'],
    ['p3', 'p4'],
  ]);
  expect(run.result).toEqual({
    status: 'cancelled',
    total: 6,
    processed: 3,
    published: 3,
    failed: 0,
    skipped: 0,
    percent: 50, // how far it got: 3 of 6
    cancelReason: 'stopped by the test',
    error: null,
    results: [
      { sku: 'p1', success: true },
      { sku: 'p2', success: true },
    ],
  });
  expect(finishOf(jobId)).toMatchObject({ status: 'cancelled', cancelReason: 'stopped by the test' });
});

test('cancelling the workflow cancels the batch under way and ends the workflow cancelled', async () => {
  const run = await scenario(publication, 'workflow-cancelled').run(testContext(wf));
  const jobId = jobIdOf(run.workflowId);
  expect(run.error).toBeInstanceOf(WorkflowFailedError);
  expect((run.error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
  expect((await run.handle.describe()).status.name).toBe('CANCELLED');
  expect(batchesOf(jobId)).toHaveLength(2);
});

test('a batch failing for good ends the publication failed, and the job and channel are still settled', async () => {
  const run = await scenario(publication, 'batch-failed').run(testContext(wf));
  const jobId = jobIdOf(run.workflowId);
  expect(run.result).toMatchObject({ status: 'failed', processed: 0, error: expect.any(String) });
  expect(batchesOf(jobId)).toHaveLength(1);
  expect(finishOf(jobId)).toMatchObject({ status: 'failed' });
});

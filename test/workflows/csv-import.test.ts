import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { csvImport, importProgress } from '../../shared/csv/messages';
import { startWorkflow } from '../../shared/temporal/workflows';
import { openWorkflowEnv, testContext, type WorkflowEnv } from './support/env';
import { importInput, scenario, TENANT } from './support/scenarios';

/** The async CSV import: staging, the optional dry pass, chunks two at a time, progress, failures. */
let wf: WorkflowEnv;
beforeAll(async () => {
  wf = await openWorkflowEnv({ name: 'csv-import' });
});
afterAll(() => wf?.close());

const jobIdOf = (workflowId: string) => workflowId.slice(`${TENANT}/`.length);

function chunkCalls(jobId: string) {
  return wf.world
    .callsOf(jobId)
    .filter((c) => c.activity === 'importChunk')
    .map((c) => {
      const { from, to, dryRun } = c.input as { from: number; to: number; dryRun: boolean };
      return { from, to, dryRun };
    });
}

test('skipErrorRows: every chunk is written once, failed rows counted, an error report made', async () => {
  const run = await scenario(csvImport, 'rows-skipped').run(testContext(wf));
  const jobId = jobIdOf(run.workflowId);
  expect(run.result).toEqual({
    status: 'completed',
    totalRows: 5,
    processedRows: 5,
    created: 3,
    updated: 1,
    failed: 1,
    skipped: 0,
    percent: 100,
    errorReportKey: `reports/${TENANT}/${jobId}-errors.csv`,
    structuralErrors: [],
  });
  const sorted = chunkCalls(jobId).sort((a, b) => a.from - b.from);
  expect(sorted).toEqual([
    { from: 0, to: 2, dryRun: false },
    { from: 2, to: 4, dryRun: false },
    { from: 4, to: 5, dryRun: false },
  ]);
  expect(wf.world.stepsOf(jobId)).toEqual([
    'updateJob',
    'stageImport',
    'importChunk',
    'importChunk',
    'importChunk',
    'finishImport',
    'updateJob',
  ]);
  expect(wf.world.jobUpdates(jobId).at(-1)).toEqual({
    tenantId: TENANT,
    jobId,
    status: 'completed',
    result: run.result,
  });
});

test('without skipErrorRows a clean file is checked in a dry pass, then written', async () => {
  const run = await scenario(csvImport, 'checked-then-written').run(testContext(wf));
  const jobId = jobIdOf(run.workflowId);
  expect(run.result).toMatchObject({ status: 'completed', created: 4, updated: 1, failed: 0, processedRows: 5 });
  const calls = chunkCalls(jobId);
  expect(calls.map((c) => c.dryRun)).toEqual([true, true, true, false, false, false]);
  expect(wf.world.callsOf(jobId).find((c) => c.activity === 'finishImport')?.input).toMatchObject({ wrote: true });
});

test('without skipErrorRows one bad row refuses the file: nothing is written', async () => {
  const run = await scenario(csvImport, 'refused-by-dry-run').run(testContext(wf));
  const jobId = jobIdOf(run.workflowId);
  expect(run.result).toMatchObject({
    status: 'completed',
    totalRows: 2,
    processedRows: 2,
    created: 0,
    updated: 0,
    failed: 1,
    skipped: 1,
  });
  expect(chunkCalls(jobId).every((c) => c.dryRun)).toBe(true);
  expect(wf.world.callsOf(jobId).find((c) => c.activity === 'finishImport')?.input).toMatchObject({ wrote: false });
});

test('a file with structural errors writes nothing and the job fails, saying why', async () => {
  const run = await scenario(csvImport, 'structural-errors').run(testContext(wf));
  const jobId = jobIdOf(run.workflowId);
  expect(run.result).toMatchObject({ status: 'failed', structuralErrors: ['the header has no sku column'] });
  expect(chunkCalls(jobId)).toEqual([]);
  expect(wf.world.jobUpdates(jobId).at(-1)).toMatchObject({ status: 'failed', error: 'the header has no sku column' });
});

test.each([
  ['stage-failed', 'stageImport'],
  ['chunk-failed', 'importChunk'],
])('%s: the job is recorded failed with the step that failed', async (name, step) => {
  const run = await scenario(csvImport, name).run(testContext(wf));
  const jobId = jobIdOf(run.workflowId);
  expect(run.error).toBeInstanceOf(WorkflowFailedError);
  expect(wf.world.jobUpdates(jobId).at(-1)).toEqual({
    tenantId: TENANT,
    jobId,
    status: 'failed',
    error: `the job stopped: its ${step} step failed after repeated attempts`,
  });
  expect(wf.world.stepsOf(jobId)).not.toContain('finishImport');
});

test('the progress query answers the counts of the chunks done so far', async () => {
  const ctx = testContext(wf);
  const jobId = ctx.id('csvimp-progress');
  wf.world.script(jobId, { importFile: { rows: 6 } });
  // chunk 1 passes; chunks 2 and 3 wait (3 starts once 1 is done: two at a time)
  const second = wf.world.gate(jobId, 'importChunk', 2);
  const third = wf.world.gate(jobId, 'importChunk', 3);
  const handle = await startWorkflow(wf.client, csvImport, importInput(jobId), {
    taskQueue: wf.taskQueue,
    workflowId: `${TENANT}/${jobId}`,
  });
  await Promise.all([second.reached, third.reached]);
  expect(await handle.query(importProgress)).toEqual({
    status: 'processing',
    totalRows: 6,
    processedRows: 2,
    created: 2,
    updated: 0,
    failed: 0,
    skipped: 0,
    percent: 33,
  });
  second.release();
  third.release();
  expect(await handle.result()).toMatchObject({ status: 'completed', processedRows: 6, created: 6 });
  expect(await handle.query(importProgress)).toMatchObject({ status: 'completed', percent: 100 });
});

/**
 * The dry pass once lost a failed row when the chunk with it ended first (two chunks in flight);
 * here that chunk is made to end first.
 */
test('without skipErrorRows a bad row in the chunk that ends first still refuses the file', async () => {
  const ctx = testContext(wf);
  const jobId = ctx.id('csvimp-bad-chunk-first');
  wf.world.script(jobId, { importFile: { rows: 4, bad: [0] } });
  const gates = [wf.world.gate(jobId, 'importChunk', 1), wf.world.gate(jobId, 'importChunk', 2)];
  const handle = await startWorkflow(wf.client, csvImport, importInput(jobId, { skipErrorRows: false }), {
    taskQueue: wf.taskQueue,
    workflowId: `${TENANT}/${jobId}`,
  });
  await Promise.all(gates.map((g) => g.reached));
  const [bad, good] = [...gates].sort(
    (a, b) => (a.input as { from: number }).from - (b.input as { from: number }).from,
  );
  bad.release();
  await until(async () => completedActivities(await handle.fetchHistory()) >= 3); // updateJob, stageImport, the bad chunk
  good.release();
  expect(await handle.result()).toMatchObject({ status: 'completed', created: 0, failed: 1, skipped: 3 });
  expect(chunkCalls(jobId).every((c) => c.dryRun)).toBe(true);
});

function completedActivities(history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>): number {
  return (history.events ?? []).filter((e) => e.activityTaskCompletedEventAttributes).length;
}

async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

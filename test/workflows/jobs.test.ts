import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { ping } from '../../shared/system/messages';
import { rollback } from '../../shared/bulk/messages';
import { csvExport } from '../../shared/csv/messages';
import { openWorkflowEnv, testContext, type WorkflowEnv } from './support/env';
import { scenario, TENANT } from './support/scenarios';

/** The one-step job workflows: ping, rollback and CSV export, over fake activities. */
let wf: WorkflowEnv;
beforeAll(async () => {
  wf = await openWorkflowEnv({ name: 'jobs' });
});
afterAll(() => wf?.close());

const jobIdOf = (workflowId: string) => workflowId.slice(`${TENANT}/`.length);

/** The activity failure at the end of a failed workflow's cause chain. */
function activityFailureOf(err: unknown): { activityType?: string; type?: string } {
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const activity = (err as WorkflowFailedError).cause;
  expect(activity).toBeInstanceOf(ActivityFailure);
  const app = (activity as ActivityFailure).cause;
  expect(app).toBeInstanceOf(ApplicationFailure);
  return {
    activityType: (activity as ActivityFailure).activityType,
    type: (app as ApplicationFailure).type ?? undefined,
  };
}

describe('pingWorkflow', () => {
  test('runs its activity on a worker and records the result on the job', async () => {
    const run = await scenario(ping, 'completed').run(testContext(wf));
    const jobId = jobIdOf(run.workflowId);
    expect(run.result).toEqual({ echo: jobId, pid: 0, host: 'fake-worker' });
    expect(wf.world.jobUpdates(jobId)).toEqual([
      { tenantId: TENANT, jobId, status: 'processing' },
      { tenantId: TENANT, jobId, status: 'completed', result: run.result },
    ]);
  });
});

describe('rollbackWorkflow', () => {
  test('rolls the operation back in one step and records the result on the job', async () => {
    const run = await scenario(rollback, 'completed').run(testContext(wf));
    const jobId = jobIdOf(run.workflowId);
    expect(run.result).toEqual({
      operationId: 'op-1',
      rollbackOperationId: `rb-${jobId}`,
      deleted: 2,
      restored: 3,
      failed: [],
    });
    expect(wf.world.stepsOf(jobId)).toEqual(['updateJob', 'rollbackOperation', 'updateJob']);
    expect(wf.world.jobUpdates(jobId).at(-1)).toEqual({
      tenantId: TENANT,
      jobId,
      status: 'completed',
      result: run.result,
    });
  });

  test('a step failing for good fails the workflow with its failure and the job is recorded failed', async () => {
    const run = await scenario(rollback, 'step-failed').run(testContext(wf));
    const jobId = jobIdOf(run.workflowId);
    // the refusal travels in the cause chain, where the API finds it (shared/errors/failures.ts)
    expect(activityFailureOf(run.error)).toEqual({ activityType: 'rollbackOperation', type: 'fake-failure' });
    expect(wf.world.jobUpdates(jobId).at(-1)).toEqual({
      tenantId: TENANT,
      jobId,
      status: 'failed',
      error: expect.any(String),
    });
  });
});

describe('csvExportWorkflow', () => {
  test('exports in one step and records where the file is', async () => {
    const run = await scenario(csvExport, 'completed').run(testContext(wf));
    const jobId = jobIdOf(run.workflowId);
    expect(run.result).toEqual({
      key: `exports/${TENANT}/${jobId}.csv`,
      count: 3,
      rows: 5,
      totalRows: 5,
      processedRows: 5,
    });
    expect(wf.world.jobUpdates(jobId)).toEqual([
      { tenantId: TENANT, jobId, status: 'processing' },
      { tenantId: TENANT, jobId, status: 'completed', result: run.result },
    ]);
  });

  test('a failed export step is recorded on the job by its name, not its error text', async () => {
    const run = await scenario(csvExport, 'step-failed').run(testContext(wf));
    const jobId = jobIdOf(run.workflowId);
    expect(activityFailureOf(run.error)).toEqual({ activityType: 'exportCsv', type: 'fake-failure' });
    expect(wf.world.jobUpdates(jobId).at(-1)).toEqual({
      tenantId: TENANT,
      jobId,
      status: 'failed',
      error: 'the job stopped: its exportCsv step failed after repeated attempts',
    });
  });
});

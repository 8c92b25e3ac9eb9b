import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { RollbackResult, RollbackWorkflowInput } from '../../shared/bulk/messages';

const acts = proxyActivities<Activities>({ startToCloseTimeout: '10 minutes', retry: { maximumAttempts: 10 } });

/** Rolls back one bulk operation; the activity is idempotent, so a retry after a crash finishes the job once. */
export async function rollbackWorkflow(input: RollbackWorkflowInput): Promise<RollbackResult> {
  await acts.updateJob({ tenantId: input.tenantId, jobId: input.jobId, status: 'processing' });
  try {
    const result = await acts.rollbackOperation(input);
    await acts.updateJob({ tenantId: input.tenantId, jobId: input.jobId, status: 'completed', result: { ...result } });
    return result;
  } catch (err) {
    await acts.updateJob({
      tenantId: input.tenantId,
      jobId: input.jobId,
      status: 'failed',
      error: (err as Error).message,
    });
    throw err;
  }
}

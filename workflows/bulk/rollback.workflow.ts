import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { RollbackResult, RollbackWorkflowInput } from '../../shared/bulk/messages';

const acts = proxyActivities<Activities>({ startToCloseTimeout: '10 minutes', retry: { maximumAttempts: 10 } });

// The rollback heartbeats after each product: a short heartbeat timeout hands a killed worker's
// attempt to another worker within seconds, where the start-to-close limit alone took its whole
// length. Changing options is not a change of commands: running histories replay as before.
const rollbackActs = proxyActivities<Activities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
});

/**
 * What the job record says when the rollback failed: the refusal's own message (the operation
 * changed since; the client is meant to read it), else which step stopped, not an error's text
 * (database messages name hosts).
 */
function failureMessage(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  if (cause instanceof ApplicationFailure && cause.nonRetryable) return cause.message;
  return 'the rollback stopped: a step failed after repeated attempts';
}

/** Rolls back one bulk operation; the activity is idempotent, so a retry after a crash finishes the job once. */
export async function rollbackWorkflow(input: RollbackWorkflowInput): Promise<RollbackResult> {
  await acts.updateJob({ tenantId: input.tenantId, jobId: input.jobId, status: 'processing' });
  try {
    const result = await rollbackActs.rollbackOperation(input);
    await acts.updateJob({ tenantId: input.tenantId, jobId: input.jobId, status: 'completed', result: { ...result } });
    return result;
  } catch (err) {
    await acts.updateJob({
      tenantId: input.tenantId,
      jobId: input.jobId,
      status: 'failed',
      error: failureMessage(err),
    });
    throw err;
  }
}

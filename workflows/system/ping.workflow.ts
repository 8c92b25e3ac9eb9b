import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { PingInput, PingResult } from '../../shared/system/messages';

const acts = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds' });

/**
 * A diagnostic job: runs one activity on a worker and records the result on the job record.
 * It proves the chain API → Temporal → worker → MongoDB, and is what the stack tests run.
 */
export async function pingWorkflow(input: PingInput): Promise<PingResult> {
  await acts.updateJob({ tenantId: input.tenantId, jobId: input.jobId, status: 'processing' });
  const result = await acts.ping(input.message, input.holdMs ?? 0);
  await acts.updateJob({ tenantId: input.tenantId, jobId: input.jobId, status: 'completed', result: { ...result } });
  return result;
}

import { defineWorkflow } from '../temporal/define-workflow';

export interface PingInput {
  tenantId: string;
  jobId: string;
  message: string;
  holdMs?: number;
}

export interface PingResult {
  echo: string;
  pid: number;
  host: string;
}

/** The diagnostic job: one activity on a worker, its result on the job record. */
export const ping = defineWorkflow<PingInput, PingResult>('pingWorkflow');

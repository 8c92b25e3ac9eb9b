import { defineCollection } from '../db/collection';

export type JobStatus = 'queued' | 'processing' | 'completed' | 'partial' | 'failed' | 'cancelled';

/**
 * The statuses a job ends in; the others (queued, processing) are running. `partial`: an AI
 * transform whose token budget ran out (what it did stays; the rest is listed).
 */
export const FINISHED_JOB_STATUSES: readonly JobStatus[] = ['completed', 'partial', 'failed', 'cancelled'];
export const RUNNING_JOB_STATUSES: readonly JobStatus[] = ['queued', 'processing'];

export function isFinished(status: JobStatus): boolean {
  return FINISHED_JOB_STATUSES.includes(status);
}

/**
 * The lasting record of a job. Live progress comes from the workflow (a query); the final status
 * and counters are written here so they outlive Temporal's retention.
 */
export interface JobRecord {
  _id: string; // the job id, `<prefix>_<sortable random>`
  tenantId: string;
  type: string;
  workflowId: string;
  status: JobStatus;
  /** The client's Idempotency-Key, or the job id when none was sent (the unique index needs a value). */
  idempotencyKey: string;
  input: Record<string, unknown>;
  /**
   * The workflow's input as JSON text (text: a CSV mapping's column names are no valid keys), so
   * a retry can start a job whose API process died before starting it. Absent on older records.
   */
  workflowInput?: string;
  result: Record<string, unknown> | null;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
  /** Set by a cancel request before the workflow is told: activities check it before each unit of work. */
  cancelRequestedAt?: Date | null;
}

export const jobs = defineCollection<JobRecord>({
  name: 'jobs',
  scope: 'tenant',
  indexes: [
    { key: { tenantId: 1, type: 1, idempotencyKey: 1 }, options: { unique: true } },
    { key: { tenantId: 1, type: 1, createdAt: -1 } },
  ],
});

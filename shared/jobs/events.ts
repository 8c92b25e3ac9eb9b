import type { TenantDb } from '../db/tenant-db';
import { recordEvent } from '../webhooks/events';
import { isFinished, type JobRecord, type JobStatus } from './collection';

/** The webhook event a job's end is announced by: a partial AI transform completed (what it did stays). */
const END_EVENTS: Partial<Record<JobStatus, string>> = {
  completed: 'job.completed',
  partial: 'job.completed',
  failed: 'job.failed',
  cancelled: 'job.cancelled',
};

/** Input members a job event leaves out: storage keys are ours, and definitions (flows, prompts) may be large. */
const PRIVATE_INPUT = new Set(['s3Key']);

/**
 * A job as its events present it: what every job type shares (each type's own route adds its
 * live view). Of its input, the plain values only (channelId, mode, operationId, format, …).
 */
export function presentJob(job: JobRecord) {
  const input = Object.fromEntries(
    Object.entries(job.input ?? {}).filter(
      ([k, v]) => !PRIVATE_INPUT.has(k) && (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'),
    ),
  );
  return {
    id: job._id,
    type: job.type,
    status: job.status,
    input,
    result: job.result,
    error: job.error,
    createdAt: job.createdAt,
    finishedAt: job.finishedAt,
  };
}

/**
 * Announces a finished job (job.completed, job.failed or job.cancelled), from any of the places a
 * job settles. Keyed by the job and its end, so the writer that finished it and a retry of that
 * writer record one event; a job ends once, so its sequence is 1.
 */
export async function announceJobEnd(tenantDb: TenantDb, job: JobRecord): Promise<void> {
  const type = END_EVENTS[job.status];
  if (!type || !isFinished(job.status)) return;
  await recordEvent(tenantDb, {
    type,
    key: `job:${job._id}:${job.status}`,
    id: job._id,
    sequence: 1,
    resource: presentJob(job),
    ...(job.finishedAt ? { at: job.finishedAt } : {}),
  });
}

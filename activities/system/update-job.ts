import type { Db } from 'mongodb';
import { TenantDb } from '../../shared/db/tenant-db';
import { FINISHED_JOB_STATUSES, isFinished, jobs, type JobStatus } from '../../shared/jobs/collection';
import { announceJobEnd } from '../../shared/jobs/events';
import { jobsFinished } from '../../shared/metrics/metrics';

export interface JobUpdate {
  tenantId: string;
  jobId: string;
  status: JobStatus;
  result?: Record<string, unknown>;
  error?: string;
}

/**
 * Writes a job's status to its record. Idempotent, and a finished job stays finished: the guard
 * keeps a late retry of an earlier step from moving it back. A job it finishes is announced
 * (job.completed, job.failed, job.cancelled); a retry finding the job already ended as it says
 * announces it again as the same event, so a step stopped between the two still announces it.
 */
export function updateJob(db: Db) {
  return async (u: JobUpdate): Promise<void> => {
    const now = new Date();
    const tenantDb = new TenantDb(db, u.tenantId);
    const written = await tenantDb.collection(jobs).findOneAndUpdate(
      { _id: u.jobId, status: { $nin: [...FINISHED_JOB_STATUSES] } },
      {
        $set: {
          status: u.status,
          updatedAt: now,
          ...(u.result ? { result: u.result } : {}),
          ...(u.error ? { error: u.error } : {}),
          ...(isFinished(u.status) ? { finishedAt: now } : {}),
        },
      },
      { returnDocument: 'after' },
    );
    // the whole record comes back: FerretDB 1.24 refuses a projection on findAndModify
    // counted by the write that finished it: a retried activity finds it finished and counts nothing
    if (written && isFinished(u.status)) jobsFinished.inc({ type: written.type, outcome: u.status });
    if (!isFinished(u.status)) return;
    const ended = written ?? (await tenantDb.collection(jobs).findOne({ _id: u.jobId }));
    if (ended?.status === u.status) await announceJobEnd(tenantDb, ended);
  };
}

import type { Db } from 'mongodb';
import { TenantDb } from '../../shared/db/tenant-db';
import { FINISHED_JOB_STATUSES, isFinished, jobs, type JobStatus } from '../../shared/jobs/collection';
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
 * keeps a late retry of an earlier step from moving it back.
 */
export function updateJob(db: Db) {
  return async (u: JobUpdate): Promise<void> => {
    const now = new Date();
    const written = await new TenantDb(db, u.tenantId).collection(jobs).findOneAndUpdate(
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
    );
    // the whole record comes back: FerretDB 1.24 refuses a projection on findAndModify
    // counted by the write that finished it: a retried activity finds it finished and counts nothing
    if (written && isFinished(u.status)) jobsFinished.inc({ type: written.type, outcome: u.status });
  };
}

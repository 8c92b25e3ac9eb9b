import type { Db } from 'mongodb';
import { TenantDb } from '../../shared/db/tenant-db';
import { FINISHED_JOB_STATUSES, isFinished, jobs, type JobStatus } from '../../shared/jobs/collection';

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
    await new TenantDb(db, u.tenantId).collection(jobs).updateOne(
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
  };
}

import type { Db } from 'mongodb';
import { TenantDb } from '../../shared/db/tenant-db';
import { jobs, type JobStatus } from '../../shared/jobs/collection';

export interface JobUpdate {
  tenantId: string;
  jobId: string;
  status: JobStatus;
  result?: Record<string, unknown>;
  error?: string;
}

const FINAL: JobStatus[] = ['completed', 'failed', 'cancelled'];

/**
 * Writes a job's status to its record. Idempotent, and a finished job stays finished: the guard
 * keeps a late retry of an earlier step from moving it back.
 */
export function updateJob(db: Db) {
  return async (u: JobUpdate): Promise<void> => {
    const now = new Date();
    await new TenantDb(db, u.tenantId).collection(jobs).updateOne(
      { _id: u.jobId, status: { $nin: FINAL } },
      {
        $set: {
          status: u.status,
          updatedAt: now,
          ...(u.result ? { result: u.result } : {}),
          ...(u.error ? { error: u.error } : {}),
          ...(FINAL.includes(u.status) ? { finishedAt: now } : {}),
        },
      },
    );
  };
}

import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { isFinished, jobs as jobRecords, RUNNING_JOB_STATUSES } from '../jobs/collection';
import type { Jobs } from '../jobs/jobs';
import { JOB_RATE } from './limits';

/** The job types that share a tenant's async CSV allowance. */
export const CSV_JOB_TYPES = ['csv-import', 'csv-export'] as const;
export type CsvJobType = (typeof CSV_JOB_TYPES)[number];

/**
 * 429 rate-limited when the tenant has too many async CSV jobs running, or started too many this
 * hour. Checked once the new job's record exists (Jobs.start's beforeStart; a refusal drops it),
 * counting it: of concurrent starts, the last one written sees all the others, so the limits
 * hold however many start at once (a check before the write let each see room for itself).
 * Both counts come from one read of the jobs running or started this hour.
 */
export async function checkJobRate(tenantDb: TenantDb, jobs: Jobs): Promise<void> {
  const hourAgo = new Date(Date.now() - 3600_000);
  const recent = await tenantDb
    .collection(jobRecords)
    .find({
      type: { $in: [...CSV_JOB_TYPES] },
      $or: [{ status: { $in: [...RUNNING_JOB_STATUSES] } }, { createdAt: { $gte: hourAgo } }],
    })
    .toArray();
  const lastHour = recent.filter((job) => job.createdAt >= hourAgo).length;
  let runningJobs = recent.filter((job) => !isFinished(job.status));
  if (runningJobs.length > JOB_RATE.concurrent) {
    // jobs whose workflow ended unrecorded (Jobs.settle) do not hold a slot
    const settled = await Promise.all(runningJobs.map((job) => jobs.settle(tenantDb, job)));
    runningJobs = settled.filter((job) => !isFinished(job.status));
  }
  const others = runningJobs.length - 1;
  if (others >= JOB_RATE.concurrent) {
    throw new AppError(
      429,
      'rate-limited',
      `${others} async jobs are running (limit ${JOB_RATE.concurrent}); retry when one ends`,
      {},
      { 'Retry-After': '30' },
    );
  }
  if (lastHour - 1 >= JOB_RATE.perHour) {
    throw new AppError(
      429,
      'rate-limited',
      `${lastHour - 1} async jobs were started in the last hour (limit ${JOB_RATE.perHour})`,
      {},
      { 'Retry-After': '600' },
    );
  }
}

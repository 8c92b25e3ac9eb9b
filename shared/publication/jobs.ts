import { AppError } from '../errors/catalog';
import { finishCategorization } from '../categories/categorize';
import { isFinished, jobs, type JobRecord } from '../jobs/collection';
import { queryOrNull } from '../temporal/workflows';
import type { PublicationContext } from './context';
import { cancelPublication, percentOf, publicationProgress, type PublicationProgress } from './messages';
import { PUBLICATION_JOB, publicationItems } from './publication';

/** How many publications the list shows: the most recent ones, newest first (the spec gives it no paging). */
export const RECENT_PUBLICATIONS = 20;

/** A publication job as the API answers it: live counts while it runs (when the workflow answered), else the record's. */
export function presentPublicationJob(job: JobRecord, progress?: PublicationProgress | null) {
  const r = (job.result ?? {}) as Record<string, unknown>;
  const live = progress && !isFinished(job.status) ? progress : null;
  return {
    jobId: job._id,
    // the workflow's end is shown once its record holds the final counts: a poller stopping at
    // the first finished status must not stop at the live counts of the moment before
    status: live && live.status === 'processing' ? live.status : job.status,
    channelId: job.input.channelId,
    mode: job.input.mode,
    total: live?.total ?? r.total ?? job.input.count ?? null,
    processed: live?.processed ?? r.processed ?? 0,
    published: live?.published ?? r.published ?? 0,
    failed: live?.failed ?? r.failed ?? 0,
    skipped: live?.skipped ?? r.skipped ?? 0,
    // a cancelled job's says how far it got
    // a job settled before its counts were recorded (recordItemCounts) says 100 only if completed
    percent: live?.percent ?? (typeof r.percent === 'number' ? r.percent : job.status === 'completed' ? 100 : 0),
    cancelReason: live?.cancelReason ?? r.cancelReason ?? null,
    createdAt: job.createdAt,
    finishedAt: job.finishedAt,
  };
}

/** The tenant's publication job, settled (a workflow that ended unrecorded is recorded failed); 404 not-found otherwise. */
export async function publicationJob(c: PublicationContext, jobId: string): Promise<JobRecord> {
  const job = await c.jobs.get(c.tenantDb, jobId, PUBLICATION_JOB);
  if (!job) throw new AppError(404, 'not-found', `No publication job ${jobId}`);
  return settlePublication(c, job);
}

/**
 * A publication job settled; one whose workflow ended unrecorded (terminated, timed out) also has
 * the categories it suggested closed into their operation (`bop_<jobId>`), as its own end would
 * have: they can then be rolled back.
 */
export async function settlePublication(c: PublicationContext, job: JobRecord): Promise<JobRecord> {
  const settled = await c.jobs.settle(c.tenantDb, job);
  if (settled.status !== 'failed') return settled;
  await finishCategorization(c.tenantDb, settled._id);
  return settled.result == null ? recordItemCounts(c, settled) : settled;
}

/**
 * A job whose workflow ended unrecorded has no counts of its own: its items say how far it got,
 * so it reads processed and percent as far as that (not a finished job's 100 %).
 */
async function recordItemCounts(c: PublicationContext, job: JobRecord): Promise<JobRecord> {
  const counts = await itemCounts(c, job._id);
  const total = typeof job.input.count === 'number' ? job.input.count : counts.processed;
  const result = { total, ...counts, percent: percentOf(counts.processed, total), cancelReason: null };
  const written = await c.tenantDb
    .collection(jobs)
    .findOneAndUpdate({ _id: job._id, result: null }, { $set: { result } }, { returnDocument: 'after' });
  return written ?? (await c.jobs.get(c.tenantDb, job._id)) ?? job;
}

/** A job's products with an outcome, by outcome. Counts of equalities on top-level fields: SQL answers them without reading a document. */
async function itemCounts(c: PublicationContext, jobId: string) {
  const items = c.tenantDb.collection(publicationItems);
  const [published, failed, skipped] = await Promise.all(
    (['published', 'failed', 'skipped'] as const).map((outcome) => items.countDocuments({ jobId, outcome })),
  );
  return { processed: published + failed + skipped, published, failed, skipped };
}

/**
 * A publication's status: the workflow's live progress while it runs, or the job record when the
 * workflow cannot answer at once (no worker polling), so the read never waits on a worker.
 */
export async function publicationStatus(c: PublicationContext, jobId: string) {
  return presented(c, await publicationJob(c, jobId));
}

async function presented(c: PublicationContext, job: JobRecord) {
  const progress = isFinished(job.status) ? null : await queryOrNull(c.temporal, job.workflowId, publicationProgress);
  return presentPublicationJob(job, progress?.status === 'processing' ? await withSettled(c, job, progress) : progress);
}

/**
 * The workflow counts a batch of 250 once it has ended; the products of the batch under way are
 * settled one by one (an item each), so the live counts are those items' when they are ahead.
 */
async function withSettled(c: PublicationContext, job: JobRecord, progress: PublicationProgress) {
  const counts = await itemCounts(c, job._id);
  if (counts.processed <= progress.processed) return progress;
  return { ...progress, ...counts, percent: percentOf(counts.processed, progress.total) };
}

/**
 * The most recent publications, each as its read by id answers it: one still running is settled
 * (a terminated workflow shows failed) and shows its live progress, so a client polling the list
 * sees what polling the job would.
 */
export async function recentPublications(c: PublicationContext) {
  const rows = await c.tenantDb
    .collection(jobs)
    .find({ type: PUBLICATION_JOB }, { sort: { createdAt: -1, _id: -1 }, limit: RECENT_PUBLICATIONS })
    .toArray();
  return Promise.all(
    rows.map(async (row) =>
      isFinished(row.status) ? presentPublicationJob(row) : presented(c, await settlePublication(c, row)),
    ),
  );
}

/**
 * Cancels a publication in progress: 400 cancel-failed once it has finished or is already being
 * cancelled. The request is recorded before the workflow is told: the batch under way reads it
 * before each product, so nothing is sent after this answer.
 */
export async function cancelPublicationJob(
  c: PublicationContext,
  jobId: string,
  reason: string | null,
): Promise<{ success: true; message: string }> {
  const job = await publicationJob(c, jobId);
  if (isFinished(job.status))
    throw new AppError(
      400,
      'cancel-failed',
      `The publication is ${job.status}; only a publication in progress can be cancelled`,
    );
  // guarded: of two cancels, the second finds the job already being cancelled
  const first = await c.tenantDb
    .collection(jobs)
    .updateOne({ _id: job._id, cancelRequestedAt: null }, { $set: { cancelRequestedAt: new Date() } });
  const signal = () => c.temporal.workflow.getHandle(job.workflowId).signal(cancelPublication, { reason });
  if (first.matchedCount === 0) {
    // told again: a first cancel whose process died before the signal left the job unaware of it
    await signal().catch(() => undefined);
    throw new AppError(400, 'cancel-failed', 'The publication is already being cancelled');
  }
  try {
    await signal();
  } catch {
    throw new AppError(400, 'cancel-failed', 'The publication has already ended');
  }
  // past its last product the workflow only records its end, and a cancel changes nothing: the
  // job will end completed, so this cancel is refused, not answered as if it had stopped the job
  const progress = await queryOrNull(c.temporal, job.workflowId, publicationProgress);
  if (progress && progress.status !== 'processing' && progress.status !== 'cancelled') {
    await c.tenantDb
      .collection(jobs)
      .updateOne({ _id: job._id, cancelRequestedAt: { $ne: null } }, { $set: { cancelRequestedAt: null } });
    throw new AppError(
      400,
      'cancel-failed',
      `The publication has already ${progress.status === 'failed' ? 'failed' : 'sent every product'}`,
    );
  }
  return { success: true, message: `Publication ${job._id} is being cancelled; it stops before its next product` };
}

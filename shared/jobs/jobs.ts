import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { isDuplicateKeyError } from '../db/duplicate-key';
import type { TenantDb } from '../db/tenant-db';
import { newId } from '../ids';
import { JOB_TYPE, TENANT_ID } from '../temporal/search-attributes';
import { workflowIdFor } from '../temporal/workflow-ids';
import type { WorkflowDef, WorkflowInput } from '../temporal/define-workflow';
import { startWorkflow } from '../temporal/workflows';
import { isFinished, jobs, RUNNING_JOB_STATUSES, type JobRecord } from './collection';
import { jobsFinished, jobsStarted } from '../metrics/metrics';
import { announceJobEnd } from './events';
import { setTimeout as sleep } from 'node:timers/promises';

/** A job whose workflow cannot be found this long after the job was made has none any more. */
const GONE_AFTER_MS = 10 * 60_000;
/**
 * A job still queued without a workflow this long after it was made lost its API process between
 * the record and the workflow's start (a start takes milliseconds): a retry of its request starts
 * it. Younger, the first request may still be starting it, and the retry waits.
 */
const ORPHANED_AFTER_MS = 5_000;
const ORPHAN_POLL_MS = 200;

export interface StartJob<D extends WorkflowDef<any, any>> {
  type: string;
  /** Job id prefix: `csvimp`, `csvexp`, `exp`, … */
  prefix: string;
  workflow: D;
  /** The workflow's input, given the new job id. Pass S3 keys and ids, never file contents. */
  workflowInput: (jobId: string) => WorkflowInput<D>;
  /** A client's Idempotency-Key: a repeated start with the same key returns the same job. */
  idempotencyKey?: string;
  input?: Record<string, unknown>;
  /**
   * Runs once the job record exists, before its workflow starts (e.g. takes a lock named after the
   * job); a throw undoes the job. It runs again, with the job's record, when a retry starts a job
   * whose first request died before its workflow started: it must be idempotent per job.
   */
  beforeStart?: (job: JobRecord) => Promise<void>;
}

/**
 * Starts jobs as workflows and finds them again. A job id belongs to one tenant: looking it up
 * with another tenant's TenantDb finds nothing, which the API answers as 404.
 */
export class Jobs {
  constructor(
    private readonly temporal: Client,
    private readonly taskQueue: string,
  ) {}

  async start<D extends WorkflowDef<any, any>>(
    tenantDb: TenantDb,
    job: StartJob<D>,
  ): Promise<{ job: JobRecord; created: boolean }> {
    const col = tenantDb.collection(jobs);
    const jobId = newId(job.prefix);
    const now = new Date();
    const input = job.workflowInput(jobId);
    const record: JobRecord = {
      _id: jobId,
      tenantId: tenantDb.tenantId,
      type: job.type,
      workflowId: workflowIdFor(tenantDb.tenantId, jobId),
      status: 'queued',
      idempotencyKey: job.idempotencyKey ?? jobId,
      input: job.input ?? {},
      workflowInput: JSON.stringify(input),
      result: null,
      error: null,
      createdAt: now,
      updatedAt: now,
      finishedAt: null,
    };
    try {
      await col.insertOne(record);
    } catch (err) {
      // the unique index answers a repeated Idempotency-Key (a retry, or a concurrent start that
      // won the race) without a lookup before every start: answer with its job
      if (!isDuplicateKeyError(err) || !job.idempotencyKey) throw err;
      const existing = await col.findOne({ type: job.type, idempotencyKey: job.idempotencyKey });
      if (!existing) throw err;
      const resumed = await this.resumeOrphan(tenantDb, existing, job.workflow, job.beforeStart);
      // null: the first request failed and dropped its job, so this one is judged afresh
      return resumed ? { job: resumed, created: false } : this.start(tenantDb, job);
    }
    await this.launch(tenantDb, record, job.workflow, input, job.beforeStart);
    jobsStarted.inc({ type: job.type });
    return { job: record, created: true };
  }

  /**
   * The job a retry's Idempotency-Key names, once its workflow has started: a start calls this
   * before it judges its request again, so a retry answers its job even when the request would be
   * refused now (its channel paused, its upload or its products gone since). Null for a new key, or
   * for a job its first request may still be starting (the start then finds it by its key, and
   * resumes it if that request died).
   */
  async startedBy(tenantDb: TenantDb, type: string, idempotencyKey: string | undefined): Promise<JobRecord | null> {
    if (!idempotencyKey) return null;
    const job = await tenantDb.collection(jobs).findOne({ type, idempotencyKey });
    if (!job) return null;
    return job.status !== 'queued' || (await this.hasWorkflow(job)) ? job : null;
  }

  /**
   * A job found again by its Idempotency-Key, started if its first request died between writing
   * the record and starting the workflow (it would otherwise stay queued until settle gives up on
   * it). Waits while the first request may still be starting it. Null when the job is gone (its
   * first request failed and dropped it).
   */
  async resumeOrphan<D extends WorkflowDef<any, any>>(
    tenantDb: TenantDb,
    found: JobRecord,
    workflow: D,
    beforeStart?: StartJob<D>['beforeStart'],
  ): Promise<JobRecord | null> {
    let job: JobRecord | null = found;
    for (;;) {
      // records from before workflowInput was kept cannot be started again
      if (job.status !== 'queued' || job.workflowInput === undefined) return job;
      if (await this.hasWorkflow(job)) return job;
      const age = Date.now() - job.createdAt.getTime();
      if (age >= ORPHANED_AFTER_MS) break;
      await sleep(Math.min(ORPHAN_POLL_MS, ORPHANED_AFTER_MS - age));
      job = await this.get(tenantDb, job._id);
      if (!job) return null;
    }
    await this.launch(tenantDb, job, workflow, JSON.parse(job.workflowInput) as WorkflowInput<D>, beforeStart);
    jobsStarted.inc({ type: job.type });
    return job;
  }

  private async hasWorkflow(job: JobRecord): Promise<boolean> {
    try {
      await this.temporal.workflow.getHandle(job.workflowId).describe();
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  /** Prepares and starts a recorded job's workflow; a failure drops the record, so a retry starts afresh. */
  private async launch<D extends WorkflowDef<any, any>>(
    tenantDb: TenantDb,
    record: JobRecord,
    workflow: D,
    input: WorkflowInput<D>,
    beforeStart?: StartJob<D>['beforeStart'],
  ): Promise<void> {
    const col = tenantDb.collection(jobs);
    if (beforeStart) {
      try {
        await beforeStart(record);
      } catch (err) {
        await col.deleteOne({ _id: record._id, status: 'queued' });
        throw err;
      }
    }
    try {
      await startWorkflow(this.temporal, workflow, input, {
        taskQueue: this.taskQueue,
        workflowId: record.workflowId,
        workflowIdConflictPolicy: 'FAIL',
        // a job's workflow runs once: a late second start (a retry resuming an orphan as its
        // first request's workflow already ended) must not run it again
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: [
          { key: TENANT_ID, value: tenantDb.tenantId },
          { key: JOB_TYPE, value: record.type },
        ],
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
        // no workflow means no job: drop the record so a retry with the same key starts afresh
        await col.deleteOne({ _id: record._id, status: 'queued' });
        throw err;
      }
    }
  }

  get(tenantDb: TenantDb, jobId: string, type?: string): Promise<JobRecord | null> {
    return tenantDb.collection(jobs).findOne(type ? { _id: jobId, type } : { _id: jobId });
  }

  /**
   * The job as its workflow left it. A workflow that ended without recording the end (terminated
   * by an operator in the Temporal UI, timed out, failed past its retries) leaves the record
   * queued or processing: it is recorded failed here, so a client polling sees an end, the job
   * stops counting against the tenant's running limit and a channel lock it held is freed.
   */
  async settle(tenantDb: TenantDb, job: JobRecord): Promise<JobRecord> {
    if (isFinished(job.status)) return job;
    let ended: string;
    try {
      ended = (await this.temporal.workflow.getHandle(job.workflowId).describe()).status.name;
    } catch (err) {
      // not found: being started (Jobs.start takes milliseconds), or purged after Temporal's
      // retention; anything else (Temporal unreachable) is no answer, and the job stays as it is
      if (!(err instanceof WorkflowNotFoundError) || Date.now() - job.createdAt.getTime() < GONE_AFTER_MS) return job;
      ended = 'NOT_FOUND';
    }
    // COMPLETED: the workflow recorded its end before completing; a read just before it is stale
    if (!['FAILED', 'TERMINATED', 'TIMED_OUT', 'CANCELLED', 'NOT_FOUND'].includes(ended)) return job;
    const now = new Date();
    const error =
      job.error ??
      `the job's workflow ${ended === 'NOT_FOUND' ? 'is gone' : `ended (${ended.toLowerCase().replace('_', ' ')})`} before it finished`;
    const settled = await tenantDb
      .collection(jobs)
      .findOneAndUpdate(
        { _id: job._id, status: { $in: [...RUNNING_JOB_STATUSES] } },
        { $set: { status: 'failed', error, finishedAt: now, updatedAt: now } },
        { returnDocument: 'after' },
      );
    if (settled) {
      jobsFinished.inc({ type: settled.type, outcome: 'failed' });
      await announceJobEnd(tenantDb, settled);
    }
    return settled ?? (await this.get(tenantDb, job._id)) ?? job;
  }

  /** The workflow of a job the tenant owns, or null: the only way API code reaches a job's workflow. */
  async handle(tenantDb: TenantDb, jobId: string) {
    const job = await this.get(tenantDb, jobId);
    return job ? this.temporal.workflow.getHandle(job.workflowId) : null;
  }
}

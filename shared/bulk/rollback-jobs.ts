import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { newId } from '../ids';
import { isFinished, jobs as jobRecords, type JobRecord, type JobStatus } from '../jobs/collection';
import type { Jobs } from '../jobs/jobs';
import { rollback, type RollbackResult } from './messages';
import { BulkOperations, type BulkOperation, type OperationError } from './operations';
import { rollbackRefused } from './rollback';

export const ROLLBACK_JOB_TYPE = 'bulk-rollback';

/**
 * A rollback job as the client polls it. `rollbackOperationId` names the bulk operation the
 * rollback is recorded as (from the moment the job starts); the counts appear once it completed,
 * `error` once it failed.
 */
export interface RollbackJob {
  jobId: string;
  status: JobStatus;
  operationId: string;
  rollbackOperationId: string | null;
  success?: boolean;
  deleted?: number;
  restored?: number;
  failed?: RollbackResult['failed'];
  error?: OperationError;
}

function notFound(operationId: string): AppError {
  return new AppError(404, 'not-found', `No bulk operation ${operationId}`);
}

/** The one rollback job of an operation (the operation id is its Idempotency-Key), if one was requested. */
function findJob(tenantDb: TenantDb, operationId: string): Promise<JobRecord | null> {
  return tenantDb.collection(jobRecords).findOne({ type: ROLLBACK_JOB_TYPE, idempotencyKey: operationId });
}

async function present(tenantDb: TenantDb, job: JobRecord): Promise<RollbackJob> {
  const result = job.result as Partial<RollbackResult> | null;
  // older jobs recorded the rollback's id only in their result
  const rollbackOperationId =
    (job.input.rollbackOperationId as string | undefined) ?? result?.rollbackOperationId ?? null;
  const base = { jobId: job._id, status: job.status, operationId: String(job.input.operationId), rollbackOperationId };
  if (job.status === 'completed' && result) {
    const failed = result.failed ?? [];
    return { ...base, success: failed.length === 0, deleted: result.deleted, restored: result.restored, failed };
  }
  if (job.status !== 'failed') return base;
  const recorded: BulkOperation | null = rollbackOperationId
    ? await new BulkOperations(tenantDb).get(rollbackOperationId)
    : null;
  return {
    ...base,
    success: false,
    error: recorded?.error ?? { code: 'internal-error', message: job.error ?? 'the rollback failed' },
  };
}

/** The job as it stands (a workflow that ended unrecorded is recorded failed first), and whether it ended. */
async function answer(
  tenantDb: TenantDb,
  jobs: Jobs,
  found: JobRecord,
): Promise<{ job: RollbackJob; finished: boolean }> {
  const job = await present(tenantDb, await jobs.settle(tenantDb, found));
  // a repeated request for a refused rollback is refused as the first one was
  if (job.error?.code === 'rollback-failed')
    throw new AppError(
      400,
      'rollback-failed',
      job.error.message,
      job.error.details ? { details: job.error.details } : {},
    );
  return { job, finished: isFinished(job.status) };
}

/**
 * Starts the rollback of a bulk operation, or finds the one already started: an operation has
 * one rollback, whoever asks and however many ask at once (the job's Idempotency-Key is the
 * operation id, and the rollback's own id is taken from the job record, never from the caller).
 * A refusal known before starting (the operation changed since) is thrown as 400
 * rollback-failed; one the rollback finds itself ends the job failed, with the same error.
 */
export async function requestRollback(
  tenantDb: TenantDb,
  jobs: Jobs,
  operationId: string,
  actor: string,
): Promise<{ job: RollbackJob; finished: boolean }> {
  const ops = new BulkOperations(tenantDb);
  const op = await ops.get(operationId);
  if (!op) throw notFound(operationId);
  // the rollback is visible as an operation (processing) from the moment its job exists; its id
  // comes from the job's record, so a retry resuming the job names the same operation
  const prepare = async (job: JobRecord) => {
    await ops.start({
      id: String(job.input.rollbackOperationId),
      type: 'rollback',
      rollbackOf: op._id,
      actor,
      operationName: `rollback of ${op.operationName ?? op._id}`,
    });
  };
  const existing = await findJob(tenantDb, op._id);
  if (existing) {
    // a job whose first request died before starting its workflow is started now
    const job = await jobs.resumeOrphan(tenantDb, existing, rollback, prepare).catch(async (err: unknown) => {
      await ops.discardRollback(String(existing.input.rollbackOperationId));
      throw err;
    });
    if (job) return answer(tenantDb, jobs, job);
  }
  const check = await ops.rollbackCheck(op);
  if (!check.canRollback) {
    // a concurrent request may have started the rollback since we looked, which the check then sees as changes
    const started = await findJob(tenantDb, op._id);
    if (started) return answer(tenantDb, jobs, started);
    throw rollbackRefused(`Operation ${op._id} cannot be rolled back: ${check.reason}`, check.blockedSkus);
  }
  const rollbackOperationId = newId('bop');
  let started: { job: JobRecord; created: boolean };
  try {
    started = await jobs.start(tenantDb, {
      type: ROLLBACK_JOB_TYPE,
      prefix: 'rbk',
      workflow: rollback,
      idempotencyKey: op._id,
      input: { operationId: op._id, rollbackOperationId },
      beforeStart: prepare,
      workflowInput: (jobId) => ({
        tenantId: tenantDb.tenantId,
        operationId: op._id,
        rollbackId: rollbackOperationId,
        actor,
        jobId,
      }),
    });
  } catch (err) {
    await ops.discardRollback(rollbackOperationId);
    throw err;
  }
  // a concurrent request's job (its workflow perhaps not started yet): answered from its record, never awaited
  if (!started.created) return answer(tenantDb, jobs, started.job);
  return { job: await present(tenantDb, started.job), finished: false };
}

/** The rollback job of an operation, for a client polling it; 404 when the operation or its rollback does not exist. */
export async function rollbackStatus(tenantDb: TenantDb, jobs: Jobs, operationId: string): Promise<RollbackJob> {
  if (!(await new BulkOperations(tenantDb).get(operationId))) throw notFound(operationId);
  const found = await findJob(tenantDb, operationId);
  if (!found) throw new AppError(404, 'not-found', `No rollback of bulk operation ${operationId} was requested`);
  return present(tenantDb, await jobs.settle(tenantDb, found));
}

import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { BulkOperations, bulkOperationItems, type OperationError } from './operations';
import type { RollbackInput, RollbackResult } from './messages';
import { RollbackSteps } from './rollback-steps';

/** Items undone per step of the loop (one read and a few writes each), and so per checkpoint. */
const BATCH = 100;

/** How far a rollback got: the items (in `_id` order) before `next` are settled and counted. */
export interface RollbackCheckpoint {
  next: number;
  deleted: number;
  restored: number;
  failed: { sku: string; reason: string }[];
}

export function isRollbackCheckpoint(value: unknown): value is RollbackCheckpoint {
  const c = value as RollbackCheckpoint | null | undefined;
  return (
    typeof c?.next === 'number' &&
    typeof c.deleted === 'number' &&
    typeof c.restored === 'number' &&
    Array.isArray(c.failed)
  );
}

/** The refusal of a rollback that cannot start, as the API answers it. */
export function rollbackRefused(message: string, blockedSkus: string[]): AppError {
  return new AppError(400, 'rollback-failed', message, { details: { blockedSkus } });
}

export function refusalOf(err: AppError): OperationError {
  const details = err.extra.details as Record<string, unknown> | undefined;
  return { code: err.codeFor('products'), message: err.message, ...(details ? { details } : {}) };
}

/**
 * Undoes a bulk operation: products it created are deleted, products it changed get their
 * before-image back, each only if still as the operation left it. Safe to run again from any
 * point (a retried activity): each step is idempotent (RollbackSteps), and `checkpoint` (the
 * last heartbeat's) skips the items an earlier attempt settled. `onProgress` is called with
 * the checkpoint to keep after each batch, and after each product restored (to show life).
 */
export async function rollbackOperation(
  tenantDb: TenantDb,
  input: Pick<RollbackInput, 'operationId' | 'rollbackId' | 'actor'>,
  progress: { checkpoint?: RollbackCheckpoint; onProgress?: (checkpoint: RollbackCheckpoint) => void } = {},
): Promise<RollbackResult> {
  const { operationId, rollbackId } = input;
  const ops = new BulkOperations(tenantDb);
  const op = await ops.get(operationId);
  await ops.start({
    id: rollbackId,
    type: 'rollback',
    rollbackOf: operationId,
    actor: input.actor,
    operationName: `rollback of ${op?.operationName ?? operationId}`,
  });
  const refuse = async (err: AppError): Promise<never> => {
    await ops.refuse(rollbackId, refusalOf(err));
    throw err;
  };
  if (!op) return refuse(rollbackRefused(`No bulk operation ${operationId}`, []));
  const alreadyOurs = op.status === 'rolled_back' && op.rolledBackBy === rollbackId;
  // once this rollback has begun, the products it undid no longer pass the check: it applies to a first start only
  const begun =
    alreadyOurs ||
    (progress.checkpoint?.next ?? 0) > 0 ||
    (await tenantDb.collection(bulkOperationItems).countDocuments({ operationId: rollbackId })) > 0;
  if (!begun) {
    const check = await ops.rollbackCheck(op);
    if (!check.canRollback)
      return refuse(
        rollbackRefused(`Operation ${operationId} cannot be rolled back: ${check.reason}`, check.blockedSkus),
      );
  }

  const items = await ops.itemsOf(operationId);
  const mine = new Map((await ops.itemsOf(rollbackId)).map((i) => [i.productId, i]));
  const at: RollbackCheckpoint =
    progress.checkpoint && progress.checkpoint.next <= items.length
      ? { ...progress.checkpoint, failed: [...progress.checkpoint.failed] }
      : { next: 0, deleted: 0, restored: 0, failed: [] };
  const steps = new RollbackSteps(tenantDb, rollbackId);
  const beat = () => progress.onProgress?.({ ...at, failed: [...at.failed] });
  beat();
  // the checkpoint moves by whole batches: a batch's items are recorded done only at its end
  for (let from = at.next; from < items.length; from += BATCH) {
    const batch = items.slice(from, from + BATCH);
    const refused = await steps.undo(batch, mine, beat);
    for (const [k, item] of batch.entries()) {
      if (refused[k]) at.failed.push({ sku: item.sku, reason: refused[k] });
      else if (item.action === 'created') at.deleted++;
      else at.restored++;
    }
    at.next = from + batch.length;
    beat();
  }

  const counts = {
    totalProcessed: at.deleted + at.restored + at.failed.length,
    created: 0,
    updated: at.restored,
    skipped: 0,
    failed: at.failed.length,
    deleted: at.deleted,
  };
  await ops.finish(rollbackId, at.failed.length ? 'failed' : 'completed', counts);
  if (!at.failed.length) await ops.markRolledBack(operationId, rollbackId);
  return {
    operationId,
    rollbackOperationId: rollbackId,
    deleted: at.deleted,
    restored: at.restored,
    failed: at.failed,
  };
}

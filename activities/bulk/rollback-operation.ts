import { activityInfo, heartbeat } from '@temporalio/activity';
import type { Db } from 'mongodb';
import { TenantDb } from '../../shared/db/tenant-db';
import { BulkOperations } from '../../shared/bulk/operations';
import { presentOperation } from '../../shared/bulk/present';
import { isRollbackCheckpoint, rollbackOperation as rollback } from '../../shared/bulk/rollback';
import type { RollbackInput, RollbackResult } from '../../shared/bulk/messages';
import { recordEvent } from '../../shared/webhooks/events';

/**
 * Announces bulk_operation.rolled_back once the operation is marked rolled back by this rollback
 * (a rollback that failed some products leaves it as it was, and announces nothing but its job's
 * end). Keyed by the operation and the rollback: a retried activity records the same event. An
 * operation is rolled back once, so its sequence is 2 (its bulk_operation.completed is 1).
 */
async function announceRolledBack(tenantDb: TenantDb, input: RollbackInput): Promise<void> {
  const op = await new BulkOperations(tenantDb).get(input.operationId);
  if (op?.status !== 'rolled_back' || op.rolledBackBy !== input.rollbackId) return;
  await recordEvent(tenantDb, {
    type: 'bulk_operation.rolled_back',
    key: `rollback:${input.operationId}:${input.rollbackId}`,
    id: op._id,
    sequence: 2,
    resource: presentOperation(op),
  });
}

/**
 * Runs the rollback, heartbeating after each product with how far it got: a killed worker's
 * attempt times out within the heartbeat timeout, and the next one resumes there. A refusal (the
 * operation changed meanwhile) is an AppError, which activities/index.ts makes non-retryable.
 */
export function rollbackOperation(db: Db) {
  return async (input: RollbackInput): Promise<RollbackResult> => {
    const last: unknown = activityInfo().heartbeatDetails;
    const tenantDb = new TenantDb(db, input.tenantId);
    const result = await rollback(tenantDb, input, {
      checkpoint: isRollbackCheckpoint(last) ? last : undefined,
      onProgress: (checkpoint) => heartbeat(checkpoint),
    });
    await announceRolledBack(tenantDb, input);
    return result;
  };
}

import { activityInfo, heartbeat } from '@temporalio/activity';
import type { Db } from 'mongodb';
import { TenantDb } from '../../shared/db/tenant-db';
import { isRollbackCheckpoint, rollbackOperation as rollback } from '../../shared/bulk/rollback';
import type { RollbackInput, RollbackResult } from '../../shared/bulk/messages';

/**
 * Runs the rollback, heartbeating after each product with how far it got: a killed worker's
 * attempt times out within the heartbeat timeout, and the next one resumes there. A refusal (the
 * operation changed meanwhile) is an AppError, which activities/index.ts makes non-retryable.
 */
export function rollbackOperation(db: Db) {
  return async (input: RollbackInput): Promise<RollbackResult> => {
    const last: unknown = activityInfo().heartbeatDetails;
    return rollback(new TenantDb(db, input.tenantId), input, {
      checkpoint: isRollbackCheckpoint(last) ? last : undefined,
      onProgress: (checkpoint) => heartbeat(checkpoint),
    });
  };
}

import { ApplicationFailure } from '@temporalio/activity';
import type { Db } from 'mongodb';
import { TenantDb } from '../../shared/db/tenant-db';
import { rollbackOperation as rollback, RollbackRefused } from '../../shared/bulk/rollback';
import type { RollbackInput, RollbackResult } from '../../shared/bulk/messages';

/** Runs the rollback; a refusal (the operation changed meanwhile) is a business failure, not retried. */
export function rollbackOperation(db: Db) {
  return async (input: RollbackInput): Promise<RollbackResult> => {
    try {
      return await rollback(new TenantDb(db, input.tenantId), input.operationId, input.rollbackId, input.actor);
    } catch (err) {
      if (err instanceof RollbackRefused)
        throw ApplicationFailure.nonRetryable(err.message, 'rollback-failed', { blockedSkus: err.blockedSkus });
      throw err;
    }
  };
}

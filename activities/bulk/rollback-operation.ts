import { ApplicationFailure } from '@temporalio/activity';
import type { Db } from 'mongodb';
import { TenantDb } from '../../shared/db/tenant-db';
import { rollbackOperation as rollback, RollbackRefused, type RollbackResult } from '../../shared/bulk/rollback';

export interface RollbackInput {
  tenantId: string;
  operationId: string;
  rollbackId: string;
  actor: string;
}

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

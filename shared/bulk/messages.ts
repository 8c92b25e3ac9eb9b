import { defineWorkflow } from '../temporal/define-workflow';

export interface RollbackInput {
  tenantId: string;
  /** The bulk operation to undo. */
  operationId: string;
  /** The id the rollback is recorded under, itself a bulk operation of type `rollback`. */
  rollbackId: string;
  actor: string;
}

export interface RollbackWorkflowInput extends RollbackInput {
  jobId: string;
}

export interface RollbackResult {
  operationId: string;
  rollbackOperationId: string;
  deleted: number;
  restored: number;
  failed: { sku: string; reason: string }[];
}

/** One rollback of one bulk operation (one per operation: the job's Idempotency-Key is the operation id). */
export const rollback = defineWorkflow<RollbackWorkflowInput, RollbackResult>('rollbackWorkflow');

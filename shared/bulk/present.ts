import type { BulkOperation } from './operations';

/** A bulk operation as GET /products/bulk/operations/{id} answers it, and as its webhook event carries it. */
export function presentOperation(op: BulkOperation) {
  const { _id, tenantId: _t, createdAt, finishedAt, leaseUntil: _l, ...rest } = op;
  return {
    id: _id,
    ...rest,
    // null when unset, also in a record an upsert made on a store that leaves nulls out
    operationName: rest.operationName ?? null,
    rollbackOf: rest.rollbackOf ?? null,
    rolledBackBy: rest.rolledBackBy ?? null,
    createdAt: createdAt.toISOString(),
    finishedAt: finishedAt ? finishedAt.toISOString() : null,
  };
}

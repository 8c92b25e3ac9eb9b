import type { BulkOperation } from './operations';

/** A bulk operation as GET /products/bulk/operations/{id} answers it, and as its webhook event carries it. */
export function presentOperation(op: BulkOperation) {
  const { _id, tenantId: _t, createdAt, finishedAt, leaseUntil: _l, ...rest } = op;
  return {
    id: _id,
    ...rest,
    createdAt: createdAt.toISOString(),
    finishedAt: finishedAt ? finishedAt.toISOString() : null,
  };
}

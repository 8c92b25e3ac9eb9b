import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { defineRoutes } from '../route';
import { tenantOf } from '../context';
import { AppError } from '../../shared/errors/catalog';
import { BulkOperations, type BulkOperation } from '../../shared/bulk/operations';
import { newId } from '../../shared/ids';
import { rollback } from '../../shared/bulk/messages';
import { workflowHandle } from '../../shared/temporal/workflows';
import { PAGE_PARAM } from '../../shared/validation';

const both = { scopes: ['products:read' as const, 'products:update' as const] };

function present(op: BulkOperation) {
  const { _id, tenantId: _t, createdAt, finishedAt, ...rest } = op;
  return {
    id: _id,
    ...rest,
    createdAt: createdAt.toISOString(),
    finishedAt: finishedAt ? finishedAt.toISOString() : null,
  };
}

function rollbackFailed(message: string, blockedSkus: string[]): AppError {
  return new AppError(400, 'rollback-failed', message, { details: { blockedSkus } });
}

export const bulkRoutes = defineRoutes([
  {
    method: 'get',
    path: '/products/bulk/operations',
    summary: 'History of bulk operations (imports, rule flows, AI transforms, rollbacks), newest first',
    tags: ['bulk'],
    auth: both,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        type: { type: 'string', enum: ['csv-import', 'flow', 'ai-transform', 'rollback'] },
        page: PAGE_PARAM,
        limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
      },
    },
    responses: { 200: { description: '`{operations[], total, page, limit}`' } },
    handler: async (ctx) => {
      const q = ctx.state.query as { type?: string; page: number; limit: number };
      const { rows, total } = await new BulkOperations(tenantOf(ctx).tenantDb).list(q);
      ctx.body = { operations: rows.map(present), total, page: q.page, limit: q.limit };
    },
  },
  {
    method: 'get',
    path: '/products/bulk/operations/:id',
    summary: 'A bulk operation, whether it can still be rolled back, and the products it touched',
    tags: ['bulk'],
    auth: both,
    handler: async (ctx) => {
      const ops = new BulkOperations(tenantOf(ctx).tenantDb);
      const op = await ops.get(ctx.params.id);
      if (!op) throw new AppError(404, 'not-found', `No bulk operation ${ctx.params.id}`);
      const [check, items] = await Promise.all([ops.rollbackCheck(op), ops.itemsOf(op._id)]);
      ctx.body = {
        ...present(op),
        canRollback: check.canRollback,
        ...(check.reason ? { rollbackBlockedBy: check.reason } : {}),
        products: items.map((i) => ({ productId: i.productId, sku: i.sku, action: i.action })),
      };
    },
  },
  {
    method: 'post',
    path: '/products/bulk/operations/:id/rollback',
    summary: 'Roll back a bulk operation (as a workflow): created products are deleted, changed ones restored',
    description:
      '400 rollback-failed, naming the SKUs, when a later operation or a direct edit changed any of its products. A rollback is recorded as an operation too. Repeating the call returns the same rollback.',
    tags: ['bulk'],
    auth: { scopes: ['products:update'] },
    responses: {
      200: { description: '`{success: true, operationId, rollbackOperationId, deleted, restored, failed[]}`' },
      400: { description: 'rollback-failed' },
    },
    handler: async (ctx) => {
      const { principal, tenantDb } = tenantOf(ctx);
      const ops = new BulkOperations(tenantDb);
      const op = await ops.get(ctx.params.id);
      if (!op) throw new AppError(404, 'not-found', `No bulk operation ${ctx.params.id}`);
      if (!(op.status === 'rolled_back' && op.rolledBackBy)) {
        const check = await ops.rollbackCheck(op);
        if (!check.canRollback)
          throw rollbackFailed(`Operation ${op._id} cannot be rolled back: ${check.reason}`, check.blockedSkus);
      }
      const rollbackId = newId('bop');
      const { job } = await ctx.deps.jobs.start(tenantDb, {
        type: 'bulk-rollback',
        prefix: 'rbk',
        workflow: rollback,
        // one rollback per operation: a repeated request is the same job
        idempotencyKey: op._id,
        input: { operationId: op._id },
        workflowInput: (jobId) => ({
          tenantId: tenantDb.tenantId,
          operationId: op._id,
          rollbackId,
          actor: principal.keyId,
          jobId,
        }),
      });
      try {
        const result = await workflowHandle(ctx.deps.temporal, rollback, job.workflowId).result();
        ctx.body = { success: result.failed.length === 0, jobId: job._id, ...result };
      } catch (err) {
        const cause = err instanceof WorkflowFailedError ? err.cause : undefined;
        const failure = cause instanceof ApplicationFailure ? cause : (cause as { cause?: unknown } | undefined)?.cause;
        if (failure instanceof ApplicationFailure && failure.type === 'rollback-failed') {
          const details = (failure.details?.[0] ?? {}) as { blockedSkus?: string[] };
          throw rollbackFailed(failure.message, details.blockedSkus ?? []);
        }
        throw err;
      }
    },
  },
]);

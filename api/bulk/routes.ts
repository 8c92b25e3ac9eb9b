import { defineRoutes } from '../route';
import { tenantOf } from '../context';
import { AppError } from '../../shared/errors/catalog';
import { BulkOperations } from '../../shared/bulk/operations';
import { presentOperation } from '../../shared/bulk/present';
import { requestRollback, rollbackStatus } from '../../shared/bulk/rollback-jobs';
import { PAGE_PARAM } from '../../shared/validation';

const both = { scopes: ['products:read' as const, 'products:update' as const] };

export const bulkRoutes = defineRoutes([
  {
    method: 'get',
    path: '/products/bulk/operations',
    summary:
      'History of bulk operations (imports, rule flows, AI transforms, marketplace categories, rollbacks), newest first',
    tags: ['bulk'],
    auth: both,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        type: { type: 'string', enum: ['csv-import', 'flow', 'ai-transform', 'marketplace-category', 'rollback'] },
        page: PAGE_PARAM,
        limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
      },
    },
    responses: { 200: { description: '`{operations[], total, page, limit}`' } },
    handler: async (ctx) => {
      const q = ctx.state.query as { type?: string; page: number; limit: number };
      const { rows, total } = await new BulkOperations(tenantOf(ctx).tenantDb).list(q);
      ctx.body = { operations: rows.map(presentOperation), total, page: q.page, limit: q.limit };
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
        ...presentOperation(op),
        canRollback: check.canRollback,
        ...(check.reason ? { rollbackBlockedBy: check.reason } : {}),
        products: items.map((i) => ({ productId: i.productId, sku: i.sku, action: i.action })),
      };
    },
  },
  {
    method: 'post',
    path: '/products/bulk/operations/:id/rollback',
    idempotency: 'native',
    summary: 'Roll back a bulk operation (a job): created products are deleted, changed ones restored',
    description: [
      'Starts the rollback as a job and answers at once: 202 with the job, `{jobId, status, operationId, rollbackOperationId}`',
      '(status queued or processing; a `Location` header names the URL to poll). An operation has one rollback: a repeated',
      'or concurrent request answers the same job and the same rollbackOperationId, 202 while it runs and 200 once it ended.',
      'A completed job adds `{success, deleted, restored, failed[{sku, reason}]}` (success false when some product could not',
      'be undone); a failed one adds `success: false` and `error{code, message, details}`.',
      '',
      'Poll `GET /products/bulk/operations/{id}/rollback` (the same body) until status is completed or failed; the rollback',
      'is also recorded as a bulk operation, `GET /products/bulk/operations/{rollbackOperationId}` (status processing,',
      'completed or failed), and the operation rolled back shows status rolled_back once it is done.',
      '',
      '400 rollback-failed, with `details.blockedSkus`, when a later operation or a direct edit changed any of its products',
      '(known before starting); if the rollback itself finds that, the job ends failed with that error, and asking again',
      'answers the same 400.',
    ].join('\n'),
    tags: ['bulk'],
    auth: { scopes: ['products:update'] },
    responses: {
      202: { description: 'the rollback job, running: `{jobId, status, operationId, rollbackOperationId}`' },
      200: {
        description:
          'the rollback had already ended: the job with `{success, deleted, restored, failed[]}` or `{success: false, error}`',
      },
      400: { description: 'rollback-failed: `{code, message, details: {blockedSkus}}`' },
      404: { description: 'not-found' },
    },
    handler: async (ctx) => {
      const { principal, tenantDb } = tenantOf(ctx);
      const { job, finished } = await requestRollback(tenantDb, ctx.deps.jobs, ctx.params.id, principal.keyId);
      if (!finished) {
        ctx.status = 202;
        ctx.set('Location', `/products/bulk/operations/${encodeURIComponent(job.operationId)}/rollback`);
      }
      ctx.body = job;
    },
  },
  {
    method: 'get',
    path: '/products/bulk/operations/:id/rollback',
    summary: 'The rollback job of a bulk operation, for polling after POST …/rollback',
    description:
      'The body POST /products/bulk/operations/{id}/rollback answered, as it stands: `{jobId, status, operationId, rollbackOperationId}`, plus `{success, deleted, restored, failed[]}` once completed or `{success: false, error{code, message, details}}` once failed (a refusal the rollback found itself is `error.code` rollback-failed with `details.blockedSkus`). 404 when no rollback of the operation was requested.',
    tags: ['bulk'],
    auth: both,
    responses: {
      200: {
        description:
          '`{jobId, status, operationId, rollbackOperationId, success?, deleted?, restored?, failed?, error?}`',
      },
      404: { description: 'not-found' },
    },
    handler: async (ctx) => {
      ctx.body = await rollbackStatus(tenantOf(ctx).tenantDb, ctx.deps.jobs, ctx.params.id);
    },
  },
]);

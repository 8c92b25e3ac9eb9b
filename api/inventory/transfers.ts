import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { defineRoutes } from '../route';
import { tenantOf, type AppContext } from '../context';
import { AppError } from '../../shared/errors/catalog';
import { newId } from '../../shared/ids';
import { Locations } from '../../shared/locations/locations';
import { Catalog } from '../../shared/products/catalog';
import { JOB_TYPE, TENANT_ID } from '../../shared/temporal/search-attributes';
import { workflowIdFor } from '../../shared/temporal/workflow-ids';
import { presentTransfer, transfers, type TransferDoc } from '../../shared/inventory/transfers';
import {
  transferStateCode,
  TRANSFER_MOVES,
  type TransferAction,
  type TransferLine,
} from '../../shared/inventory/transfer-rules';
import {
  transfer as transferWorkflow,
  transferUpdates,
  type TransferActionArgs,
  type TransferInput,
} from '../../shared/inventory/messages';
import { startWorkflow } from '../../shared/temporal/workflows';
import { PAGE_PARAM } from '../../shared/validation';

const read = { scopes: ['inventory:read' as const] };
const transfer = { scopes: ['inventory:transfer' as const] };

async function findTransfer(ctx: AppContext): Promise<TransferDoc> {
  const t = await tenantOf(ctx).tenantDb.collection(transfers).findOne({ _id: ctx.params.id });
  if (!t) throw new AppError(404, 'not-found', `No transfer ${ctx.params.id}`);
  return t;
}

function refused(t: { _id: string }, action: TransferAction, state: string, message?: string): AppError {
  return new AppError(
    409,
    transferStateCode(state as TransferDoc['status']),
    message ??
      `A ${state} transfer cannot be ${action === 'approve' ? 'approved' : action === 'receive' ? 'received' : 'cancelled'}`,
    {
      details: { transferId: t._id, action, currentState: state, allowedFrom: TRANSFER_MOVES[action].from },
    },
  );
}

/** Runs one action as an Update of the transfer's workflow; a refusal is a 409 naming the state, kept in the history. */
async function act(ctx: AppContext, action: TransferAction): Promise<void> {
  const { tenantDb, principal } = tenantOf(ctx);
  const t = await findTransfer(ctx);
  const body = (ctx.request.body ?? {}) as { reason?: unknown };
  if (body.reason !== undefined && (typeof body.reason !== 'string' || body.reason.length > 1000)) {
    throw new AppError(400, 'bad-request', 'reason must be a text of at most 1,000 characters', { field: 'reason' });
  }
  const key = ctx.get('idempotency-key') || undefined;
  // a retried receive after the workflow ended: the first answer again
  if (action === 'receive' && key && t.status === 'received' && t.receiveKey === key) {
    ctx.body = presentTransfer(t);
    return;
  }
  const args: TransferActionArgs = {
    actor: principal.keyId,
    ...(typeof body.reason === 'string' ? { reason: body.reason } : {}),
    ...(key ? { idempotencyKey: key } : {}),
  };
  const col = tenantDb.collection(transfers);
  try {
    await ctx.deps.temporal.workflow
      .getHandle(t.workflowId)
      .executeUpdate(transferUpdates[action], { args: [args], ...(key ? { updateId: `${action}:${key}` } : {}) });
  } catch (err) {
    // the refusal is an ApplicationFailure: from the Update itself, or inside the activity that failed
    let cause: unknown = err instanceof WorkflowUpdateFailedError ? err.cause : null;
    while (cause && !(cause instanceof ApplicationFailure) && (cause as { cause?: unknown }).cause)
      cause = (cause as { cause?: unknown }).cause;
    let failure: AppError;
    if (cause instanceof ApplicationFailure && cause.type === 'insufficient-stock') {
      failure = new AppError(409, 'conflict/insufficient-stock', cause.message, {
        details: { transferId: t._id, ...((cause.details?.[0] as object) ?? {}) },
      });
    } else if (cause instanceof ApplicationFailure && cause.type?.startsWith('conflict/transfer-')) {
      failure = refused(t, action, cause.type.slice('conflict/transfer-'.length), cause.message);
    } else {
      // the workflow has ended (received or cancelled): the record says how
      const now = await col.findOne({ _id: t._id });
      if (!now || (now.status !== 'received' && now.status !== 'cancelled')) throw err;
      if (action === 'receive' && key && now.status === 'received' && now.receiveKey === key) {
        ctx.body = presentTransfer(now);
        return;
      }
      failure = refused(t, action, now.status);
    }
    const state = ((failure.extra.details as { currentState?: string } | undefined)?.currentState ??
      t.status) as TransferDoc['status'];
    await col.updateById(t._id, {
      $push: {
        history: {
          action,
          outcome: 'refused',
          state,
          actor: principal.keyId,
          at: new Date(),
          ...(failure.code === 'conflict/insufficient-stock' ? { reason: 'insufficient stock' } : {}),
        },
      },
    });
    throw failure;
  }
  ctx.body = presentTransfer((await col.findOne({ _id: t._id }))!);
}

const actionRoute = (action: TransferAction, summary: string) => ({
  method: 'post' as const,
  path: `/inventory/transfers/:id/${action}`,
  summary,
  tags: ['inventory'],
  auth: transfer,
  body: { type: 'object', additionalProperties: false, properties: { reason: { type: 'string', maxLength: 1000 } } },
  bodyRequired: false,
  responses: {
    200: { description: 'the transfer after the action' },
    404: { description: 'not-found' },
    409: {
      description:
        'conflict/transfer-<state>: the action is not allowed in the current state (named in the code and details.currentState); conflict/insufficient-stock on receive',
    },
  },
  handler: (ctx: AppContext) => act(ctx, action),
});

export const transferRoutes = defineRoutes([
  {
    method: 'post',
    path: '/inventory/transfers',
    summary:
      'Create a transfer of stock between two locations (pending); it runs as the workflow <tenantId>/<transferId>',
    tags: ['inventory'],
    auth: transfer,
    body: {
      type: 'object',
      properties: {
        originId: { type: 'string' },
        destinationId: { type: 'string' },
        productsList: {
          type: 'array',
          items: {
            type: 'object',
            required: ['sku', 'quantity'],
            properties: { sku: { type: 'string' }, quantity: { type: 'integer', minimum: 1 } },
          },
        },
        notes: { type: 'string', maxLength: 2000 },
      },
    },
    bodyValidation: 'handler',
    responses: {
      201: { description: 'the transfer, status pending' },
      400: {
        description:
          'bad-request/missing-body, missing-origin, missing-destination, missing-products, invalid-items, same-location',
      },
      404: { description: 'not-found/location, not-found (SKU)' },
    },
    handler: async (ctx) => {
      const { tenantDb, principal } = tenantOf(ctx);
      const b = ctx.request.body as Record<string, unknown>;
      if (!b || typeof b !== 'object' || Array.isArray(b) || !Object.keys(b).length)
        throw new AppError(
          400,
          'bad-request/missing-body',
          'A body {originId, destinationId, productsList} is required',
        );
      const unknown = Object.keys(b).filter((k) => !['originId', 'destinationId', 'productsList', 'notes'].includes(k));
      if (unknown.length)
        throw new AppError(400, 'bad-request', `Unknown field(s): ${unknown.join(', ')}`, { field: unknown[0] });
      if (typeof b.originId !== 'string' || !b.originId)
        throw new AppError(400, 'bad-request/missing-origin', 'originId is required', { field: 'originId' });
      if (typeof b.destinationId !== 'string' || !b.destinationId)
        throw new AppError(400, 'bad-request/missing-destination', 'destinationId is required', {
          field: 'destinationId',
        });
      if (!Array.isArray(b.productsList) || b.productsList.length === 0)
        throw new AppError(400, 'bad-request/missing-products', 'productsList must list at least one {sku, quantity}', {
          field: 'productsList',
        });
      if (b.notes !== undefined && (typeof b.notes !== 'string' || b.notes.length > 2000))
        throw new AppError(400, 'bad-request', 'notes must be a text of at most 2,000 characters', { field: 'notes' });
      if (b.originId === b.destinationId)
        throw new AppError(400, 'bad-request/same-location', 'originId and destinationId must differ', {
          field: 'destinationId',
        });
      const lines = new Map<string, number>();
      for (const [i, raw] of (b.productsList as unknown[]).entries()) {
        const line = raw as Record<string, unknown>;
        if (
          !line ||
          typeof line !== 'object' ||
          typeof line.sku !== 'string' ||
          !line.sku.trim() ||
          !Number.isInteger(line.quantity) ||
          (line.quantity as number) < 1 ||
          (line.quantity as number) > 1_000_000
        ) {
          throw new AppError(
            400,
            'bad-request/invalid-items',
            `productsList.${i} must be {sku, quantity} with a whole quantity of at least 1`,
            { field: `productsList.${i}` },
          );
        }
        const sku = line.sku.trim().toUpperCase();
        lines.set(sku, (lines.get(sku) ?? 0) + (line.quantity as number)); // one line per SKU
      }
      const locations = new Locations(tenantDb);
      await locations.require(b.originId);
      await locations.require(b.destinationId);
      const catalog = new Catalog(tenantDb);
      for (const sku of lines.keys())
        if (!(await catalog.skuOwner(sku)))
          throw new AppError(404, 'not-found', `No product or variant with SKU ${sku}`, { field: 'productsList' });

      const id = newId('trf');
      const now = new Date();
      const productsList: TransferLine[] = [...lines].map(([sku, quantity]) => ({ sku, quantity }));
      const doc: Omit<TransferDoc, 'tenantId'> = {
        _id: id,
        originId: b.originId,
        destinationId: b.destinationId,
        productsList,
        notes: (b.notes as string | undefined) ?? null,
        status: 'pending',
        workflowId: workflowIdFor(tenantDb.tenantId, id),
        createdBy: principal.keyId,
        createdAt: now,
        updatedAt: now,
        approvedAt: null,
        receivedAt: null,
        cancelledAt: null,
        cancelReason: null,
        receiveKey: null,
        history: [{ action: 'create', outcome: 'applied', state: 'pending', actor: principal.keyId, at: now }],
      };
      const col = tenantDb.collection(transfers);
      await col.insertOne(doc);
      const input: TransferInput = {
        tenantId: tenantDb.tenantId,
        transferId: id,
        originId: b.originId,
        destinationId: b.destinationId,
        productsList,
      };
      try {
        await startWorkflow(ctx.deps.temporal, transferWorkflow, input, {
          taskQueue: ctx.deps.config.taskQueue,
          workflowId: doc.workflowId,
          workflowIdConflictPolicy: 'FAIL',
          typedSearchAttributes: [
            { key: TENANT_ID, value: tenantDb.tenantId },
            { key: JOB_TYPE, value: 'inventory-transfer' },
          ],
        });
      } catch (err) {
        await col.deleteById(id); // no workflow, no transfer
        throw err;
      }
      ctx.status = 201;
      ctx.body = presentTransfer({ ...doc, tenantId: tenantDb.tenantId });
    },
  },
  {
    method: 'get',
    path: '/inventory/transfers',
    summary: 'Transfers, newest first',
    tags: ['inventory'],
    auth: read,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        status: { type: 'string', enum: ['pending', 'approved', 'received', 'cancelled'] },
        page: PAGE_PARAM,
        limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
      },
    },
    responses: { 200: { description: '`{transfers, totalCount, page, limit}`' } },
    handler: async (ctx) => {
      const q = ctx.state.query as { status?: TransferDoc['status']; page: number; limit: number };
      const col = tenantOf(ctx).tenantDb.collection(transfers);
      const filter = q.status ? { status: q.status } : {};
      const [rows, totalCount] = await Promise.all([
        col.find(filter, { sort: { createdAt: -1, _id: -1 }, skip: (q.page - 1) * q.limit, limit: q.limit }).toArray(),
        col.countDocuments(filter),
      ]);
      ctx.body = { transfers: rows.map(presentTransfer), totalCount, page: q.page, limit: q.limit };
    },
  },
  {
    method: 'get',
    path: '/inventory/transfers/:id',
    summary: 'One transfer with its history (refused attempts included)',
    tags: ['inventory'],
    auth: read,
    responses: { 200: { description: 'the transfer' }, 404: { description: 'not-found' } },
    handler: async (ctx) => {
      ctx.body = presentTransfer(await findTransfer(ctx));
    },
  },
  actionRoute('approve', 'Approve a pending transfer'),
  actionRoute(
    'receive',
    'Receive an approved transfer: stock leaves the origin and enters the destination, exactly once (a retry with the same Idempotency-Key answers the same)',
  ),
  actionRoute('cancel', 'Cancel a transfer that is not received yet (optional reason)'),
]);

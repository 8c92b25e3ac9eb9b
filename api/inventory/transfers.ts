import { defineRoutes, type InputFailure, type RouteSpec } from '../route';
import { createdId, tenantOf, type AppContext } from '../context';
import { presentTransfer } from '../../shared/inventory/transfers';
import { TransferService, type NewTransfer } from '../../shared/inventory/transfer-service';
import {
  MAX_TRANSFER_LINES,
  MAX_TRANSFER_QUANTITY,
  type TransferAction,
  type TransferStatus,
} from '../../shared/inventory/transfer-rules';
import { limitParam, PAGE_PARAM } from '../../shared/paging';

const read = { scopes: ['inventory:read' as const] };
const transfer = { scopes: ['inventory:transfer' as const] };

const service = (ctx: AppContext) => new TransferService(ctx.deps.temporal, ctx.deps.config.taskQueue);

const createBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  required: ['originId', 'destinationId', 'productsList'],
  properties: {
    originId: { type: 'string', minLength: 1 },
    destinationId: { type: 'string', minLength: 1 },
    productsList: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_TRANSFER_LINES,
      description: 'Lines naming the same SKU (in any case) are added up into one line.',
      items: {
        type: 'object',
        required: ['sku', 'quantity'],
        properties: {
          sku: { type: 'string', minLength: 1, pattern: '\\S' },
          quantity: { type: 'integer', minimum: 1, maximum: MAX_TRANSFER_QUANTITY },
        },
      },
    },
    // null is "no notes", as adjustments and counts take it and as a transfer answers it
    notes: { type: ['string', 'null'], maxLength: 2000 },
  },
};

/** `productsList.3.quantity` → `productsList.3`: the answer names the line. */
const lineOf = (f: InputFailure) => f.field.split('.').slice(0, 2).join('.');

const actionRoute = (action: TransferAction, summary: string): RouteSpec => ({
  method: 'post',
  path: `/inventory/transfers/:id/${action}`,
  // the use case keeps the key (the action's Update id); the route checks its form
  idempotency: 'native',
  summary,
  tags: ['inventory'],
  auth: transfer,
  body: { type: 'object', additionalProperties: false, properties: { reason: { type: 'string', maxLength: 1000 } } },
  bodyRequired: false,
  invalid: {
    rules: [{ field: 'reason', code: 'bad-request', message: 'reason must be a text of at most 1,000 characters' }],
  },
  responses: {
    200: { description: 'the transfer after the action' },
    400: { description: 'bad-request: an unknown field, or a reason longer than 1,000 characters' },
    404: { description: 'not-found' },
    409: {
      description:
        'conflict/transfer-<state>: the action is not allowed in the current state (named in the code and details.currentState); conflict/insufficient-stock on receive',
    },
  },
  handler: async (ctx) => {
    const { tenantDb, principal } = tenantOf(ctx);
    const { reason } = ctx.request.body as { reason?: string };
    const idempotencyKey = ctx.get('idempotency-key') || undefined;
    const t = await service(ctx).act(tenantDb, principal.keyId, ctx.params.id, action, { reason, idempotencyKey });
    ctx.body = presentTransfer(t);
  },
});

export const transferRoutes = defineRoutes([
  {
    method: 'post',
    path: '/inventory/transfers',
    idempotency: 'stored',
    summary:
      'Create a transfer of stock between two locations (pending); it runs as the workflow <tenantId>/<transferId>',
    tags: ['inventory'],
    auth: transfer,
    body: createBody,
    invalid: {
      missingBody: {
        code: 'bad-request/missing-body',
        message: 'A body {originId, destinationId, productsList} is required',
      },
      // in the order the answer picks them when several apply
      rules: [
        {
          field: '(body)',
          keyword: 'type',
          code: 'bad-request/missing-body',
          message: 'A body {originId, destinationId, productsList} is required',
        },
        {
          keyword: 'additionalProperties',
          field: '*',
          code: 'bad-request',
          message: (f) => `Unknown field: ${f.field}`,
        },
        { field: 'originId', code: 'bad-request/missing-origin', message: 'originId is required' },
        { field: 'destinationId', code: 'bad-request/missing-destination', message: 'destinationId is required' },
        {
          field: 'productsList',
          keyword: 'maxItems',
          code: 'bad-request',
          message: `productsList may list at most ${MAX_TRANSFER_LINES} lines`,
        },
        {
          field: 'productsList',
          code: 'bad-request/missing-products',
          message: 'productsList must list at least one {sku, quantity}',
        },
        { field: 'notes', code: 'bad-request', message: 'notes must be a text of at most 2,000 characters' },
        {
          field: 'productsList.*.**',
          code: 'bad-request/invalid-items',
          message: (f) =>
            `${lineOf(f)} must be {sku, quantity} with a whole quantity of 1 to ${MAX_TRANSFER_QUANTITY.toLocaleString('en-US')}`,
        },
      ],
    },
    responses: {
      201: { description: 'the transfer, status pending' },
      400: {
        description: `bad-request/missing-body, missing-origin, missing-destination, missing-products, invalid-items (a line that is not {sku, quantity} with a whole quantity of 1 to ${MAX_TRANSFER_QUANTITY}), same-location; bad-request (an unknown field, notes over 2,000 characters, more than ${MAX_TRANSFER_LINES} lines)`,
      },
      404: { description: 'not-found/location, not-found (SKU)' },
    },
    handler: async (ctx) => {
      const { tenantDb, principal } = tenantOf(ctx);
      const t = await service(ctx).create(
        tenantDb,
        principal.keyId,
        ctx.request.body as unknown as NewTransfer,
        createdId(ctx, 'trf'),
      );
      ctx.status = 201;
      ctx.body = presentTransfer(t);
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
        limit: limitParam(100, 20),
      },
    },
    responses: { 200: { description: '`{transfers, totalCount, page, limit}`' } },
    handler: async (ctx) => {
      const q = ctx.state.query as { status?: TransferStatus; page: number; limit: number };
      const { transfers, totalCount } = await service(ctx).list(tenantOf(ctx).tenantDb, q);
      ctx.body = { transfers: transfers.map(presentTransfer), totalCount, page: q.page, limit: q.limit };
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
      ctx.body = presentTransfer(await service(ctx).get(tenantOf(ctx).tenantDb, ctx.params.id));
    },
  },
  actionRoute('approve', 'Approve a pending transfer'),
  actionRoute(
    'receive',
    'Receive an approved transfer: stock leaves the origin and enters the destination, exactly once (a retry with the same Idempotency-Key answers the same)',
  ),
  actionRoute('cancel', 'Cancel a transfer that is not received yet (optional reason)'),
]);

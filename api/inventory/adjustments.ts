import { defineRoutes, type InputRule } from '../route';
import { tenantOf, type AppContext } from '../context';
import {
  ADJUSTMENT_REASONS,
  ADJUSTMENT_STATUSES,
  Adjustments,
  presentAdjustment,
  type AdjustmentQuery,
  type CreateAdjustmentInput,
} from '../../shared/inventory/adjustments';
import {
  ABSENT,
  createAdjustmentBody,
  quantityMessage,
  rejectAdjustmentBody,
} from '../../shared/inventory/input-schemas';
import { limitParam, PAGE_PARAM } from '../../shared/paging';

const read = { scopes: ['inventory:read' as const] };
const adjust = { scopes: ['inventory:adjust' as const] };

function service(ctx: AppContext): Adjustments {
  const { tenantDb, principal } = tenantOf(ctx);
  return new Adjustments(tenantDb, principal.keyId);
}

const adjustmentShape =
  '`{id, locationId, sku, currentQuantity, newQuantity, difference, reason, notes, reference, status, createdBy, createdAt, updatedAt, approvedBy, approvedAt, rejectedBy, rejectedAt, rejectionReason, applied, movementId, appliedDelta, quantityAfter, supersededBy (a count’s correction left undone: the later correction’s key)}`';

const missingBody = {
  code: 'bad-request/missing-body',
  message: 'A JSON body {locationId, sku, newQuantity, reason, notes?} is required',
};

const unknownField: InputRule = {
  keyword: 'additionalProperties',
  code: 'bad-request',
  message: (f) => `Unknown field ${f.field}; accepted: locationId, sku, newQuantity, reason, notes`,
};

export const adjustmentRoutes = defineRoutes([
  {
    method: 'post',
    path: '/inventory/adjustments',
    idempotency: 'native',
    summary:
      'Request a stock adjustment (pending until approved); an Idempotency-Key makes a retry answer the first one',
    description:
      'Checked in this order: body (bad-request/missing-body), locationId, sku, newQuantity, reason present (bad-request/missing-location | missing-sku | missing-quantity | missing-reason), newQuantity a whole number ≥ 0 (bad-request/invalid-stock), reason one of the 11 (bad-request/invalid-reason), the SKU (404 not-found), the location (404 not-found/location), no integration managing them (403 forbidden/inventory-handler).',
    tags: ['inventory'],
    auth: adjust,
    body: createAdjustmentBody,
    invalid: {
      missingBody,
      // in the spec's order: the missing fields first, then an unknown one, then each value
      rules: [
        {
          field: 'locationId',
          keyword: ABSENT,
          code: 'bad-request/missing-location',
          message: 'locationId is required',
        },
        { field: 'sku', keyword: ABSENT, code: 'bad-request/missing-sku', message: 'sku is required' },
        {
          field: 'newQuantity',
          keyword: ['required', 'not'],
          code: 'bad-request/missing-quantity',
          message: 'newQuantity is required',
        },
        { field: 'reason', keyword: ABSENT, code: 'bad-request/missing-reason', message: 'reason is required' },
        unknownField,
        { field: 'newQuantity', code: 'bad-request/invalid-stock', message: quantityMessage },
        {
          field: 'reason',
          code: 'bad-request/invalid-reason',
          message: `reason must be one of ${ADJUSTMENT_REASONS.join(', ')}; 'sale' is reserved for automatic decrements made by orders`,
        },
      ],
    },
    responses: {
      201: { description: adjustmentShape },
      400: {
        description:
          'bad-request/missing-body, missing-location, missing-sku, missing-quantity, missing-reason, invalid-stock, invalid-reason',
      },
      403: { description: 'forbidden/inventory-handler' },
      404: { description: 'not-found (SKU), not-found/location' },
    },
    handler: async (ctx) => {
      const input = ctx.request.body as unknown as CreateAdjustmentInput;
      const doc = await service(ctx).create(input, ctx.get('idempotency-key') || undefined);
      ctx.status = 201;
      ctx.set('Location', `/inventory/adjustments/${doc._id}`);
      ctx.body = presentAdjustment(doc);
    },
  },
  {
    method: 'get',
    path: '/inventory/adjustments',
    summary: 'List adjustments, newest first',
    tags: ['inventory'],
    auth: read,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        status: { type: 'string', enum: ADJUSTMENT_STATUSES },
        sku: { type: 'string', maxLength: 100 },
        locationId: { type: 'string', maxLength: 100 },
        page: PAGE_PARAM,
        limit: limitParam(200, 50),
      },
    },
    responses: { 200: { description: `\`{adjustments[${adjustmentShape}], totalCount, page, limit}\`` } },
    handler: async (ctx) => {
      const q = ctx.state.query as unknown as AdjustmentQuery;
      const { adjustments, totalCount } = await service(ctx).list(q);
      ctx.body = { adjustments: adjustments.map(presentAdjustment), totalCount, page: q.page, limit: q.limit };
    },
  },
  {
    method: 'get',
    path: '/inventory/adjustments/:id',
    summary: 'Read an adjustment',
    tags: ['inventory'],
    auth: read,
    responses: { 200: { description: adjustmentShape }, 404: { description: 'not-found' } },
    handler: async (ctx) => {
      ctx.body = presentAdjustment(await service(ctx).get(ctx.params.id));
    },
  },
  {
    method: 'post',
    path: '/inventory/adjustments/:id/approve',
    summary: 'Approve a pending adjustment: the balance is set to newQuantity through the ledger, exactly once',
    description:
      'Only a pending adjustment can be approved: otherwise 409 `conflict/adjustment-<status>` (of concurrent approves, one succeeds).',
    tags: ['inventory'],
    auth: adjust,
    body: { type: 'object', additionalProperties: false, properties: {} },
    bodyRequired: false,
    responses: {
      200: { description: `${adjustmentShape}, status approved, applied true` },
      403: { description: 'forbidden/inventory-handler' },
      404: { description: 'not-found, not-found/location' },
      409: { description: 'conflict/adjustment-approved, conflict/adjustment-rejected' },
    },
    handler: async (ctx) => {
      ctx.body = presentAdjustment(await service(ctx).approve(ctx.params.id));
    },
  },
  {
    method: 'post',
    path: '/inventory/adjustments/:id/reject',
    summary: 'Reject a pending adjustment (reason required); no stock moves',
    tags: ['inventory'],
    auth: adjust,
    body: rejectAdjustmentBody,
    bodyRequired: false,
    invalid: {
      rules: [
        {
          field: 'reason',
          keyword: ABSENT,
          code: 'bad-request/missing-reason',
          message: 'reason is required to reject an adjustment',
        },
      ],
    },
    responses: {
      200: { description: `${adjustmentShape}, status rejected` },
      400: {
        description: 'bad-request/missing-reason; bad-request (an unknown field, a reason over 1,000 characters)',
      },
      404: { description: 'not-found' },
      409: { description: 'conflict/adjustment-approved, conflict/adjustment-rejected' },
    },
    handler: async (ctx) => {
      const { reason } = ctx.request.body as unknown as { reason: string };
      ctx.body = presentAdjustment(await service(ctx).reject(ctx.params.id, reason));
    },
  },
]);

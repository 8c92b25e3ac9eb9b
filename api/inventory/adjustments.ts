import { defineRoutes } from '../route';
import { tenantOf, type AppContext } from '../context';
import {
  ADJUSTMENT_REASONS,
  ADJUSTMENT_STATUSES,
  Adjustments,
  parseCreateAdjustment,
  parseRejection,
  presentAdjustment,
  type AdjustmentQuery,
} from '../../shared/inventory/adjustments';
import { PAGE_PARAM, type JsonSchema } from '../../shared/validation';

const read = { scopes: ['inventory:read' as const] };
const adjust = { scopes: ['inventory:adjust' as const] };

function service(ctx: AppContext): Adjustments {
  const { tenantDb, principal } = tenantOf(ctx);
  return new Adjustments(tenantDb, principal.keyId);
}

const adjustmentShape =
  '`{id, locationId, sku, currentQuantity, newQuantity, difference, reason, notes, reference, status, createdBy, createdAt, updatedAt, approvedBy, approvedAt, rejectedBy, rejectedAt, rejectionReason, applied, movementId, appliedDelta, quantityAfter}`';

const createBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['locationId', 'sku', 'newQuantity', 'reason'],
  properties: {
    locationId: { type: 'string', maxLength: 100 },
    sku: { type: 'string', maxLength: 100, description: 'a product or variant SKU of the tenant (case-insensitive)' },
    newQuantity: {
      type: 'integer',
      minimum: 0,
      maximum: 1_000_000_000,
      description: 'the balance the adjustment sets when approved',
    },
    reason: {
      type: 'string',
      enum: [...ADJUSTMENT_REASONS],
      description: "'sale' is reserved for automatic decrements and refused",
    },
    notes: { type: 'string', maxLength: 5000 },
  },
};

export const adjustmentRoutes = defineRoutes([
  {
    method: 'post',
    path: '/inventory/adjustments',
    summary:
      'Request a stock adjustment (pending until approved); an Idempotency-Key makes a retry answer the first one',
    description:
      'Checked in this order: body (bad-request/missing-body), locationId, sku, newQuantity, reason present (bad-request/missing-location | missing-sku | missing-quantity | missing-reason), newQuantity a whole number ≥ 0 (bad-request/invalid-stock), reason one of the 11 (bad-request/invalid-reason), the SKU (404 not-found), the location (404 not-found/location), no integration managing them (403 forbidden/inventory-handler).',
    tags: ['inventory'],
    auth: adjust,
    body: createBody,
    bodyRequired: false,
    bodyValidation: 'handler',
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
      const input = parseCreateAdjustment(ctx.request.body);
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
        limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
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
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['reason'],
      properties: { reason: { type: 'string', minLength: 1, maxLength: 1000 } },
    },
    bodyRequired: false,
    bodyValidation: 'handler',
    responses: {
      200: { description: `${adjustmentShape}, status rejected` },
      400: { description: 'bad-request/missing-reason' },
      404: { description: 'not-found' },
      409: { description: 'conflict/adjustment-approved, conflict/adjustment-rejected' },
    },
    handler: async (ctx) => {
      const reason = parseRejection(ctx.request.body);
      ctx.body = presentAdjustment(await service(ctx).reject(ctx.params.id, reason));
    },
  },
]);

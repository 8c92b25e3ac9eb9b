import { defineRoutes } from '../route';
import { tenantOf, type AppContext } from '../context';
import {
  COUNT_STATUSES,
  COUNT_TYPES,
  Counts,
  MAX_COUNT_ITEMS,
  parseCountItems,
  parseCreateCount,
  presentCount,
  type CountStatus,
} from '../../shared/inventory/counts';
import { PAGE_PARAM } from '../../shared/validation';

const read = { scopes: ['inventory:read' as const] };
const count = { scopes: ['inventory:count' as const] };

function service(ctx: AppContext): Counts {
  const { tenantDb, principal } = tenantOf(ctx);
  return new Counts(tenantDb, principal.keyId);
}

const countShape =
  '`{id, name, locationId, countType, notes, status (open | completing | completed), items[{sku, expectedQuantity, countedQuantity, difference, countedBy, countedAt}], summary ({itemsCounted, discrepancies, adjustments[ids]} once completed), createdBy, createdAt, updatedAt, completedBy, completedAt}`';

export const countRoutes = defineRoutes([
  {
    method: 'post',
    path: '/inventory/counts',
    summary: 'Open a stock count at a location',
    tags: ['inventory'],
    auth: count,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'locationId', 'countType'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 200 },
        locationId: { type: 'string', maxLength: 100 },
        countType: { type: 'string', enum: [...COUNT_TYPES] },
        notes: { type: 'string', maxLength: 5000 },
      },
    },
    bodyRequired: false,
    bodyValidation: 'handler',
    responses: {
      201: { description: countShape },
      400: { description: 'bad-request/missing-body, missing-name, missing-location, missing-type, invalid-type' },
      404: { description: 'not-found/location' },
    },
    handler: async (ctx) => {
      const doc = await service(ctx).create(parseCreateCount(ctx.request.body));
      ctx.status = 201;
      ctx.set('Location', `/inventory/counts/${doc._id}`);
      ctx.body = presentCount(doc);
    },
  },
  {
    method: 'get',
    path: '/inventory/counts',
    summary: 'List counts, newest first',
    tags: ['inventory'],
    auth: read,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        status: { type: 'string', enum: COUNT_STATUSES },
        locationId: { type: 'string', maxLength: 100 },
        page: PAGE_PARAM,
        limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
      },
    },
    responses: { 200: { description: `\`{counts[${countShape}], totalCount, page, limit}\`` } },
    handler: async (ctx) => {
      const q = ctx.state.query as { page: number; limit: number; status?: CountStatus; locationId?: string };
      const { counts, totalCount } = await service(ctx).list(q);
      ctx.body = { counts: counts.map(presentCount), totalCount, page: q.page, limit: q.limit };
    },
  },
  {
    method: 'get',
    path: '/inventory/counts/:id',
    summary: 'Read a count with its items',
    tags: ['inventory'],
    auth: read,
    responses: { 200: { description: countShape }, 404: { description: 'not-found' } },
    handler: async (ctx) => {
      ctx.body = presentCount(await service(ctx).get(ctx.params.id));
    },
  },
  {
    method: 'put',
    path: '/inventory/counts/:id/items',
    summary:
      "Record counted quantities; each SKU's expected quantity is its balance now, and a SKU counted before is replaced",
    tags: ['inventory'],
    auth: count,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['countItems'],
      properties: {
        countItems: {
          type: 'array',
          minItems: 1,
          maxItems: MAX_COUNT_ITEMS,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['sku', 'countedQuantity'],
            properties: {
              sku: { type: 'string', minLength: 1, maxLength: 100 },
              countedQuantity: { type: 'integer', minimum: 0 },
            },
          },
        },
      },
    },
    bodyRequired: false,
    bodyValidation: 'handler',
    responses: {
      200: { description: countShape },
      400: { description: 'bad-request/invalid-items' },
      403: { description: 'forbidden/inventory-handler' },
      404: { description: 'not-found (count or SKU)' },
      409: { description: 'conflict/count-completed, conflict/count-completing' },
    },
    handler: async (ctx) => {
      const entries = parseCountItems(ctx.request.body);
      ctx.body = presentCount(await service(ctx).recordItems(ctx.params.id, entries));
    },
  },
  {
    method: 'post',
    path: '/inventory/counts/:id/complete',
    summary:
      'Complete the count: every difference becomes an approved count_correction adjustment applied through the ledger, exactly once',
    description:
      'A completed count is 409 conflict/count-completed; of concurrent completes one does the work and the others answer 409 once it is done.',
    tags: ['inventory'],
    auth: count,
    body: { type: 'object', additionalProperties: false, properties: {} },
    bodyRequired: false,
    responses: {
      200: { description: `${countShape}, status completed` },
      403: { description: 'forbidden/inventory-handler' },
      404: { description: 'not-found, not-found/location' },
      409: { description: 'conflict/count-completed, conflict/count-completing' },
    },
    handler: async (ctx) => {
      ctx.body = presentCount(await service(ctx).complete(ctx.params.id));
    },
  },
]);

import { defineRoutes } from '../route';
import { createdId, tenantOf, type AppContext } from '../context';
import {
  COUNT_STATUSES,
  COUNT_TYPES,
  Counts,
  presentCount,
  type CountEntry,
  type CountStatus,
  type CreateCountInput,
} from '../../shared/inventory/counts';
import { ABSENT, countItemsBody, createCountBody, quantityMessage } from '../../shared/inventory/input-schemas';
import { limitParam, PAGE_PARAM, type PageRequest } from '../../shared/paging';

const read = { scopes: ['inventory:read' as const] };
const count = { scopes: ['inventory:count' as const] };

function service(ctx: AppContext): Counts {
  const { tenantDb, principal } = tenantOf(ctx);
  return new Counts(tenantDb, principal.keyId);
}

const countShape =
  '`{id, name, locationId, countType, notes, status (open | completing | completed), items[{sku, expectedQuantity, countedQuantity, difference, countedBy, countedAt}], summary ({itemsCounted, discrepancies, adjustments[ids], superseded[SKUs whose balance was corrected after they were counted, left as that correction made them], deleted[SKUs whose product or variant was deleted after they were counted, left uncorrected]} once completed), createdBy, createdAt, updatedAt, completedBy, completedAt}`';

export const countRoutes = defineRoutes([
  {
    method: 'post',
    path: '/inventory/counts',
    idempotency: 'stored',
    summary: 'Open a stock count at a location',
    tags: ['inventory'],
    auth: count,
    body: createCountBody,
    invalid: {
      missingBody: {
        code: 'bad-request/missing-body',
        message: 'A JSON body {name, locationId, countType} is required',
      },
      // in the spec's order: the missing fields first, then an unknown one, then each value
      rules: [
        { field: 'name', keyword: ABSENT, code: 'bad-request/missing-name', message: 'name is required' },
        {
          field: 'locationId',
          keyword: ABSENT,
          code: 'bad-request/missing-location',
          message: 'locationId is required',
        },
        { field: 'countType', keyword: ABSENT, code: 'bad-request/missing-type', message: 'countType is required' },
        {
          keyword: 'additionalProperties',
          code: 'bad-request',
          message: (f) => `Unknown field ${f.field}; accepted: name, locationId, countType, notes`,
        },
        {
          field: 'countType',
          code: 'bad-request/invalid-type',
          message: `countType must be one of ${COUNT_TYPES.join(', ')}`,
        },
      ],
    },
    responses: {
      201: { description: countShape },
      400: {
        description:
          'bad-request/missing-body, missing-name, missing-location, missing-type, invalid-type; bad-request (an unknown field, a text too long)',
      },
      404: { description: 'not-found/location' },
      409: { description: 'conflict: the location is being deleted; retry' },
    },
    handler: async (ctx) => {
      const doc = await service(ctx).create(ctx.request.body as unknown as CreateCountInput, createdId(ctx, 'cnt'));
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
        limit: limitParam(200, 50),
      },
    },
    responses: { 200: { description: `\`{counts[${countShape}], totalCount, page, limit}\`` } },
    handler: async (ctx) => {
      const q = ctx.state.query as unknown as PageRequest & { status?: CountStatus; locationId?: string };
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
    body: countItemsBody,
    bodyRequired: false,
    invalid: {
      rules: [
        {
          field: '(body)',
          code: 'bad-request/invalid-items',
          message: 'The body must be a JSON object {countItems: [{sku, countedQuantity}]}',
        },
        {
          field: 'countItems',
          keyword: ['required', 'type', 'minItems'],
          code: 'bad-request/invalid-items',
          message: 'countItems must be a non-empty array of {sku, countedQuantity}',
        },
        {
          field: '*',
          keyword: 'additionalProperties',
          code: 'bad-request',
          message: (f) => `Unknown field ${f.field}; send {countItems}`,
        },
        {
          field: 'countItems.*.countedQuantity',
          code: 'bad-request/invalid-items',
          message: quantityMessage,
        },
        {
          field: 'countItems.**',
          code: 'bad-request/invalid-items',
          message: (f) =>
            f.keyword === 'maxItems'
              ? `countItems may hold at most ${String(f.params.limit)} items per request`
              : `${f.field} ${f.message}; an item is {sku, countedQuantity}`,
        },
      ],
    },
    responses: {
      200: { description: countShape },
      400: {
        description:
          'bad-request/invalid-items (no items, an item that is not {sku, countedQuantity} with a whole quantity ≥ 0, a SKU twice); bad-request (an unknown field)',
      },
      403: { description: 'forbidden/inventory-handler' },
      404: { description: 'not-found (count or SKU)' },
      409: { description: 'conflict/count-completed, conflict/count-completing' },
    },
    handler: async (ctx) => {
      const { countItems } = ctx.request.body as unknown as { countItems: CountEntry[] };
      ctx.body = presentCount(await service(ctx).recordItems(ctx.params.id, countItems));
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

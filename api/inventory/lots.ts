import { defineRoutes } from '../route';
import { tenantOf } from '../context';
import { Lots, VALUATION_METHODS, type ValuationMethod } from '../../shared/inventory/lots';
import { limitParam, PAGE_PARAM, type PageRequest } from '../../shared/paging';

const read = { scopes: ['inventory:read' as const] };

const lotShape =
  '`{lotNumber, sku, locationId, quantity, costPerUnit, costSource (recorded | catalog), receivedAt, reason, reference}`';

export const lotRoutes = defineRoutes([
  {
    method: 'get',
    path: '/inventory/lots',
    summary: 'Lots (receipts of stock: every applied ledger movement that added stock), newest first',
    tags: ['inventory'],
    auth: read,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        sku: { type: 'string', maxLength: 100 },
        locationId: { type: 'string', maxLength: 100 },
        page: PAGE_PARAM,
        limit: limitParam(200, 50),
      },
    },
    responses: { 200: { description: `\`{lots[${lotShape}], totalCount, page, limit}\`` } },
    handler: async (ctx) => {
      const q = ctx.state.query as unknown as PageRequest & { sku?: string; locationId?: string };
      const { lots, totalCount } = await new Lots(tenantOf(ctx).tenantDb).list(q);
      ctx.body = { lots, totalCount, page: q.page, limit: q.limit };
    },
  },
  {
    method: 'get',
    path: '/inventory/lots/sku/:sku/valuation',
    summary:
      'Value the stock of a SKU at a location (locationId required) by FIFO, LIFO or weighted average receipt cost',
    description:
      'fifo: the oldest receipts were consumed first, so the newest remain; lifo: the oldest remain; average: on hand × (Σ received·cost ÷ Σ received). `lots` lists the receipts that remain (oldest first) with the units left of each; under average each is valued at the average cost.',
    tags: ['inventory'],
    auth: read,
    query: {
      type: 'object',
      additionalProperties: false,
      required: ['locationId'],
      properties: {
        locationId: { type: 'string', maxLength: 100, pattern: '\\S' },
        method: { type: 'string', enum: VALUATION_METHODS, default: 'fifo' },
      },
    },
    invalid: {
      rules: [
        {
          field: 'locationId',
          keyword: ['required', 'pattern'],
          code: 'bad-request/missing-location',
          message: 'locationId is required (query parameter) to value stock',
        },
      ],
    },
    responses: {
      200: {
        description:
          '`{sku, locationId, method, quantity, totalValue, unitCost, lots[{lotNumber, receivedAt, remaining, costPerUnit, value}]}`',
      },
      400: { description: 'bad-request/missing-location' },
      404: { description: 'not-found (SKU), not-found/location' },
    },
    handler: async (ctx) => {
      const q = ctx.state.query as unknown as { locationId: string; method: ValuationMethod };
      ctx.body = await new Lots(tenantOf(ctx).tenantDb).valueSku(ctx.params.sku, q.locationId, q.method);
    },
  },
  {
    method: 'get',
    path: '/inventory/lots/:lotNumber',
    summary: 'Read a lot by its number (URL-encode it: it is the ledger key of the receipt)',
    tags: ['inventory'],
    auth: read,
    responses: { 200: { description: lotShape }, 404: { description: 'not-found' } },
    handler: async (ctx) => {
      ctx.body = await new Lots(tenantOf(ctx).tenantDb).get(ctx.params.lotNumber);
    },
  },
]);

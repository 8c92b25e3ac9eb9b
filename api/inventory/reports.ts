import { defineRoutes } from '../route';
import { tenantOf } from '../context';
import { parseReportRequest, REPORT_TYPES, Reports } from '../../shared/inventory/reports';

const read = { scopes: ['inventory:read' as const] };

export const reportRoutes = defineRoutes([
  {
    method: 'get',
    path: '/inventory/stats',
    summary: 'Inventory at a glance: SKUs with a balance, units on hand, locations, SKUs low on stock and out of stock',
    description:
      "Per SKU over all locations: out of stock when the total is 0, low stock when above 0 and at most minAlertStock (the variant's, else the product's, else 5).",
    tags: ['inventory'],
    auth: read,
    responses: { 200: { description: '`{totalSkus, totalUnits, locations, lowStock, outOfStock}`' } },
    handler: async (ctx) => {
      ctx.body = await new Reports(tenantOf(ctx).tenantDb).stats();
    },
  },
  {
    method: 'post',
    path: '/inventory/reports',
    summary: `Run a report now: ${REPORT_TYPES.join(', ')}`,
    description:
      'stock-levels: one row per balance; low-stock and out-of-stock: one row per SKU over the scope; valuation: average receipt cost × on hand per balance; movements: applied ledger entries with createdAt in [from, to] (at most 5000, `truncated` says when more). locationId narrows any report to one location.',
    tags: ['inventory'],
    auth: read,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['reportType'],
      properties: {
        reportType: { type: 'string', enum: [...REPORT_TYPES] },
        locationId: { type: 'string', maxLength: 100 },
        from: { type: 'string', format: 'date-time' },
        to: { type: 'string', format: 'date-time' },
      },
    },
    bodyRequired: false,
    bodyValidation: 'handler',
    responses: {
      200: {
        description:
          '`{reportType, generatedAt, locationId, from, to, rows[...], totals}` (plus `method` for valuation, `truncated` for movements)',
      },
      400: { description: 'bad-request/missing-body, missing-type, invalid-report' },
      404: { description: 'not-found/location' },
    },
    handler: async (ctx) => {
      ctx.body = await new Reports(tenantOf(ctx).tenantDb).run(parseReportRequest(ctx.request.body));
    },
  },
]);

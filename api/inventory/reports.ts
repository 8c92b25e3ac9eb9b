import { defineRoutes } from '../route';
import { tenantOf } from '../context';
import { ABSENT, reportBody } from '../../shared/inventory/input-schemas';
import { REPORT_TYPES, Reports, type ReportInput } from '../../shared/inventory/reports';

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
    body: reportBody,
    invalid: {
      missingBody: {
        code: 'bad-request/missing-body',
        message: 'A JSON body {reportType, locationId?, from?, to?} is required',
      },
      // in the spec's order: a missing type, an unknown field, then the type's value
      rules: [
        {
          field: 'reportType',
          keyword: ABSENT,
          code: 'bad-request/missing-type',
          message: `reportType is required: one of ${REPORT_TYPES.join(', ')}`,
        },
        {
          keyword: 'additionalProperties',
          code: 'bad-request',
          message: (f) => `Unknown field ${f.field}; accepted: reportType, locationId, from, to`,
        },
        {
          field: 'reportType',
          code: 'bad-request/invalid-report',
          message: `reportType must be one of ${REPORT_TYPES.join(', ')}`,
        },
        { field: 'from', code: 'bad-request', message: 'from must be an ISO 8601 date or date-time' },
        { field: 'to', code: 'bad-request', message: 'to must be an ISO 8601 date or date-time' },
      ],
    },
    responses: {
      200: {
        description:
          '`{reportType, generatedAt, locationId, from, to, rows[...], totals}` (plus `method` for valuation, `truncated` for movements)',
      },
      400: {
        description:
          'bad-request/missing-body, missing-type, invalid-report; bad-request (an unknown field, a bad date, from after to)',
      },
      404: { description: 'not-found/location' },
    },
    handler: async (ctx) => {
      ctx.body = await new Reports(tenantOf(ctx).tenantDb).run(ctx.request.body as unknown as ReportInput);
    },
  },
]);

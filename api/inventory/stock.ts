import { defineRoutes, type InputRule } from '../route';
import { createdId, idempotencyKeyOf, tenantOf, type AppContext } from '../context';
import { InventoryHandlers, presentHandler, type NewInventoryHandler } from '../../shared/inventory/handlers';
import {
  bulkSetBody,
  handlerBody,
  MAX_BULK_ITEMS,
  quantityMessage,
  setStockBody,
} from '../../shared/inventory/input-schemas';
import { Stock, type BulkSetItem } from '../../shared/inventory/stock';
import { limitParam, PAGE_PARAM, type PageRequest } from '../../shared/paging';
import type { JsonSchema } from '../../shared/validation';

const read = { scopes: ['inventory:read' as const] };
const update = { scopes: ['inventory:update' as const] };
const manage = { scopes: ['inventory:manage' as const] };

const paging = { page: PAGE_PARAM, limit: limitParam(200, 50) };

function stock(ctx: AppContext): Stock {
  const { tenantDb, principal } = tenantOf(ctx);
  return new Stock(tenantDb, principal.keyId);
}

/** A SKU in the path: blank is 400 bad-request/missing-sku (a SKU the tenant does not have is 404 later). */
const skuParam: JsonSchema = {
  type: 'string',
  pattern: '\\S',
  description: 'a product or variant SKU (case-insensitive)',
};
const skuParamRules: InputRule[] = [
  { field: 'sku', keyword: 'pattern', code: 'bad-request/missing-sku', message: 'sku is required' },
];

const bulkItemsMessage = `items must be a list of 1 to ${MAX_BULK_ITEMS.toLocaleString('en-US')} objects {sku, stock, locationId?}`;

export const stockRoutes = defineRoutes([
  {
    method: 'get',
    path: '/inventory',
    summary: 'Stock balances (one per SKU and location), optionally of one SKU or location',
    tags: ['inventory'],
    auth: read,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: { sku: { type: 'string' }, locationId: { type: 'string' }, ...paging },
    },
    responses: { 200: { description: '`{items[{sku, locationId, onHand, updatedAt}], totalCount, page, limit}`' } },
    handler: async (ctx) => {
      const q = ctx.state.query as unknown as PageRequest & { sku?: string; locationId?: string };
      ctx.body = { ...(await stock(ctx).balances(q)), page: q.page, limit: q.limit };
    },
  },
  {
    method: 'get',
    path: '/inventory/items',
    summary: 'Stock per SKU: the total and the balance at each location',
    tags: ['inventory'],
    auth: read,
    query: { type: 'object', additionalProperties: false, properties: { ...paging } },
    responses: {
      200: { description: '`{items[{sku, total, byLocation[{locationId, onHand}]}], totalCount, page, limit}`' },
    },
    handler: async (ctx) => {
      const q = ctx.state.query as unknown as PageRequest;
      ctx.body = { ...(await stock(ctx).totals(q)), page: q.page, limit: q.limit };
    },
  },
  {
    method: 'get',
    path: '/inventory/items/:sku',
    summary:
      'Stock of one SKU (product or variant) at every location; 404 not-found for a SKU the tenant does not have',
    tags: ['inventory'],
    auth: read,
    params: { sku: skuParam },
    invalid: { rules: skuParamRules },
    responses: {
      200: { description: '`{sku, productId, kind, total, byLocation[{locationId, onHand}]}`' },
      400: { description: 'bad-request/missing-sku' },
      404: { description: 'not-found' },
    },
    handler: async (ctx) => {
      ctx.body = await stock(ctx).ofSku(ctx.params.sku);
    },
  },
  {
    method: 'get',
    path: '/inventory/location',
    summary: 'Stock held at one location (`locationId` required)',
    tags: ['inventory'],
    auth: read,
    query: {
      type: 'object',
      additionalProperties: false,
      required: ['locationId'],
      properties: { locationId: { type: 'string', minLength: 1 }, ...paging },
    },
    invalid: {
      rules: [{ field: 'locationId', code: 'bad-request/missing-location', message: 'locationId is required' }],
    },
    responses: {
      200: { description: '`{locationId, items[{sku, onHand, updatedAt}], totalCount, page, limit}`' },
      400: { description: 'bad-request/missing-location' },
      404: { description: 'not-found/location' },
    },
    handler: async (ctx) => {
      const q = ctx.state.query as unknown as PageRequest & { locationId: string };
      const { items, totalCount } = await stock(ctx).atLocation(q.locationId, q);
      ctx.body = { locationId: q.locationId, items, totalCount, page: q.page, limit: q.limit };
    },
  },
  {
    method: 'get',
    path: '/inventory/location/:locationId/product/:sku',
    summary: 'Stock of one SKU at one location (0 when it never had any)',
    tags: ['inventory'],
    auth: read,
    params: { sku: skuParam },
    invalid: { rules: skuParamRules },
    responses: {
      200: { description: '`{sku, locationId, onHand, updatedAt}`' },
      400: { description: 'bad-request/missing-sku' },
      404: { description: 'not-found/location, not-found' },
    },
    handler: async (ctx) => {
      ctx.body = await stock(ctx).level(ctx.params.locationId, ctx.params.sku);
    },
  },
  {
    method: 'put',
    path: '/inventory/location/:locationId/product/:sku',
    // the ledger keeps the key (the movement's); the route checks its form
    idempotency: 'native',
    summary:
      'Set the stock of one SKU at one location; recorded as a ledger movement. An Idempotency-Key makes a retry answer the first result',
    tags: ['inventory'],
    auth: update,
    params: { sku: skuParam },
    body: setStockBody,
    invalid: {
      missingBody: { code: 'bad-request/missing-body', message: 'A body {stock} is required' },
      rules: [
        ...skuParamRules,
        { field: '(body)', code: 'bad-request/missing-body', message: 'A body {stock} is required' },
        {
          keyword: 'additionalProperties',
          code: 'bad-request',
          message: (f) => `Unknown field(s): ${f.field}; send {stock}`,
        },
        { field: 'stock', code: 'bad-request/invalid-stock', message: quantityMessage },
      ],
    },
    responses: {
      200: { description: '`{sku, locationId, onHand, movementId}`' },
      400: {
        description:
          'bad-request/missing-body, bad-request/invalid-stock (not a whole number ≥ 0), bad-request (an unknown field), bad-request/missing-sku',
      },
      403: { description: 'forbidden/inventory-handler' },
      404: { description: 'not-found/location, not-found' },
    },
    handler: async (ctx) => {
      const { stock: target } = ctx.request.body as unknown as { stock: number };
      const key = ctx.get('idempotency-key') || undefined;
      ctx.body = await stock(ctx).set(ctx.params.locationId, ctx.params.sku, target, key);
    },
  },
  {
    method: 'post',
    path: '/inventory/bulk-update',
    // each item's set is keyed by the key's binding (key and the time it was bound) and its index,
    // which replays it; the binding refuses another body under the key before any of it is applied
    idempotency: 'bound',
    summary:
      'Set many balances: `items[{sku, stock, locationId?}]` (the default location when absent); a result per item, 207 when any failed',
    tags: ['inventory'],
    auth: update,
    body: bulkSetBody,
    invalid: {
      missingBody: { code: 'bad-request/missing-body', message: 'A body {items} is required' },
      // bad input is refused whole, before anything is written; a 207 is only for items that were
      // well formed but could not be applied (an unknown SKU or location, an integration's SKU)
      rules: [
        { field: '(body)', code: 'bad-request/invalid-items', message: bulkItemsMessage },
        { field: 'items', code: 'bad-request/invalid-items', message: bulkItemsMessage },
        { field: 'items.*', keyword: 'type', code: 'bad-request/invalid-items', message: bulkItemsMessage },
        { field: 'items.*.sku', code: 'bad-request/invalid-items', message: (f) => `${f.field} is required` },
        {
          field: 'items.*.locationId',
          code: 'bad-request/invalid-items',
          message: (f) => `${f.field} must be a location id`,
        },
        { field: 'items.*.stock', code: 'bad-request/invalid-stock', message: quantityMessage },
      ],
    },
    responses: {
      200: {
        description: '`{results[{sku, locationId, success, onHand?, error?{code, message}}], succeeded, failed}`',
      },
      207: {
        description:
          'some well-formed items could not be applied (unknown SKU or location, a SKU an integration manages)',
      },
      400: {
        description:
          'bad-request/missing-body, bad-request/invalid-items (no items, an item without sku), bad-request/invalid-stock; nothing is written',
      },
    },
    handler: async (ctx) => {
      const { items } = ctx.request.body as unknown as { items: BulkSetItem[] };
      // the binding, not the raw key: the binding expires after 24 hours, the ledger's movements
      // never do, so a key reused after its 24 hours must name new movements (a new request)
      const result = await stock(ctx).bulkSet(items, idempotencyKeyOf(ctx));
      ctx.status = result.failed ? 207 : 200;
      ctx.body = result;
    },
  },
  {
    method: 'post',
    path: '/inventory/handlers',
    idempotency: 'stored',
    summary:
      'Register an integration that manages stock of some SKUs or locations (manual edits of those are then refused)',
    tags: ['inventory'],
    auth: manage,
    body: handlerBody,
    responses: { 201: { description: 'the handler' } },
    handler: async (ctx) => {
      const h = await new InventoryHandlers(tenantOf(ctx).tenantDb).create(
        ctx.request.body as unknown as NewInventoryHandler,
        createdId(ctx, 'ih'),
      );
      ctx.status = 201;
      ctx.body = presentHandler(h);
    },
  },
  {
    method: 'get',
    path: '/inventory/handlers/:id',
    summary: "One of the tenant's inventory handlers (another tenant's is 404: handler ids are not a secret here)",
    tags: ['inventory'],
    auth: read,
    responses: { 200: { description: 'the handler' }, 404: { description: 'not-found' } },
    handler: async (ctx) => {
      ctx.body = presentHandler(await new InventoryHandlers(tenantOf(ctx).tenantDb).get(ctx.params.id));
    },
  },
  {
    method: 'post',
    path: '/inventory/handlers/:id/sync',
    summary: 'Ask a handler to sync now; records the request',
    tags: ['inventory'],
    auth: manage,
    responses: {
      200: { description: '`{success, handlerId, lastSyncAt, syncCount}`' },
      404: { description: 'not-found' },
    },
    handler: async (ctx) => {
      const h = await new InventoryHandlers(tenantOf(ctx).tenantDb).sync(ctx.params.id);
      ctx.body = { success: true, handlerId: h._id, lastSyncAt: h.lastSyncAt, syncCount: h.syncCount };
    },
  },
]);

import { defineRoutes } from '../route';
import { tenantOf, type AppContext } from '../context';
import { AppError } from '../../shared/errors/catalog';
import { newId } from '../../shared/ids';
import { stockLevels, type StockLevel } from '../../shared/inventory/collections';
import { assertManualEdit, inventoryHandlers, type InventoryHandler } from '../../shared/inventory/handlers';
import { Ledger } from '../../shared/inventory/ledger';
import { knownSku } from '../../shared/inventory/skus';
import { Locations } from '../../shared/locations/locations';
import { Catalog } from '../../shared/products/catalog';
import type { TenantDb } from '../../shared/db/tenant-db';
import { PAGE_PARAM } from '../../shared/validation';

const read = { scopes: ['inventory:read' as const] };
const update = { scopes: ['inventory:update' as const] };
const manage = { scopes: ['inventory:manage' as const] };

const paging = {
  page: PAGE_PARAM,
  limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
} as const;

/** sku present (400 bad-request/missing-sku), then a SKU of the tenant (404 not-found). */
async function requiredSku(tenantDb: TenantDb, raw: string | undefined): Promise<string> {
  if (!raw || !raw.trim()) throw new AppError(400, 'bad-request/missing-sku', 'sku is required', { field: 'sku' });
  return knownSku(tenantDb, raw);
}

function presentLevel(l: StockLevel) {
  return { sku: l.sku, locationId: l.locationId, onHand: l.onHand, updatedAt: l.updatedAt };
}

function presentHandler(h: InventoryHandler) {
  return {
    id: h._id,
    name: h.name,
    type: h.type,
    skus: h.skus,
    locationIds: h.locationIds,
    status: h.status,
    lastSyncAt: h.lastSyncAt,
    syncCount: h.syncCount,
    createdAt: h.createdAt,
  };
}

/** `stock`: a number ≥ 0 (400 bad-request/invalid-stock otherwise, with a message saying which). */
function stockOf(value: unknown, field = 'stock'): number {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new AppError(400, 'bad-request/invalid-stock', `${field} must be a number`, { field });
  if (value < 0) throw new AppError(400, 'bad-request/invalid-stock', 'Stock cannot be negative', { field });
  if (!Number.isInteger(value))
    throw new AppError(400, 'bad-request/invalid-stock', `${field} must be a whole number of units`, { field });
  return value;
}

/** Sets one balance by hand: the location must exist, no integration may manage it, the SKU must be the tenant's. */
async function setStock(ctx: AppContext, locationId: string, rawSku: string, stock: number, idempotencyKey?: string) {
  const { tenantDb, principal } = tenantOf(ctx);
  await new Locations(tenantDb).require(locationId);
  const sku = await requiredSku(tenantDb, rawSku);
  await assertManualEdit(tenantDb, sku, locationId);
  // a client's key names a movement of this balance only: the same key for another SKU or location
  // is another movement, and it cannot collide with the keys the service makes (adj:…, trf:…)
  const key = idempotencyKey && `put:${locationId}:${sku}:${idempotencyKey}`;
  const { onHand, movement } = await new Ledger(tenantDb).set({
    sku,
    locationId,
    target: stock,
    reason: 'manual',
    actor: principal.keyId,
    idempotencyKey: key,
  });
  return { sku, locationId, onHand, movementId: movement?.idempotencyKey ?? null };
}

/** Per SKU: total and the balance at each location. */
function aggregate(levels: StockLevel[]) {
  const bySku = new Map<string, { sku: string; total: number; byLocation: { locationId: string; onHand: number }[] }>();
  for (const l of levels) {
    const entry = bySku.get(l.sku) ?? { sku: l.sku, total: 0, byLocation: [] };
    entry.total += l.onHand;
    entry.byLocation.push({ locationId: l.locationId, onHand: l.onHand });
    bySku.set(l.sku, entry);
  }
  return [...bySku.values()].sort((a, b) => a.sku.localeCompare(b.sku));
}

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
      const { tenantDb } = tenantOf(ctx);
      const q = ctx.state.query as { sku?: string; locationId?: string; page: number; limit: number };
      const filter = {
        ...(q.sku ? { sku: q.sku.toUpperCase() } : {}),
        ...(q.locationId ? { locationId: q.locationId } : {}),
      };
      const col = tenantDb.collection(stockLevels);
      const [rows, totalCount] = await Promise.all([
        col
          .find(filter, {
            sort: { sku: 1, locationId: 1 },
            skip: (q.page - 1) * q.limit,
            limit: q.limit,
            projection: { recent: 0 },
          })
          .toArray(),
        col.countDocuments(filter),
      ]);
      ctx.body = { items: rows.map((r) => presentLevel(r as StockLevel)), totalCount, page: q.page, limit: q.limit };
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
      const { tenantDb } = tenantOf(ctx);
      const q = ctx.state.query as { page: number; limit: number };
      const all = aggregate(
        (await tenantDb
          .collection(stockLevels)
          .find({}, { projection: { recent: 0 } })
          .toArray()) as StockLevel[],
      );
      ctx.body = {
        items: all.slice((q.page - 1) * q.limit, q.page * q.limit),
        totalCount: all.length,
        page: q.page,
        limit: q.limit,
      };
    },
  },
  {
    method: 'get',
    path: '/inventory/items/:sku',
    summary:
      'Stock of one SKU (product or variant) at every location; 404 not-found for a SKU the tenant does not have',
    tags: ['inventory'],
    auth: read,
    responses: {
      200: { description: '`{sku, productId, kind, total, byLocation[{locationId, onHand}]}`' },
      404: { description: 'not-found' },
    },
    handler: async (ctx) => {
      const { tenantDb } = tenantOf(ctx);
      const sku = await requiredSku(tenantDb, ctx.params.sku);
      const owner = (await new Catalog(tenantDb).skuOwner(sku))!;
      const [entry] = aggregate(await new Ledger(tenantDb).balancesOf(sku));
      ctx.body = {
        sku,
        productId: owner.productId,
        kind: owner.kind,
        total: entry?.total ?? 0,
        byLocation: entry?.byLocation ?? [],
      };
    },
  },
  {
    method: 'get',
    path: '/inventory/location',
    summary: 'Stock held at one location (`locationId` required)',
    tags: ['inventory'],
    auth: read,
    query: { type: 'object', additionalProperties: false, properties: { locationId: { type: 'string' }, ...paging } },
    responses: {
      200: { description: '`{locationId, items[{sku, onHand, updatedAt}], totalCount, page, limit}`' },
      400: { description: 'bad-request/missing-location' },
      404: { description: 'not-found/location' },
    },
    handler: async (ctx) => {
      const { tenantDb } = tenantOf(ctx);
      const q = ctx.state.query as { locationId?: string; page: number; limit: number };
      if (!q.locationId)
        throw new AppError(400, 'bad-request/missing-location', 'locationId is required', { field: 'locationId' });
      await new Locations(tenantDb).require(q.locationId);
      const col = tenantDb.collection(stockLevels);
      const [rows, totalCount] = await Promise.all([
        col
          .find(
            { locationId: q.locationId },
            { sort: { sku: 1 }, skip: (q.page - 1) * q.limit, limit: q.limit, projection: { recent: 0 } },
          )
          .toArray(),
        col.countDocuments({ locationId: q.locationId }),
      ]);
      ctx.body = {
        locationId: q.locationId,
        items: rows.map((r) => presentLevel(r as StockLevel)),
        totalCount,
        page: q.page,
        limit: q.limit,
      };
    },
  },
  {
    method: 'get',
    path: '/inventory/location/:locationId/product/:sku',
    summary: 'Stock of one SKU at one location (0 when it never had any)',
    tags: ['inventory'],
    auth: read,
    responses: {
      200: { description: '`{sku, locationId, onHand, updatedAt}`' },
      404: { description: 'not-found/location, not-found' },
    },
    handler: async (ctx) => {
      const { tenantDb } = tenantOf(ctx);
      await new Locations(tenantDb).require(ctx.params.locationId);
      const sku = await requiredSku(tenantDb, ctx.params.sku);
      const level = await new Ledger(tenantDb).level(sku, ctx.params.locationId);
      ctx.body = level ? presentLevel(level) : { sku, locationId: ctx.params.locationId, onHand: 0, updatedAt: null };
    },
  },
  {
    method: 'put',
    path: '/inventory/location/:locationId/product/:sku',
    summary:
      'Set the stock of one SKU at one location; recorded as a ledger movement. An Idempotency-Key makes a retry answer the first result',
    tags: ['inventory'],
    auth: update,
    body: { type: 'object', required: ['stock'], properties: { stock: { type: 'integer', minimum: 0 } } },
    bodyValidation: 'handler',
    responses: {
      200: { description: '`{sku, locationId, onHand, movementId}`' },
      400: { description: 'bad-request/missing-body, bad-request/invalid-stock' },
      403: { description: 'forbidden/inventory-handler' },
      404: { description: 'not-found/location, not-found' },
    },
    handler: async (ctx) => {
      const body = ctx.request.body as Record<string, unknown>;
      if (!body || typeof body !== 'object' || Array.isArray(body) || !Object.keys(body).length)
        throw new AppError(400, 'bad-request/missing-body', 'A body {stock} is required');
      const unknown = Object.keys(body).filter((k) => k !== 'stock');
      if (unknown.length)
        throw new AppError(400, 'bad-request', `Unknown field(s): ${unknown.join(', ')}; send {stock}`, {
          field: unknown[0],
        });
      const stock = stockOf(body.stock);
      ctx.body = await setStock(
        ctx,
        ctx.params.locationId,
        ctx.params.sku,
        stock,
        ctx.get('idempotency-key') || undefined,
      );
    },
  },
  {
    method: 'post',
    path: '/inventory/bulk-update',
    summary:
      'Set many balances: `items[{sku, stock, locationId?}]` (the default location when absent); a result per item, 207 when any failed',
    tags: ['inventory'],
    auth: update,
    body: {
      type: 'object',
      required: ['items'],
      properties: { items: { type: 'array', minItems: 1, maxItems: 1000 } },
    },
    bodyValidation: 'handler',
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
      const { tenantDb } = tenantOf(ctx);
      const body = ctx.request.body as { items?: unknown } | undefined;
      if (!body || typeof body !== 'object' || !Object.keys(body).length)
        throw new AppError(400, 'bad-request/missing-body', 'A body {items} is required');
      const items = body.items;
      if (
        !Array.isArray(items) ||
        items.length === 0 ||
        items.length > 1000 ||
        items.some((i) => !i || typeof i !== 'object' || Array.isArray(i))
      ) {
        throw new AppError(
          400,
          'bad-request/invalid-items',
          'items must be a list of 1 to 1,000 objects {sku, stock, locationId?}',
          { field: 'items' },
        );
      }
      // bad input is refused whole, before anything is written; a 207 is only for items that were
      // well formed but could not be applied (an unknown SKU or location, an integration's SKU)
      const checked = (items as Record<string, unknown>[]).map((item, i) => {
        if (typeof item.sku !== 'string' || !item.sku.trim())
          throw new AppError(400, 'bad-request/invalid-items', `items.${i}.sku is required`, {
            field: `items.${i}.sku`,
          });
        if (item.locationId != null && (typeof item.locationId !== 'string' || !item.locationId)) {
          throw new AppError(400, 'bad-request/invalid-items', `items.${i}.locationId must be a location id`, {
            field: `items.${i}.locationId`,
          });
        }
        return {
          sku: item.sku.toUpperCase(),
          locationId: (item.locationId ?? undefined) as string | undefined,
          stock: stockOf(item.stock, `items.${i}.stock`),
        };
      });
      const fallback = (await new Locations(tenantDb).defaultLocation())._id;
      const key = ctx.get('idempotency-key') || newId('bulk');
      const results = [];
      for (const [i, item] of checked.entries()) {
        const locationId = item.locationId ?? fallback;
        try {
          const done = await setStock(ctx, locationId, item.sku, item.stock, `${key}:${i}`);
          results.push({ sku: item.sku, locationId, success: true, onHand: done.onHand });
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          results.push({
            sku: item.sku,
            locationId,
            success: false,
            error: { code: err.codeFor('inventory'), message: err.message },
          });
        }
      }
      const failed = results.filter((r) => !r.success).length;
      ctx.status = failed ? 207 : 200;
      ctx.body = { results, succeeded: results.length - failed, failed };
    },
  },
  {
    method: 'post',
    path: '/inventory/handlers',
    summary:
      'Register an integration that manages stock of some SKUs or locations (manual edits of those are then refused)',
    tags: ['inventory'],
    auth: manage,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'type'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 200 },
        type: { type: 'string', minLength: 1, maxLength: 50 },
        skus: { type: 'array', maxItems: 10000, items: { type: 'string', minLength: 1 } },
        locationIds: { type: 'array', maxItems: 1000, items: { type: 'string', minLength: 1 } },
      },
    },
    responses: { 201: { description: 'the handler' } },
    handler: async (ctx) => {
      const { tenantDb } = tenantOf(ctx);
      const b = ctx.request.body as { name: string; type: string; skus?: string[]; locationIds?: string[] };
      const doc = {
        _id: newId('ih'),
        name: b.name,
        type: b.type,
        skus: (b.skus ?? []).map((s) => s.toUpperCase()),
        locationIds: b.locationIds ?? [],
        status: 'active' as const,
        lastSyncAt: null,
        syncCount: 0,
        createdAt: new Date(),
      };
      await tenantDb.collection(inventoryHandlers).insertOne(doc);
      ctx.status = 201;
      ctx.body = presentHandler({ ...doc, tenantId: tenantDb.tenantId });
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
      const h = await tenantOf(ctx).tenantDb.collection(inventoryHandlers).findOne({ _id: ctx.params.id });
      if (!h) throw new AppError(404, 'not-found', `No inventory handler ${ctx.params.id}`);
      ctx.body = presentHandler(h);
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
      const { tenantDb } = tenantOf(ctx);
      const col = tenantDb.collection(inventoryHandlers);
      const now = new Date();
      if (!(await col.updateById(ctx.params.id, { $set: { lastSyncAt: now }, $inc: { syncCount: 1 } })))
        throw new AppError(404, 'not-found', `No inventory handler ${ctx.params.id}`);
      const h = (await col.findOne({ _id: ctx.params.id }))!;
      ctx.body = { success: true, handlerId: h._id, lastSyncAt: h.lastSyncAt, syncCount: h.syncCount };
    },
  },
]);

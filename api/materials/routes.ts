import { defineRoutes, type InputFailure, type RouteSpec } from '../route';
import { idempotencyKeyOf, tenantOf, validBody, type AppContext } from '../context';
import { AppError } from '../../shared/errors/catalog';
import type { StockKind } from '../../shared/materials/collections';
import {
  alertsQuerySchema,
  listQuerySchema,
  materialCreateSchema,
  materialPatchSchema,
  movementsQuerySchema,
  receiptSchema,
  supplyCreateSchema,
  supplyPatchSchema,
  transferSchema,
} from '../../shared/materials/schemas';
import type { ListQuery } from '../../shared/materials/records';
import { StockService } from '../../shared/materials/service';
import type { ReceiptRequest } from '../../shared/materials/stock';
import { summarize, type JsonSchema } from '../../shared/validation';

const scopes = {
  read: { scopes: ['products:read' as const] },
  create: { scopes: ['products:create' as const] },
  update: { scopes: ['products:update' as const] },
  delete: { scopes: ['products:delete' as const] },
  receive: { scopes: ['inventory:update' as const] },
  transfer: { scopes: ['inventory:transfer' as const] },
};

/** A quantity refused: the spec's 400 bad-request naming the parameter; anything else a validation-error. */
function quantityRefusal(failures: InputFailure[]): AppError {
  const fieldErrors = failures.map(({ field, message }) => ({ field, message }));
  if (failures.some((f) => f.field === 'quantity'))
    return new AppError(400, 'bad-request', 'quantity is required and must be a number greater than 0', {
      parameter: 'quantity',
      field: 'quantity',
      fieldErrors,
    });
  return new AppError(400, 'validation-error', `Invalid body: ${summarize(fieldErrors)}`, {
    field: fieldErrors[0]?.field,
    fieldErrors,
  });
}

const NAMES: Record<StockKind, { one: string; many: string; path: string; skuField: string }> = {
  material: { one: 'material', many: 'materials', path: '/products/materials', skuField: 'materialSku' },
  supply: { one: 'supply', many: 'supplies', path: '/products/supplies', skuField: 'supplySku' },
};

const service = (ctx: AppContext, kind: StockKind) => new StockService(tenantOf(ctx).tenantDb, kind);
const actorOf = (ctx: AppContext) => tenantOf(ctx).principal.keyId;

const RECORD_NOTES: Record<StockKind, string> = {
  material:
    'A material is stock a business buys and uses up (flour, fabric, resin), kept in its own collection and answered as a flat record. ' +
    "Its SKU is in the tenant's one SKU space with products, variants and supplies: a SKU names exactly one of them (a SKU held by a product → 400 duplicate). " +
    'A catalog product of productType `material` is a catalog entry (something listed or sold), not this record: only these records have units, lots, costing and stock here. ' +
    'Quantities are in `baseUnit` (precision ≤ 6 decimals, balances kept exactly) or in an alternative unit (`conversionFactor` base units each). ' +
    "costing.method (from costingMethod, default average): fifo — currentCost is the oldest live lot's cost; lifo — the newest's; average — the weighted average of every live lot; last_purchase — the latest receipt's. " +
    'currentCost is recomputed on every receipt and costHistory appended (the first entry is initialCost, then the latest 10 receipts; every receipt is in the ledger at GET …/{sku}/movements).',
  supply:
    'A supply is stock used in operations (packaging, labels, cleaning), without lots or costing, counted in consumptionUnit (unitPrecision decimals, default 3). ' +
    "Its SKU shares the tenant's one SKU space with products, variants and materials.",
};

function recordRoutes(kind: StockKind): RouteSpec[] {
  const n = NAMES[kind];
  const tags = ['materials'];
  const skuParam: Record<string, JsonSchema> = { sku: { type: 'string', minLength: 1, maxLength: 100 } };
  const locParams: Record<string, JsonSchema> = {
    ...skuParam,
    locationId: { type: 'string', minLength: 1, maxLength: 100 },
  };
  return [
    {
      method: 'get',
      path: `${n.path}/alerts`,
      summary: `Stock alerts of ${n.many}: open ones and the latest closed ones of each location, newest first`,
      description:
        "An alert opens once when a location's available quantity falls to or below its reorderPoint (with stockAlerts.alertEnabled), and closes when it rises above it again; an expiry that lowers availability is noticed at the next movement. No e-mail is sent.",
      tags,
      auth: scopes.read,
      query: alertsQuerySchema,
      responses: {
        200: {
          description:
            '`{data[{id, sku, locationId, status, openedAt, closedAt, …}], total, page, limit, totalPages, hasMore}`',
        },
      },
      handler: async (ctx) => {
        ctx.body = await service(ctx, kind).alerts(ctx.state.query as never);
      },
    },
    {
      method: 'post',
      path: `${n.path}/transfer`,
      idempotency: 'native',
      summary: `Moves stock of a ${n.one} between two locations, all or nothing`,
      description:
        (kind === 'material'
          ? 'Lots leave the origin in the order they are consumed (FEFO for expiring materials, else the costing method: LIFO newest first, others oldest first; expired lots never leave) and arrive with their lot numbers, costs and expiry. '
          : '') +
        "One atomic write of the SKU's stock: a killed process leaves all of the transfer or none. With an Idempotency-Key a retried request moves nothing and answers the first result (`replayed: true`).",
      tags,
      auth: scopes.transfer,
      body: transferSchema(kind),
      invalid: { render: quantityRefusal },
      responses: {
        200: { description: '`{success, message, movementId, replayed, quantity, unit, lots[]}`' },
        400: {
          description:
            "transfer-failed: not enough available stock at the origin (named in details); bad-request with parameter 'quantity'; validation-error: other bad input, an unknown unit, the same location twice",
        },
        404: { description: `not-found: no such ${n.one} or location` },
      },
      handler: async (ctx) => {
        const body = validBody<Record<string, unknown>>(ctx);
        ctx.body = await service(ctx, kind).transfer({
          sku: body[n.skuField] as string,
          fromLocationId: body.fromLocationId as string,
          toLocationId: body.toLocationId as string,
          quantity: body.quantity as number,
          unit: body.unit as string | undefined,
          reason: body.reason as string | undefined,
          actor: actorOf(ctx),
          idempotencyKey: idempotencyKeyOf(ctx),
        });
      },
    },
    {
      method: 'get',
      path: n.path,
      summary: `Lists ${n.many} (0-based page, default limit 50), by category, status and a term in the SKU or title`,
      description: RECORD_NOTES[kind],
      tags,
      auth: scopes.read,
      query: listQuerySchema,
      responses: { 200: { description: '`{data[], total, page, limit, totalPages, hasMore}`' } },
      handler: async (ctx) => {
        ctx.body = await service(ctx, kind).list(ctx.state.query as unknown as ListQuery);
      },
    },
    {
      method: 'post',
      path: n.path,
      idempotency: 'stored',
      summary: `Creates a ${n.one}`,
      description: RECORD_NOTES[kind],
      tags,
      auth: scopes.create,
      body: kind === 'material' ? materialCreateSchema : supplyCreateSchema,
      responses: {
        201: { description: `the ${n.one}` },
        400: {
          description:
            'duplicate: the SKU is taken (by a product, variant, material or supply); validation-error: bad input',
        },
      },
      handler: async (ctx) => {
        ctx.status = 201;
        ctx.body = await service(ctx, kind).create(validBody(ctx), ctx.state.keyedRun?.runId);
      },
    },
    {
      method: 'get',
      path: `${n.path}/:sku`,
      summary: `Reads a ${n.one} by SKU`,
      tags,
      auth: scopes.read,
      params: skuParam,
      responses: { 200: { description: `the ${n.one}` }, 404: { description: 'not-found' } },
      handler: async (ctx) => {
        ctx.body = await service(ctx, kind).get(ctx.params.sku);
      },
    },
    {
      method: 'patch',
      path: `${n.path}/:sku`,
      summary: `Updates some fields of a ${n.one}`,
      description:
        'Fields sent replace the stored ones; stockAlerts, ' +
        (kind === 'material' ? 'baseUnit and expiration are' : 'is') +
        ' merged. The unit balances are counted in and the currency change only while there is no stock record. A new costingMethod recomputes currentCost at once.',
      tags,
      auth: scopes.update,
      params: skuParam,
      body: kind === 'material' ? materialPatchSchema : supplyPatchSchema,
      responses: {
        200: { description: `the ${n.one}` },
        400: { description: 'validation-error' },
        404: { description: 'not-found' },
        409: { description: 'conflict: changed by another request meanwhile' },
      },
      handler: async (ctx) => {
        ctx.body = await service(ctx, kind).update(ctx.params.sku, validBody(ctx));
      },
    },
    {
      method: 'delete',
      path: `${n.path}/:sku`,
      summary: `Deletes a ${n.one} that has no stock and that no bill of materials or modifier uses`,
      tags,
      auth: scopes.delete,
      params: skuParam,
      responses: {
        200: { description: '`{success, message}`' },
        400: {
          description: 'validation-error with details.reason `has-stock` or `in-use` (and the products using it)',
        },
        404: { description: 'not-found' },
      },
      handler: async (ctx) => {
        ctx.body = await service(ctx, kind).delete(ctx.params.sku);
      },
    },
    {
      method: 'get',
      path: `${n.path}/:sku/stock`,
      summary: `Total stock of a ${n.one} across locations`,
      tags,
      auth: scopes.read,
      params: skuParam,
      responses: {
        200: {
          description:
            '`{totalQuantity, totalReserved, totalCommitted, totalAvailable, byLocation[{locationId, quantity, available}]}`',
        },
        404: { description: 'not-found' },
      },
      handler: async (ctx) => {
        ctx.body = await service(ctx, kind).total(ctx.params.sku);
      },
    },
    {
      method: 'get',
      path: `${n.path}/:sku/stock/:locationId`,
      summary: `Stock of a ${n.one} at one location`,
      tags,
      auth: scopes.read,
      params: locParams,
      responses: {
        200: {
          description:
            'the inventory record (quantity, unit, reservedQty, committedQty, available, lots, minStock, reorderPoint, …)',
        },
        404: { description: `not-found: no such ${n.one}, or no stock record of it at that location` },
      },
      handler: async (ctx) => {
        ctx.body = await service(ctx, kind).atLocation(ctx.params.sku, ctx.params.locationId);
      },
    },
    {
      method: 'post',
      path: `${n.path}/:sku/stock/:locationId`,
      idempotency: 'native',
      summary: `Records stock of a ${n.one} received at a location`,
      description:
        'quantity > 0 in `unit` (default the base unit), converted to the base unit and rounded to its precision. ' +
        (kind === 'material'
          ? "A lot-tracked material needs `lot.lotNumber`; receiving into an existing lot number adds to it only when its cost, currency and expiry agree. Without a lot the stock becomes a cost layer at `lot.costPerUnit` (per base unit, default the current cost). An expiring material's lot without expirationDate expires shelfLifeDays after receipt. "
          : '') +
        "minStock and reorderPoint apply only when this creates the location's record (later they are ignored). With an Idempotency-Key a retried request receives nothing again: it answers `replayed: true` and the first receipt's `movementId` and `received` quantity, with the stock as it stands.",
      tags,
      auth: scopes.receive,
      params: locParams,
      body: receiptSchema(kind),
      invalid: { render: quantityRefusal },
      responses: {
        200: {
          description:
            'the inventory record of the location after the receipt, with `movementId`, `received {quantity, unit}` (in the base unit) and `replayed`',
        },
        400: {
          description:
            "bad-request with parameter 'quantity'; validation-error: an unknown unit (named), a lot missing or disagreeing, another currency",
        },
        404: { description: `not-found: no such ${n.one} or location` },
      },
      handler: async (ctx) => {
        const body = validBody<Omit<ReceiptRequest, 'locationId' | 'actor'>>(ctx);
        ctx.body = await service(ctx, kind).receive(ctx.params.sku, {
          ...body,
          locationId: ctx.params.locationId,
          actor: actorOf(ctx),
          idempotencyKey: idempotencyKeyOf(ctx),
        });
      },
    },
    {
      method: 'get',
      path: `${n.path}/:sku/movements`,
      summary: `The ledger of a ${n.one}: every receipt and transfer with who, when and why, newest first`,
      tags,
      auth: scopes.read,
      params: skuParam,
      query: movementsQuerySchema,
      responses: {
        200: {
          description:
            '`{data[{movementId, type, locationId, toLocationId, quantity, unit, lots, reason, actor, at}], total, …}`',
        },
        404: { description: 'not-found' },
      },
      handler: async (ctx) => {
        ctx.body = await service(ctx, kind).movements(ctx.params.sku, ctx.state.query as never);
      },
    },
  ];
}

export const materialRoutes = defineRoutes([...recordRoutes('material'), ...recordRoutes('supply')]);

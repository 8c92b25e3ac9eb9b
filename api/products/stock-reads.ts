import { defineRoutes, type InputFailure } from '../route';
import { tenantOf, type AppContext } from '../context';
import { AppError, isAppError } from '../../shared/errors/catalog';
import { limitParam, PAGE_PARAM, type PageRequest } from '../../shared/paging';
import { presentListItem } from '../../shared/products/present';
import { ProductReads } from '../../shared/products/reads';
import type { JsonSchema } from '../../shared/validation';

const read = { scopes: ['products:read' as const] };

/** Query parameters beside these are ignored, as they always were. */
const stockQuery = (locationId: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: {
    locationId: { type: 'string', description: 'the location whose stock is shown', ...locationId },
    page: PAGE_PARAM,
    limit: limitParam(200, 50),
  },
});

/** inventory-view names the refused parameter as `parameter`, as the spec gives it. */
function inventoryViewRefusal(failures: InputFailure[]): AppError {
  const missing = failures.some(
    (f) => f.field === 'locationId' && (f.keyword === 'required' || f.keyword === 'minLength'),
  );
  if (missing)
    return new AppError(400, 'bad-request/missing-param', 'locationId is required', { parameter: 'locationId' });
  const { field } = failures[0];
  return new AppError(400, 'bad-request/invalid-param', `${field} is not valid (page ≥ 1, limit 1 to 200)`, {
    parameter: field,
  });
}

export const productStockRoutes = defineRoutes([
  {
    method: 'get',
    path: '/products/inventory',
    summary:
      'Products with their stock at one location (`locationId` required): list items plus `stock` and `variants[{id, sku, stock}]`',
    description:
      "Without locationId: 400 with the plain body `{error: 'Missing required query parameter: locationId'}` (no code), as the spec gives it.",
    tags: ['products', 'inventory'],
    auth: read,
    // locationId is not `required` here: its absence has the spec's plain answer, which no refusal
    // renders; the document lists it as required all the same
    query: stockQuery({ 'x-required': true }),
    responses: {
      200: { description: 'a flat array' },
      400: {
        description:
          "`{error: 'Missing required query parameter: locationId'}`; validation-error for a bad page or limit",
      },
      404: { description: 'not-found: no such location' },
    },
    handler: async (ctx: AppContext) => {
      const q = ctx.state.query as unknown as PageRequest & { locationId?: string };
      if (!q.locationId) {
        ctx.status = 400;
        ctx.body = { error: 'Missing required query parameter: locationId' };
        return;
      }
      const locationId = q.locationId;
      const { items } = await new ProductReads(tenantOf(ctx).tenantDb).withStockAt(
        locationId,
        q,
        () => new AppError(404, 'not-found', `No location ${locationId}`, { field: 'locationId' }),
      );
      ctx.body = items.map(({ doc, stock, variants }) => ({
        ...presentListItem(doc, new Set()),
        locationId,
        stock,
        variants,
      }));
    },
  },
  {
    method: 'get',
    path: '/products/inventory-view',
    summary:
      'A reduced view of products with stock at a location: `{products[{id, sku, title, status, price, stock, variants[{sku, stock}]}], total}`',
    tags: ['products', 'inventory'],
    auth: read,
    query: { ...stockQuery({ minLength: 1 }), required: ['locationId'] },
    invalid: { render: inventoryViewRefusal },
    responses: {
      200: { description: '`{products, total}`' },
      400: {
        description:
          'bad-request/missing-param (no locationId), bad-request/invalid-param (bad page/limit, unknown location)',
      },
      500: { description: 'inventory-view/error' },
    },
    handler: async (ctx: AppContext) => {
      const q = ctx.state.query as unknown as PageRequest & { locationId: string };
      const unknownLocation = () =>
        new AppError(400, 'bad-request/invalid-param', 'locationId is not valid', { parameter: 'locationId' });
      try {
        const { items, total } = await new ProductReads(tenantOf(ctx).tenantDb).withStockAt(
          q.locationId,
          q,
          unknownLocation,
        );
        ctx.body = {
          products: items.map(({ doc, stock, variants }) => ({
            id: doc._id.toHexString(),
            sku: doc.sku,
            title: doc.title,
            status: doc.status,
            price: doc.price,
            stock,
            variants: variants.map(({ sku, stock: s }) => ({ sku, stock: s })),
          })),
          total,
        };
      } catch (err) {
        if (isAppError(err)) throw err;
        ctx.deps.log.error({ err }, 'inventory view failed');
        throw new AppError(500, 'inventory-view/error', 'The inventory view could not be built; retry later');
      }
    },
  },
]);

import { defineRoutes } from '../route';
import { tenantOf, type AppContext } from '../context';
import { AppError, isAppError } from '../../shared/errors/catalog';
import { stockOf, skusOfProduct } from '../../shared/inventory/stock-view';
import { Locations } from '../../shared/locations/locations';
import { products } from '../../shared/products/collections';
import { presentListItem } from '../../shared/products/present';
import type { ProductDoc } from '../../shared/products/types';
import type { TenantDb } from '../../shared/db/tenant-db';

const read = { scopes: ['products:read' as const] };

/** page and limit from the query: whole numbers, limit ≤ 200; null when absent. */
function pageOf(q: Record<string, unknown>, onBad: (field: string) => never): { page: number; limit: number } {
  const num = (field: string, fallback: number, max: number) => {
    const raw = q[field];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (typeof raw !== 'string' || !/^\d+$/.test(raw) || n < 1 || n > max) onBad(field);
    return n;
  };
  return { page: num('page', 1, 1_000_000), limit: num('limit', 50, 200) };
}

/** The tenant's products with their stock at one location: per product, its own SKU and each variant. */
async function productsWithStock(tenantDb: TenantDb, locationId: string, page: number, limit: number) {
  const col = tenantDb.collection(products);
  const [docs, total] = await Promise.all([
    col.find({}, { sort: { createdAt: -1, _id: -1 }, skip: (page - 1) * limit, limit }).toArray() as Promise<
      ProductDoc[]
    >,
    col.countDocuments({}),
  ]);
  const stock = await stockOf(tenantDb, docs.flatMap(skusOfProduct), locationId);
  const at = (sku: string) => stock.get(sku)?.total ?? 0;
  return { docs, total, at };
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
    responses: {
      200: { description: 'a flat array' },
      400: { description: "`{error: 'Missing required query parameter: locationId'}`" },
      404: { description: 'not-found: no such location' },
    },
    handler: async (ctx: AppContext) => {
      const q = ctx.query as Record<string, unknown>;
      if (typeof q.locationId !== 'string' || !q.locationId) {
        ctx.status = 400;
        ctx.body = { error: 'Missing required query parameter: locationId' };
        return;
      }
      const { tenantDb } = tenantOf(ctx);
      if (!(await new Locations(tenantDb).get(q.locationId)))
        throw new AppError(404, 'not-found', `No location ${q.locationId}`, { field: 'locationId' });
      const { page, limit } = pageOf(q, (field) => {
        throw new AppError(400, 'validation-error', `${field} must be a whole number (limit at most 200)`, { field });
      });
      const { docs, at } = await productsWithStock(tenantDb, q.locationId, page, limit);
      ctx.body = docs.map((d) => ({
        ...presentListItem(d, new Set()),
        locationId: q.locationId,
        stock: skusOfProduct(d).reduce((n, s) => n + at(s), 0),
        variants: d.variants.map((v) => ({ id: v.id, sku: v.sku, stock: at(v.sku) })),
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
    responses: {
      200: { description: '`{products, total}`' },
      400: {
        description:
          'bad-request/missing-param (no locationId), bad-request/invalid-param (bad page/limit, unknown location)',
      },
      500: { description: 'inventory-view/error' },
    },
    handler: async (ctx: AppContext) => {
      const q = ctx.query as Record<string, unknown>;
      if (typeof q.locationId !== 'string' || !q.locationId)
        throw new AppError(400, 'bad-request/missing-param', 'locationId is required', { parameter: 'locationId' });
      const bad = (field: string): never => {
        throw new AppError(400, 'bad-request/invalid-param', `${field} is not valid`, { parameter: field });
      };
      const { page, limit } = pageOf(q, bad);
      const { tenantDb } = tenantOf(ctx);
      if (!(await new Locations(tenantDb).get(q.locationId))) bad('locationId');
      try {
        const { docs, total, at } = await productsWithStock(tenantDb, q.locationId, page, limit);
        ctx.body = {
          products: docs.map((d) => ({
            id: d._id.toHexString(),
            sku: d.sku,
            title: d.title,
            status: d.status,
            price: d.price,
            stock: skusOfProduct(d).reduce((n, s) => n + at(s), 0),
            variants: d.variants.map((v) => ({ sku: v.sku, stock: at(v.sku) })),
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

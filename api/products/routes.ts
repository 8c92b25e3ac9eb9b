import { defineRoutes } from '../route';
import { tenantOf, type AppContext } from '../context';
import { AppError } from '../../shared/errors/catalog';
import { Catalog, notFound } from '../../shared/products/catalog';
import { products } from '../../shared/products/collections';
import { COMPACT_FIELDS, EXTENDS, presentListItem, presentProduct, type Extend } from '../../shared/products/present';
import {
  buildFilter,
  buildSort,
  commaList,
  filtersFrom,
  searchClause,
  SORT_FIELDS,
  type ProductFilters,
} from '../../shared/products/query';
import { productInputSchema, STATUSES } from '../../shared/products/schema';
import type { ProductDoc } from '../../shared/products/types';
import { addStock, productIdsAvailableAt } from '../../shared/inventory/stock-view';
import { Locations } from '../../shared/locations/locations';
import { ObjectId } from 'mongodb';
import { PAGE_PARAM, type JsonSchema } from '../../shared/validation';

const read = { scopes: ['products:read' as const] };
const commaOf = (values: readonly string[]) => `^(${values.join('|')})(,(${values.join('|')}))*$`;

const filterQuery: Record<string, JsonSchema> = {
  q: {
    type: 'string',
    maxLength: 200,
    description: 'search term: every word must match the SKU, a variant SKU, the title, the brand or a tag',
  },
  status: { type: 'string', pattern: commaOf(STATUSES), description: 'comma-separated statuses' },
  category: { type: 'string', maxLength: 1000, description: 'category id, name or path' },
  brands: { type: 'string', maxLength: 2000, description: 'comma-separated brands (exact)' },
  minPrice: { type: 'number', minimum: 0 },
  maxPrice: { type: 'number', minimum: 0 },
  tags: { type: 'string', maxLength: 2000, description: 'comma-separated tags; a product with any of them matches' },
  channelId: { type: 'string', maxLength: 100, description: 'products bound to this channel' },
};
const paging: Record<string, JsonSchema> = {
  page: { ...PAGE_PARAM, description: '1-based' },
  limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
  sort: {
    type: 'string',
    pattern: `^-?(${Object.keys(SORT_FIELDS).join('|')})$`,
    default: '-createdAt',
    description: 'field, `-` for descending',
  },
};
const extendParam: JsonSchema = {
  type: 'string',
  pattern: commaOf(EXTENDS),
  description: `comma-separated: ${EXTENDS.join(', ')}. Without it, list items carry only ${COMPACT_FIELDS.join(', ')}.`,
};
const queryObject = (properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  properties,
});

function extendsFrom(value: unknown): Set<Extend> {
  return new Set((commaList(value) ?? []) as Extend[]);
}

function catalog(ctx: AppContext): Catalog {
  return new Catalog(tenantOf(ctx).tenantDb);
}

async function list(
  ctx: AppContext,
  f: ProductFilters,
  page: number,
  limit: number,
  sort: string,
  extend: Set<Extend>,
  onlyIds?: string[],
) {
  const { tenantDb } = tenantOf(ctx);
  const { filter } = buildFilter(f);
  const scoped = onlyIds ? { $and: [filter, { _id: { $in: onlyIds.map((id) => new ObjectId(id)) } }] } : filter;
  const docs = (await tenantDb
    .collection(products)
    .find(scoped, { sort: buildSort(sort), skip: (page - 1) * limit, limit })
    .toArray()) as ProductDoc[];
  const items = docs.map((d) => presentListItem(d, extend));
  // stock (inventory by location, variants[].stock) comes from the ledger when asked for: extend=inventory or all
  if (extend.has('inventory') || extend.has('all')) await addStock(tenantDb, docs, items, { inventory: true });
  return items;
}

const countResult: JsonSchema = {
  type: 'object',
  properties: { count: { type: 'integer' }, searchStrategy: { type: 'string' } },
};

export const productRoutes = defineRoutes([
  {
    method: 'get',
    path: '/products/count',
    summary: 'Count products with the list filters (no paging); with a search term also says how it searched',
    tags: ['products'],
    auth: read,
    query: queryObject(filterQuery),
    responses: {
      200: { description: '`{count}`, or `{count, searchStrategy}` when `q` is given', schema: countResult },
    },
    handler: async (ctx) => {
      const { filter, searchStrategy } = buildFilter(filtersFrom(ctx.state.query!));
      const count = await tenantOf(ctx).tenantDb.collection(products).countDocuments(filter);
      ctx.body = searchStrategy ? { count, searchStrategy } : { count };
    },
  },
  {
    method: 'get',
    path: '/products/search',
    summary: 'Text search (token based): every word must match the SKU, a variant SKU, the title, the brand or a tag',
    tags: ['products'],
    auth: read,
    query: {
      ...queryObject({ q: { type: 'string', minLength: 1, maxLength: 200 }, ...paging, extend: extendParam }),
      required: ['q'],
    },
    handler: async (ctx) => {
      const q = ctx.state.query!;
      const { clause, strategy } = searchClause(q.q as string);
      const col = tenantOf(ctx).tenantDb.collection(products);
      const [items, total] = await Promise.all([
        list(ctx, { q: q.q as string }, q.page as number, q.limit as number, q.sort as string, extendsFrom(q.extend)),
        col.countDocuments(clause),
      ]);
      ctx.body = { products: items, total, page: q.page, limit: q.limit, searchStrategy: strategy };
    },
  },
  {
    method: 'get',
    path: '/products/brands',
    summary: 'Brands of the catalog with their product counts',
    tags: ['products'],
    auth: read,
    handler: async (ctx) => {
      ctx.body = { brands: await distinctWithCounts(ctx, 'brand') };
    },
  },
  {
    method: 'get',
    path: '/products/kinds',
    summary: 'Product kinds of the catalog with their product counts',
    tags: ['products'],
    auth: read,
    handler: async (ctx) => {
      ctx.body = { kinds: await distinctWithCounts(ctx, 'productKind') };
    },
  },
  {
    method: 'post',
    path: '/products/query',
    summary: 'Advanced search: either structured `filters` or a search string `query`, not both',
    tags: ['products'],
    auth: read,
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        filters: {
          type: 'object',
          additionalProperties: false,
          properties: {
            status: { type: 'array', items: { type: 'string', enum: STATUSES } },
            category: { type: 'string' },
            brands: { type: 'array', items: { type: 'string' } },
            minPrice: { type: 'number', minimum: 0 },
            maxPrice: { type: 'number', minimum: 0 },
            tags: { type: 'array', items: { type: 'string' } },
            channelId: { type: 'string' },
          },
        },
        query: { type: 'string', minLength: 1, maxLength: 200 },
        ...paging,
        extend: { type: 'array', items: { type: 'string', enum: EXTENDS } },
      },
    },
    responses: {
      200: { description: '`{products, total, page, limit}`' },
      400: { description: 'bad-request/ambiguous-param when both filters and query are sent' },
    },
    handler: async (ctx) => {
      const body = ctx.request.body as {
        filters?: Omit<ProductFilters, 'q'>;
        query?: string;
        page: number;
        limit: number;
        sort: string;
        extend?: Extend[];
      };
      if (body.filters && body.query !== undefined) {
        throw new AppError(400, 'bad-request/ambiguous-param', 'Send either filters or query, not both', {
          field: 'query',
        });
      }
      const f: ProductFilters = body.query !== undefined ? { q: body.query } : { ...(body.filters ?? {}) };
      const { filter } = buildFilter(f);
      const [items, total] = await Promise.all([
        list(ctx, f, body.page, body.limit, body.sort, new Set(body.extend ?? [])),
        tenantOf(ctx).tenantDb.collection(products).countDocuments(filter),
      ]);
      ctx.body = { products: items, total, page: body.page, limit: body.limit };
    },
  },
  {
    method: 'get',
    path: '/products/sku/:sku/exists',
    summary: 'Whether a SKU is used in the tenant, and by a product or a variant',
    tags: ['products'],
    auth: read,
    responses: { 200: { description: '`{exists, kind: product|variant|null}`' } },
    handler: async (ctx) => {
      const owner = await catalog(ctx).skuOwner(ctx.params.sku);
      ctx.body = {
        sku: ctx.params.sku.toUpperCase(),
        exists: Boolean(owner),
        kind: owner?.kind ?? null,
        productId: owner?.productId ?? null,
      };
    },
  },
  {
    method: 'get',
    path: '/products/by-variant/:sku',
    summary: 'The product a variant SKU belongs to',
    tags: ['products'],
    auth: read,
    handler: async (ctx) => {
      const sku = ctx.params.sku.toUpperCase();
      const doc = await tenantOf(ctx)
        .tenantDb.collection(products)
        .findOne({ 'variants.sku': sku } as never);
      if (!doc) throw new AppError(404, 'not-found', `No variant with SKU ${sku}`);
      ctx.body = presentProduct(doc);
    },
  },
  {
    method: 'get',
    path: '/products',
    summary: 'List products (a flat array) with filters, paging, sort and extend',
    tags: ['products'],
    auth: read,
    query: queryObject({
      ...filterQuery,
      ...paging,
      extend: extendParam,
      availableAt: {
        type: 'string',
        minLength: 1,
        description: 'a location id: only products with stock there, answered as `{data, meta{page, limit, total}}`',
      },
    }),
    responses: {
      200: { description: 'a flat array of list items; with availableAt, `{data, meta: {page, limit, total}}`' },
      404: { description: 'not-found: availableAt names no location of the tenant' },
    },
    handler: async (ctx) => {
      const q = ctx.state.query!;
      const args = [
        filtersFrom(q),
        q.page as number,
        q.limit as number,
        q.sort as string,
        extendsFrom(q.extend),
      ] as const;
      if (typeof q.availableAt !== 'string') {
        ctx.body = await list(ctx, ...args);
        return;
      }
      const { tenantDb } = tenantOf(ctx);
      if (!(await new Locations(tenantDb).get(q.availableAt)))
        throw new AppError(404, 'not-found', `No location ${q.availableAt}`, { field: 'availableAt' });
      const ids = await productIdsAvailableAt(tenantDb, q.availableAt, (sku) => catalog(ctx).skuOwner(sku));
      const { filter } = buildFilter(args[0]);
      const total = ids.length
        ? await tenantDb
            .collection(products)
            .countDocuments({ $and: [filter, { _id: { $in: ids.map((id) => new ObjectId(id)) } }] })
        : 0;
      ctx.body = {
        data: ids.length ? await list(ctx, ...args, ids) : [],
        meta: { page: args[1], limit: args[2], total },
      };
    },
  },
  {
    method: 'post',
    path: '/products',
    summary: 'Create a product',
    description:
      "SKUs are stored upper-case and are unique across the tenant's products and variants (409 duplicate-sku).",
    tags: ['products'],
    auth: { scopes: ['products:create'] },
    body: productInputSchema,
    bodyValidation: 'handler',
    responses: {
      201: { description: 'the product' },
      409: { description: 'duplicate-sku, naming the SKU and whether a product or a variant holds it' },
    },
    handler: async (ctx) => {
      const doc = await catalog(ctx).create(ctx.request.body);
      ctx.status = 201;
      ctx.set('Location', `/products/${doc._id.toHexString()}`);
      ctx.body = presentProduct(doc);
    },
  },
  {
    method: 'get',
    path: '/products/:id',
    summary: 'Read a product (always the full product)',
    tags: ['products'],
    auth: read,
    query: queryObject({ extend: extendParam }),
    handler: async (ctx) => {
      const doc = await catalog(ctx).get(ctx.params.id);
      if (!doc) throw notFound(ctx.params.id);
      const item = presentProduct(doc);
      const extend = extendsFrom(ctx.state.query!.extend);
      // extend=inventory (or all) adds the ledger's stock: inventory {total, byLocation} and variants[].stock
      if (extend.has('inventory') || extend.has('all'))
        await addStock(tenantOf(ctx).tenantDb, [doc], [item], { inventory: true });
      ctx.body = item;
    },
  },
  {
    method: 'put',
    path: '/products/:id',
    summary: 'Full update: the body replaces the product (bundleConfig included)',
    tags: ['products'],
    auth: { scopes: ['products:update'] },
    body: productInputSchema,
    bodyValidation: 'handler',
    handler: async (ctx) => {
      ctx.body = presentProduct(await catalog(ctx).replace(ctx.params.id, ctx.request.body));
    },
  },
  {
    method: 'delete',
    path: '/products/:id',
    summary: 'Delete a product and free its SKUs',
    tags: ['products'],
    auth: { scopes: ['products:delete'] },
    handler: async (ctx) => {
      const doc = await catalog(ctx).delete(ctx.params.id);
      ctx.body = { success: true, id: doc._id.toHexString(), sku: doc.sku };
    },
  },
]);

async function distinctWithCounts(ctx: AppContext, field: 'brand' | 'productKind') {
  const rows = await tenantOf(ctx)
    .tenantDb.collection(products)
    .aggregate<{ _id: string; count: number }>([
      { $match: { [field]: { $exists: true, $ne: '' } } },
      { $group: { _id: `$${field}`, count: { $sum: 1 } } },
      { $sort: { _id: 1 } },
    ])
    .toArray();
  return rows.map((r) => ({ [field === 'brand' ? 'brand' : 'kind']: r._id, count: r.count }));
}

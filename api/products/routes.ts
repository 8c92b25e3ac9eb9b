import { defineRoutes } from '../route';
import { createdObjectId, tenantOf, type AppContext } from '../context';
import { Catalog } from '../../shared/products/catalog';
import { COMPACT_FIELDS, EXTENDS, presentProduct, type Extend } from '../../shared/products/present';
import {
  commaList,
  filtersFrom,
  productFiltersQuery,
  NO_NUL_PATTERN,
  productFiltersSchema,
  SORT_FIELDS,
  type ProductFilters,
} from '../../shared/products/query';
import { ProductReads, type ListRequest } from '../../shared/products/reads';
import { productInputRefusal } from '../../shared/products/rules';
import { productInputSchema } from '../../shared/products/schema';
import type { ProductInput } from '../../shared/products/types';
import { limitParam, PAGE_PARAM, type PageRequest } from '../../shared/paging';
import type { JsonSchema } from '../../shared/validation';

const read = { scopes: ['products:read' as const] };
const commaOf = (values: readonly string[]) => `^(${values.join('|')})(,(${values.join('|')}))*$`;

const paging: Record<string, JsonSchema> = {
  page: { ...PAGE_PARAM, description: '1-based' },
  limit: limitParam(200, 50),
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

/** A product body: the schema's refusals answered with the catalog's explanations (invalid-status, validation-error). */
const productBody = { body: productInputSchema, invalid: { render: productInputRefusal } };

type PagedQuery = PageRequest & { sort: string; extend?: string };

/** The page, sort and extend of a validated query string. */
function listRequest(q: PagedQuery): ListRequest {
  return { page: q.page, limit: q.limit, sort: q.sort, extend: new Set((commaList(q.extend) ?? []) as Extend[]) };
}

function reads(ctx: AppContext): ProductReads {
  return new ProductReads(tenantOf(ctx).tenantDb);
}

function catalog(ctx: AppContext): Catalog {
  return new Catalog(tenantOf(ctx).tenantDb);
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
    query: queryObject(productFiltersQuery),
    responses: {
      200: { description: '`{count}`, or `{count, searchStrategy}` when `q` is given', schema: countResult },
    },
    handler: async (ctx) => {
      ctx.body = await reads(ctx).count(filtersFrom(ctx.state.query!));
    },
  },
  {
    method: 'get',
    path: '/products/search',
    summary: 'Text search (token based): every word must match the SKU, a variant SKU, the title, the brand or a tag',
    tags: ['products'],
    auth: read,
    query: {
      ...queryObject({ q: { ...productFiltersQuery.q, minLength: 1 }, ...paging, extend: extendParam }),
      required: ['q'],
    },
    handler: async (ctx) => {
      const q = ctx.state.query as unknown as PagedQuery & { q: string };
      ctx.body = await reads(ctx).search(q.q, listRequest(q));
    },
  },
  {
    method: 'get',
    path: '/products/brands',
    summary: 'Brands of the catalog with their product counts',
    tags: ['products'],
    auth: read,
    handler: async (ctx) => {
      ctx.body = { brands: await reads(ctx).distinctWithCounts('brand') };
    },
  },
  {
    method: 'get',
    path: '/products/kinds',
    summary: 'Product kinds of the catalog with their product counts',
    tags: ['products'],
    auth: read,
    handler: async (ctx) => {
      ctx.body = { kinds: await reads(ctx).distinctWithCounts('productKind') };
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
        filters: productFiltersSchema,
        query: { type: 'string', minLength: 1, maxLength: 200, pattern: NO_NUL_PATTERN },
        ...paging,
        extend: { type: 'array', items: { type: 'string', enum: EXTENDS } },
      },
      not: { required: ['filters', 'query'], description: 'filters and query together' },
    },
    invalid: {
      rules: [
        {
          field: '(body)',
          keyword: 'not',
          code: 'bad-request/ambiguous-param',
          message: 'Send either filters or query, not both',
        },
      ],
    },
    responses: {
      200: { description: '`{products, total, page, limit}`' },
      400: {
        description:
          'bad-request/ambiguous-param when both filters and query are sent; validation-error for anything else refused (a list filter of more than 100 values, …)',
      },
    },
    handler: async (ctx) => {
      const body = ctx.request.body as unknown as PageRequest & {
        filters?: ProductFilters;
        query?: string;
        sort: string;
        extend?: Extend[];
      };
      const filters: ProductFilters = body.query !== undefined ? { q: body.query } : { ...(body.filters ?? {}) };
      const req = { page: body.page, limit: body.limit, sort: body.sort, extend: new Set(body.extend ?? []) };
      ctx.body = await reads(ctx).query(filters, req);
    },
  },
  {
    method: 'get',
    path: '/products/sku/:sku/exists',
    summary: 'Whether a SKU is used in the tenant, and by a product, a variant, a material or a supply',
    description:
      'Products, variants, materials and supplies share one SKU space per tenant: a SKU names at most one of them. `productId` is set for a product or variant SKU.',
    tags: ['products'],
    auth: read,
    responses: { 200: { description: '`{sku, exists, kind: product|variant|material|supply|null, productId}`' } },
    handler: async (ctx) => {
      const holder = await catalog(ctx).skuHolder(ctx.params.sku);
      const inCatalog = holder?.kind === 'product' || holder?.kind === 'variant';
      ctx.body = {
        sku: ctx.params.sku.toUpperCase(),
        exists: Boolean(holder),
        kind: holder?.kind ?? null,
        productId: inCatalog ? holder.productId : null,
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
      ctx.body = await reads(ctx).byVariantSku(ctx.params.sku);
    },
  },
  {
    method: 'get',
    path: '/products',
    summary: 'List products (a flat array) with filters, paging, sort and extend',
    tags: ['products'],
    auth: read,
    query: queryObject({
      ...productFiltersQuery,
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
      const q = ctx.state.query as unknown as PagedQuery & { availableAt?: string };
      const filters = filtersFrom(ctx.state.query!);
      ctx.body =
        q.availableAt === undefined
          ? await reads(ctx).list(filters, listRequest(q))
          : await reads(ctx).availableAt(q.availableAt, filters, listRequest(q));
    },
  },
  {
    method: 'post',
    path: '/products',
    idempotency: 'stored',
    summary: 'Create a product',
    description:
      "SKUs are stored upper-case and are unique across the tenant's products and variants (409 duplicate-sku).",
    tags: ['products'],
    auth: { scopes: ['products:create'] },
    ...productBody,
    responses: {
      201: { description: 'the product' },
      400: { description: 'validation-error naming every refused field; invalid-status' },
      409: { description: 'duplicate-sku, naming the SKU and whether a product or a variant holds it' },
    },
    handler: async (ctx) => {
      const doc = await catalog(ctx).create(ctx.request.body as unknown as ProductInput, createdObjectId(ctx));
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
      const extend = new Set((commaList(ctx.state.query!.extend) ?? []) as Extend[]);
      ctx.body = await reads(ctx).get(ctx.params.id, extend);
    },
  },
  {
    method: 'put',
    path: '/products/:id',
    summary: 'Full update: the body replaces the product (bundleConfig included)',
    tags: ['products'],
    auth: { scopes: ['products:update'] },
    ...productBody,
    responses: {
      200: { description: 'the product' },
      400: { description: 'validation-error naming every refused field; invalid-status' },
      404: { description: 'not-found' },
      409: { description: 'duplicate-sku; conflict when another request changed it meanwhile' },
    },
    handler: async (ctx) => {
      ctx.body = presentProduct(await catalog(ctx).replace(ctx.params.id, ctx.request.body as unknown as ProductInput));
    },
  },
  {
    method: 'delete',
    path: '/products/:id',
    summary: 'Delete a product and free its SKUs',
    tags: ['products'],
    auth: { scopes: ['products:delete'] },
    responses: {
      200: { description: '`{success, id, sku}`' },
      400: {
        description:
          'validation-error: a bundle names the product or one of its variants (details.usedBy), or its SKUs still hold stock (details.reason has-stock, details.stock)',
      },
      404: { description: 'not-found' },
      409: { description: 'conflict: the product changed while it was deleted' },
    },
    handler: async (ctx) => {
      const doc = await catalog(ctx).delete(ctx.params.id);
      ctx.body = { success: true, id: doc._id.toHexString(), sku: doc.sku };
    },
  },
]);

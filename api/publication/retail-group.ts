import { defineRoutes, type RouteSpec } from '../route';
import type { AppContext } from '../context';
import { publicationContext } from './context';
import { eligibleQuery, groupInvalid, groupQuery } from './schemas';
import {
  boundProducts,
  channelCatalog,
  eligibleProducts,
  type GroupPaging,
} from '../../shared/publication/retail-group';

const read = { scopes: ['products:read' as const] };

function pagingOf(ctx: AppContext): GroupPaging {
  const q = ctx.state.query as { page: number; limit: number; search?: string };
  return { page: q.page, limit: q.limit, search: q.search || undefined };
}

const catalogRead: Pick<RouteSpec, 'query' | 'invalid' | 'handler'> = {
  query: groupQuery,
  invalid: groupInvalid,
  handler: async (ctx) => {
    ctx.body = await channelCatalog(publicationContext(ctx), ctx.params.channelId, pagingOf(ctx));
  },
};

/** The retail group's (t1) reads: its own catalog, our products bound to it, those that could be. */
export const retailGroupRoutes = defineRoutes([
  {
    method: 'get',
    path: '/products/channel/:channelId/catalog',
    summary: "Retail group: the channel's own catalog (its API), each product with its sync status here",
    tags: ['publication'],
    auth: read,
    responses: {
      200: { description: '`{products[{…, syncStatus}], page, limit}`' },
      400: { description: 'invalid-channel-type, bad-request' },
      404: { description: 'channel-not-found' },
      500: { description: 't1-integration-error (unreachable), t1-api-error (it answered an error)' },
    },
    ...catalogRead,
  },
  {
    method: 'get',
    path: '/products/channel/:channelId/t1',
    summary: 'The path the spec gives for the retail-group catalog read (same as …/catalog)',
    tags: ['publication'],
    auth: read,
    ...catalogRead,
  },
  {
    method: 'get',
    path: '/products/channel/:channelId/bound',
    summary: 'Retail group: our products already bound to the channel',
    tags: ['publication'],
    auth: read,
    query: groupQuery,
    invalid: groupInvalid,
    responses: {
      200: { description: '`{products, page, limit, total}`' },
      400: { description: 'invalid-channel-type, bad-request' },
      404: { description: 'channel-not-found' },
    },
    handler: async (ctx) => {
      ctx.body = await boundProducts(publicationContext(ctx), ctx.params.channelId, pagingOf(ctx));
    },
  },
  {
    method: 'get',
    path: '/products/channel/:channelId/eligible',
    summary:
      'Retail group: every active product that could be published on the channel, with hasBinding; inStock=true keeps those with stock',
    tags: ['publication'],
    auth: read,
    query: eligibleQuery,
    invalid: groupInvalid,
    responses: {
      200: { description: '`{products[{…, hasBinding, stock}], page, limit, total}`' },
      400: { description: 'invalid-channel-type, bad-request' },
      404: { description: 'channel-not-found' },
    },
    handler: async (ctx) => {
      const { inStock } = ctx.state.query as { inStock?: boolean };
      ctx.body = await eligibleProducts(publicationContext(ctx), ctx.params.channelId, {
        ...pagingOf(ctx),
        inStock,
      });
    },
  },
]);

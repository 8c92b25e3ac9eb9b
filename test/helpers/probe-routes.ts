import { defineRoutes, type RouteSpec } from '../../api/route';
import { tenantOf } from '../../api/context';
import { defineCollection } from '../../shared/db/collection';
import { AppError } from '../../shared/errors/catalog';
import type { Scope } from '../../shared/auth/scopes';

/**
 * Routes that exist only in tests: one read and one write per area, over a tenant-scoped
 * collection, so the foundation's pipeline (auth, scopes, envelopes, body parsing, validation,
 * tenant isolation) can be exercised through HTTP in every area before the areas' own routes exist.
 */
export interface Probe {
  tenantId: string;
  _id: string;
  name: string;
}

export const probes = defineCollection<Probe>({
  name: 'test_probes',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, name: 1 } }],
});

export const AREAS = [
  { area: 'orders', prefix: '/orders', read: 'orders:read', write: 'orders:update', notFound: 'orders:not_found' },
  { area: 'products', prefix: '/products', read: 'products:read', write: 'products:update', notFound: 'not-found' },
  { area: 'inventory', prefix: '/inventory', read: 'inventory:read', write: 'inventory:update', notFound: 'not-found' },
  { area: 'locations', prefix: '/locations', read: 'locations:read', write: 'locations:update', notFound: 'not-found' },
] as const satisfies ReadonlyArray<{ area: string; prefix: string; read: Scope; write: Scope; notFound: string }>;

export const probeRoutes: RouteSpec[] = defineRoutes(
  AREAS.flatMap(({ prefix, read, write, notFound }) => [
    {
      method: 'get',
      path: `${prefix}/probe/:id`,
      summary: 'test probe read',
      auth: { scopes: [read] },
      handler: async (ctx) => {
        const { tenantDb } = tenantOf(ctx);
        const doc = await tenantDb.collection(probes).findOne({ _id: ctx.params.id });
        if (!doc) throw new AppError(404, notFound, `No probe ${ctx.params.id}`);
        ctx.body = { id: doc._id, name: doc.name };
      },
    },
    {
      method: 'post',
      path: `${prefix}/probe`,
      summary: 'test probe write',
      auth: { scopes: [write] },
      body: {
        type: 'object',
        required: ['id', 'name'],
        additionalProperties: false,
        properties: { id: { type: 'string', minLength: 1 }, name: { type: 'string', minLength: 1, maxLength: 50 } },
      },
      handler: async (ctx) => {
        const { tenantDb } = tenantOf(ctx);
        const body = ctx.request.body as { id: string; name: string };
        await tenantDb.collection(probes).insertOne({ _id: body.id, name: body.name });
        ctx.status = 201;
        ctx.body = { id: body.id, name: body.name };
      },
    },
  ]),
);

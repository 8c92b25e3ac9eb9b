import { defineRoutes } from '../route';
import type { AppContext } from '../context';
import { bearerOf } from '../middleware/auth';
import { checkHealth } from './health';
import { METRICS_CONTENT_TYPE, metricsText } from '../../shared/metrics/metrics';
import { errors } from '../../shared/errors/catalog';
import { tenantOf } from '../context';

const tokenPair = {
  type: 'object',
  properties: {
    tokenType: { const: 'Bearer' },
    accessToken: { type: 'string' },
    expiresIn: { type: 'integer', description: 'seconds' },
    refreshToken: { type: 'string' },
    refreshExpiresIn: { type: 'integer', description: 'seconds' },
    tenantId: { type: 'string' },
    scopes: { type: 'array', items: { type: 'string' } },
  },
};

function ttl(ctx: AppContext) {
  return {
    accessSeconds: ctx.deps.config.accessTokenTtlSeconds,
    refreshSeconds: ctx.deps.config.refreshTokenTtlSeconds,
  };
}

export const systemRoutes = defineRoutes([
  {
    method: 'get',
    path: '/metrics',
    summary: 'The API process’s metrics in Prometheus’s text format',
    description: [
      '`http_request_duration_seconds{route, method, status}` (route templates, never ids), `jobs_started_total{type}`,',
      'and the Node.js process’s own (memory, event-loop lag, GC). Job outcomes (`jobs_finished_total{type, outcome}`)',
      'and the Temporal SDK’s metrics are on each worker’s endpoint (`WORKER_METRICS_PORT`). Public like /health: it',
      'names no tenant and no resource; keep it off the public network with the rest of the operator surface.',
    ].join('\n'),
    tags: ['system'],
    auth: 'public',
    responses: { 200: { description: 'Prometheus text format', contentType: 'text/plain' } },
    handler: async (ctx) => {
      ctx.type = METRICS_CONTENT_TYPE;
      ctx.body = await metricsText();
    },
  },
  {
    method: 'get',
    path: '/health',
    summary: 'Health of the API and each dependency (MongoDB, Temporal, a polling worker, object store)',
    tags: ['system'],
    auth: 'public',
    responses: {
      200: { description: 'all dependencies answer' },
      503: { description: 'at least one dependency is down' },
    },
    handler: async (ctx) => {
      const { ok, body } = await checkHealth(ctx.deps);
      ctx.status = ok ? 200 : 503;
      ctx.body = body;
    },
  },
  {
    method: 'get',
    path: '/openapi.json',
    summary: 'This OpenAPI document',
    tags: ['system'],
    auth: 'public',
    handler: (ctx) => {
      ctx.body = ctx.openapi;
    },
  },
  {
    method: 'post',
    path: '/auth/token',
    summary: 'Exchange an API key (as the Bearer credential) for a short-lived access token and a refresh token',
    description:
      "The access token carries the key's tenant and scopes and is accepted as a Bearer credential on every route. Only an API key can be exchanged here; renew with /auth/refresh.",
    tags: ['auth'],
    auth: { scopes: [] },
    responses: { 200: { description: 'token pair', schema: tokenPair } },
    handler: async (ctx) => {
      const { principal } = tenantOf(ctx);
      if (principal.via !== 'key')
        throw errors.invalidToken('POST /auth/token takes an API key; renew an access token with POST /auth/refresh');
      ctx.body = await ctx.deps.tenancy.issueTokens(principal, ttl(ctx));
    },
  },
  {
    method: 'post',
    path: '/auth/refresh',
    summary: 'Trade a refresh token (as the Bearer credential, or as `refreshToken` in the body) for a new token pair',
    description: 'Refresh tokens are single-use. Tokens of a revoked key or a suspended tenant stop working.',
    tags: ['auth'],
    auth: 'refresh-token',
    bodyRequired: false,
    body: {
      type: 'object',
      properties: { refreshToken: { type: 'string', minLength: 1 } },
      additionalProperties: false,
    },
    responses: { 200: { description: 'token pair', schema: tokenPair } },
    handler: async (ctx) => {
      const body = ctx.request.body as { refreshToken?: string };
      const token = body.refreshToken ?? bearerOf(ctx);
      const result = await ctx.deps.tenancy.refresh(token, ttl(ctx));
      if (result === 'invalid') throw errors.invalidToken('Unknown, used, expired or revoked refresh token');
      if (result === 'suspended') throw errors.permissionDenied('The tenant is suspended');
      ctx.body = result;
    },
  },
]);

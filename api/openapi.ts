import { paramSchemas, type RouteSpec } from './route';
import { SCOPES } from '../shared/auth/scopes';

const flatError = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'string' },
    message: { type: 'string' },
    field: { type: 'string' },
    details: {},
    fieldErrors: {
      type: 'array',
      items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } },
    },
  },
};
const ordersError = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' } },
    },
  },
};

function openapiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** The header every creating operation honours (RouteSpec.idempotency). */
const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'A key of your own (a UUID) that makes a retry safe: a retry with the same key and the same request answers what the ' +
    'first one did, without doing it again (for 24 hours; a replayed answer carries `Idempotent-Replayed: true` where it ' +
    'is kept); the same key with another request is 409 `idempotency-key-reused`; a retry arriving while the first still ' +
    'runs waits for it. A refused request is not remembered: nothing was written, and its retry is judged afresh.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

function queryParameters(schema: Record<string, unknown> | undefined) {
  const props = (schema?.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((schema?.required as string[] | undefined) ?? []);
  return Object.entries(props).map(([name, s]) => ({
    name,
    in: 'query',
    required: required.has(name) || s['x-required'] === true,
    schema: s,
    description: s.description,
  }));
}

/** The OpenAPI 3.1 document, assembled from the same route declarations that are mounted. */
export function buildOpenApi(routes: RouteSpec[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = openapiPath(r.path);
    const params = Object.entries(paramSchemas(r)).map(([name, schema]) => ({
      name,
      in: 'path',
      required: true,
      schema,
    }));
    const errorSchema = r.path.startsWith('/orders') ? ordersError : flatError;
    const responses: Record<string, unknown> = {};
    for (const [status, res] of Object.entries(r.responses ?? { 200: { description: 'OK' } })) {
      responses[status] = {
        description: res.description,
        ...(res.schema || res.contentType
          ? { content: { [res.contentType ?? 'application/json']: { schema: res.schema ?? {} } } }
          : {}),
      };
    }
    if (r.auth !== 'public') {
      responses['401'] ??= {
        description: 'missing, malformed, unknown or revoked credentials',
        content: { 'application/json': { schema: errorSchema } },
      };
      responses['403'] ??= {
        description: 'missing scope or suspended tenant',
        content: { 'application/json': { schema: errorSchema } },
      };
    }
    const error = (description: string) => ({ description, content: { 'application/json': { schema: errorSchema } } });
    if (r.body || r.query) responses['400'] ??= error('invalid input');
    if (r.body) {
      responses['413'] ??= error('payload-too-large: the body is over the size limit');
      responses['415'] ??= error('unsupported-media-type: the body is not application/json');
    }
    // a key sent again with another request is refused, whatever the route's own conflicts
    if (r.idempotency)
      responses['409'] ??= error('idempotency-key-reused: the Idempotency-Key was used for another request');
    // a path naming a resource answers 404 for one that does not exist or is another tenant's
    if (params.length)
      responses['404'] ??= {
        description: 'no such resource in this tenant',
        content: { 'application/json': { schema: errorSchema } },
      };
    paths[path] ??= {};
    paths[path][r.method] = {
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      tags: r.tags,
      ...(typeof r.auth === 'object' ? { 'x-scopes': r.auth.scopes } : {}),
      security: r.auth === 'public' ? [] : [{ bearer: [] }],
      parameters: [...params, ...queryParameters(r.query), ...(r.idempotency ? [IDEMPOTENCY_KEY] : [])],
      ...(r.body
        ? {
            requestBody: {
              // bodyRequired: false only says how an absent body is answered; one with required
              // fields (or at least one field) is required
              required:
                r.bodyRequired !== false ||
                Boolean((r.body.required as string[] | undefined)?.length) ||
                Number(r.body.minProperties ?? 0) > 0,
              content: { 'application/json': { schema: r.body } },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Commerce back office',
      version: '1',
      description: [
        'Multi-tenant back-office API. Every route is served at the root and under /v1.',
        'Authenticate with `Authorization: Bearer <API key or access token>`.',
        'Errors: orders routes answer `{error: {code, message}}`; all others a flat `{code, message, ...}`.',
        `Scopes: ${SCOPES.join(', ')}.`,
      ].join('\n\n'),
    },
    servers: [{ url: '/' }, { url: '/v1' }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}

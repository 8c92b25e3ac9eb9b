import Router from '@koa/router';
import { koaBody } from 'koa-body';
import type { Next } from 'koa';
import type { AppContext } from './context';
import { authenticate } from './middleware/auth';
import type { Scope } from '../shared/auth/scopes';
import { AppError, errors } from '../shared/errors/catalog';
import { compile, summarize, toFieldErrors, type JsonSchema } from '../shared/validation';

/**
 * A route is declared once, as data: path, scopes, schemas, responses and handler. Mounting it
 * wires authentication, the scope check, body parsing and ajv validation in that order, and the
 * same declaration feeds /openapi.json, so the document cannot drift from what is enforced.
 */
export interface RouteSpec {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Koa-router path, `/orders/:orderId`. */
  path: string;
  summary: string;
  description?: string;
  tags?: string[];
  /** `public` routes take no credentials; otherwise every listed scope is required. */
  auth: 'public' | { scopes: Scope[] } | 'refresh-token';
  body?: JsonSchema;
  /** A route with a body schema requires a body unless this is false. */
  bodyRequired?: boolean;
  /** A larger body limit than the API's default, for routes that take file contents. */
  bodyLimitBytes?: number;
  /** 'handler': the body schema documents the route; the handler validates (for domain-specific messages). */
  bodyValidation?: 'route' | 'handler';
  /** The code of a body the route's schema refuses or a missing body, where the spec names one (CSV: `bad-request`). */
  bodyErrorCode?: string;
  query?: JsonSchema;
  responses?: Record<number, { description: string; schema?: JsonSchema; contentType?: string }>;
  handler: (ctx: AppContext) => Promise<void> | void;
}

export function defineRoutes(routes: RouteSpec[]): RouteSpec[] {
  return routes;
}

function isJsonType(ctx: AppContext): boolean {
  return Boolean(ctx.is('application/json', 'application/*+json'));
}

function hasBody(ctx: AppContext): boolean {
  const length = ctx.request.length;
  return (length !== undefined && length > 0) || ctx.get('transfer-encoding') !== '';
}

function bodyParser(limitBytes: number) {
  const parse = koaBody({
    json: true,
    text: false,
    urlencoded: false,
    multipart: false,
    jsonLimit: limitBytes,
    jsonStrict: true,
  });
  return async (ctx: AppContext, next: Next) => {
    if (!hasBody(ctx)) {
      ctx.request.body = undefined;
      return next();
    }
    if (!isJsonType(ctx)) throw errors.unsupportedMediaType(ctx.get('content-type'));
    return parse(ctx as never, next);
  };
}

function validator(spec: RouteSpec) {
  // compiled here, at start-up, even when the handler validates: a broken schema fails the boot, not a request
  const compiledBody = spec.body && compile(spec.body, 'body');
  const body = spec.bodyValidation !== 'handler' && compiledBody;
  const query = spec.query && compile(spec.query, 'query');
  return async (ctx: AppContext, next: Next) => {
    if (query) {
      // koa's query object is read-only-ish (a getter over the querystring): validate a copy
      const q: Record<string, unknown> = { ...ctx.query };
      if (!query(q)) {
        const fe = toFieldErrors(query.errors);
        throw errors.invalidInput(`Invalid query: ${summarize(fe)}`, fe);
      }
      ctx.state.query = q;
    }
    if (spec.body) {
      if (ctx.request.body === undefined && spec.bodyRequired === false) ctx.request.body = {};
      if (ctx.request.body === undefined)
        throw spec.bodyErrorCode
          ? new AppError(400, spec.bodyErrorCode, 'A JSON body is required')
          : errors.missingBody();
      if (body && !body(ctx.request.body)) {
        const fe = toFieldErrors(body.errors);
        const message = `Invalid body: ${summarize(fe)}`;
        throw spec.bodyErrorCode
          ? new AppError(400, spec.bodyErrorCode, message, { field: fe[0]?.field, fieldErrors: fe })
          : errors.invalidInput(message, fe);
      }
    }
    return next();
  };
}

/** Mounts routes on a router, in declaration order (static paths before `/:id`). */
export function mount(router: Router<any, any>, routes: RouteSpec[], bodyLimitBytes: number): void {
  for (const spec of routes) {
    const chain = [
      async (ctx: AppContext, next: Next) => {
        ctx.state.route = spec.path;
        return next();
      },
      authenticate(spec.auth),
      bodyParser(spec.bodyLimitBytes ?? bodyLimitBytes),
      validator(spec),
      async (ctx: AppContext) => {
        await spec.handler(ctx);
      },
    ];
    (router[spec.method] as (path: string, ...mw: unknown[]) => void)(spec.path, ...chain);
  }
}

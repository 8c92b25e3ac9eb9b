import Router from '@koa/router';
import { koaBody } from 'koa-body';
import type { Next } from 'koa';
import type { AppContext } from './context';
import { authenticate } from './middleware/auth';
import type { Scope } from '../shared/auth/scopes';
import { AppError, errors, type FieldError } from '../shared/errors/catalog';
import type { ValidateFunction } from 'ajv';
import { compile, inputFailures, summarize, type JsonSchema } from '../shared/validation';
import { fingerprintOf, IdempotencyKeys, MAX_KEY_LENGTH, openResponse, sealResponse } from '../shared/idempotency/keys';

/** One keyword of a route's body, query or path schema that the input failed, as ajv reported it. */
export interface InputFailure {
  in: 'body' | 'query' | 'params';
  /** The field as the client wrote it: `productsList.0.quantity`, a query or path parameter's name, or `(body)`. */
  field: string;
  keyword: string;
  message: string;
  params: Record<string, unknown>;
}

/**
 * The refusal of the "other" area's routes (channels, customers, webhooks): every refused field
 * at once, one message each (the first keyword it failed, in the route's own words from
 * `explain`), as one 400 validation-error with fieldErrors.
 */
export function refusedFields(explain: (f: InputFailure) => string) {
  return (failures: InputFailure[]): AppError => {
    const fe: FieldError[] = [];
    for (const f of failures)
      if (!fe.some((e) => e.field === f.field)) fe.push({ field: f.field, message: explain(f) });
    const where = failures[0]?.in === 'query' ? 'query' : failures[0]?.in === 'params' ? 'path' : 'body';
    return errors.invalidInput(`Invalid ${where}: ${summarize(fe)}`, fe);
  };
}

/**
 * A rule naming the spec's code for some failures. `field` is matched segment by segment (`*`
 * matches one, a final `**` any rest); `keyword` is ajv's (`required`, `type`, `minLength`,
 * `additionalProperties`, …; `required` reports the missing field, `additionalProperties` the
 * unknown one).
 */
export interface InputRule {
  field?: string;
  keyword?: string | string[];
  code: string;
  status?: number;
  message?: string | ((failure: InputFailure) => string);
  /** Members the answer carries besides code, message and field (the AI codes' `retryable`). */
  extra?: Record<string, unknown>;
}

/** How a route answers input its schemas refuse, where the spec names its own codes. */
export interface InputErrors {
  /** The code of any refusal no rule names, and of a missing body. Default: the area's invalid-input code. */
  code?: string;
  /** A missing body, or `{}` on a route whose body schema has `minProperties: 1`. */
  missingBody?: { code: string; message: string };
  /** In order: the first rule that matches any failure gives the code and message. */
  rules?: InputRule[];
  /** The route's own rendering of the failures; wins over the rest. */
  render?: (failures: InputFailure[]) => AppError;
}

/**
 * A route is declared once, as data: path, scopes, schemas, responses and handler. Mounting it
 * wires authentication, the scope check, body parsing and ajv validation in that order, and the
 * same declaration feeds /openapi.json, so the document cannot drift from what is enforced:
 * every body, query and path parameter is validated here, from these schemas, and nowhere else.
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
  /** A route with a body schema requires a body unless this is false (an absent body is then `{}`). */
  bodyRequired?: boolean;
  /**
   * Top-level body fields whose text may be ill-formed Unicode, let through to the handler, which
   * refuses it its own way (an upload's s3Key: 403 forbidden/invalid-s3-key); anywhere else in
   * the body such text is refused 400.
   */
  keepsIllFormedText?: string[];
  /** A larger body limit than the API's default, for routes that take file contents. */
  bodyLimitBytes?: number;
  query?: JsonSchema;
  /** Schemas of the path parameters, by name; a parameter not named is a non-empty text. */
  params?: Record<string, JsonSchema>;
  /** The spec's codes for refused input (see InputErrors). */
  invalid?: InputErrors;
  responses?: Record<number, { description: string; schema?: JsonSchema; contentType?: string }>;
  /**
   * How the route honours `Idempotency-Key`: `stored`, the first successful answer is kept 24 h
   * and answered again to a retry (shared/idempotency/keys.ts); `native`, the use case itself
   * recognises a retry (a stock movement); `bound`, the key is bound to the request (another
   * request under it is 409) and the use case recognises a retry (the job found again by its key,
   * a bulk set's items by their movements' keys). A function picks one by the body. All are documented on the operation.
   */
  idempotency?: Idempotency | ((body: Record<string, unknown>) => Idempotency);
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
    return parse(ctx as never, () => {
      if (nestsDeeperThan(ctx.request.body, MAX_BODY_DEPTH))
        throw errors.invalidInput(`The body nests deeper than ${MAX_BODY_DEPTH} levels`);
      return next();
    });
  };
}

/** The deepest JSON body accepted: far beyond any real document, far below what recursion survives. */
export const MAX_BODY_DEPTH = 64;

/** Whether a parsed JSON value nests deeper than `max` (iterative: a hostile body cannot overflow the stack here). */
function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(v))
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/** A path parameter nobody declared: any non-empty text. */
const PARAM_TEXT: JsonSchema = { type: 'string', minLength: 1 };

/** The path parameters' schema, as the OpenAPI document shows it. */
export function paramSchemas(spec: RouteSpec): Record<string, JsonSchema> {
  const names = [...spec.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
  return Object.fromEntries(names.map((name) => [name, spec.params?.[name] ?? PARAM_TEXT]));
}

function matchesField(pattern: string, field: string): boolean {
  const want = pattern.split('.');
  const got = field.split('.');
  for (let i = 0; i < want.length; i++) {
    if (want[i] === '**') return true;
    if (i >= got.length || (want[i] !== '*' && want[i] !== got[i])) return false;
  }
  return want.length === got.length;
}

function matches(rule: InputRule, f: InputFailure): boolean {
  if (rule.keyword && !(Array.isArray(rule.keyword) ? rule.keyword : [rule.keyword]).includes(f.keyword)) return false;
  return rule.field === undefined || matchesField(rule.field, f.field);
}

/** The one translation of refused input into the answer: the route's rules, else its code, else the area's. */
function refusal(spec: RouteSpec, where: InputFailure['in'], failures: InputFailure[]): AppError {
  const invalid = spec.invalid;
  if (invalid?.render) return invalid.render(failures);
  const fieldErrors = failures.map(({ field, message }) => ({ field, message }));
  for (const rule of invalid?.rules ?? []) {
    const hit = failures.find((f) => matches(rule, f));
    if (!hit) continue;
    const message =
      typeof rule.message === 'function' ? rule.message(hit) : (rule.message ?? `${hit.field} ${hit.message}`);
    return new AppError(rule.status ?? 400, rule.code, message, { ...rule.extra, field: hit.field, fieldErrors });
  }
  const message = `Invalid ${where === 'params' ? 'path' : where}: ${summarize(fieldErrors)}`;
  return invalid?.code
    ? new AppError(400, invalid.code, message, { field: fieldErrors[0]?.field, fieldErrors })
    : errors.invalidInput(message, fieldErrors);
}

function failuresOf(where: InputFailure['in'], fn: ValidateFunction): InputFailure[] {
  return inputFailures(fn.errors).map((f) => ({ ...f, in: where }));
}

/** Text with a NUL byte: never a real parameter, and refused by the store's text functions. */
const hasNul = (v: unknown): boolean =>
  typeof v === 'string' ? v.includes('\u0000') : Array.isArray(v) && v.some(hasNul);

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Where a body holds text that is not well-formed Unicode (half of a UTF-16 surrogate pair, in a
 * value or a key): the store would keep U+FFFD in its place, so two different values could come
 * back as one. The path as the client wrote it (`items.0.name`); null when there is none.
 */
function illFormedAt(value: unknown, path = ''): string | null {
  const stack: [unknown, string][] = [[value, path]];
  while (stack.length) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return at || '(body)';
    } else if (v !== null && typeof v === 'object')
      for (const [k, child] of Object.entries(v)) {
        const here = at ? `${at}.${k}` : k;
        if (LONE_SURROGATE.test(k)) return here;
        stack.push([child, here]);
      }
  }
  return null;
}

/** Numbers a query coerced to infinity (`1e309`): ajv's integer and range checks let them through. */
const notFinite = (v: unknown): boolean =>
  typeof v === 'number' ? !Number.isFinite(v) : Array.isArray(v) && v.some(notFinite);

function validator(spec: RouteSpec) {
  // compiled here, at start-up: a broken schema fails the boot, not a request
  const declared = paramSchemas(spec);
  const params = compile({ type: 'object', properties: declared, required: Object.keys(declared) }, 'query');
  const query = spec.query && compile(spec.query, 'query');
  const body = spec.body && compile(spec.body, 'body');
  const textFailure = (where: InputFailure['in'], field: string, message: string): InputFailure[] => [
    { in: where, field, keyword: 'text', message, params: {} },
  ];
  return async (ctx: AppContext, next: Next) => {
    const p: Record<string, unknown> = { ...ctx.params };
    const nulParam = Object.keys(p).find((k) => hasNul(p[k]));
    if (nulParam) throw refusal(spec, 'params', textFailure('params', nulParam, 'must not contain a NUL character'));
    if (!params(p)) throw refusal(spec, 'params', failuresOf('params', params));
    if (query) {
      // koa's query object is read-only-ish (a getter over the querystring): validate a copy
      const q: Record<string, unknown> = { ...ctx.query };
      const nul = Object.keys(q).find((k) => hasNul(q[k]));
      if (nul) throw refusal(spec, 'query', textFailure('query', nul, 'must not contain a NUL character'));
      if (!query(q)) throw refusal(spec, 'query', failuresOf('query', query));
      const infinite = Object.keys(q).find((k) => notFinite(q[k]));
      if (infinite) throw refusal(spec, 'query', textFailure('query', infinite, 'must be a finite number'));
      ctx.state.query = q;
    }
    if (body) {
      if (ctx.request.body === undefined && spec.bodyRequired === false) ctx.request.body = {};
      const b = ctx.request.body;
      const empty =
        b === undefined ||
        (spec.body!.minProperties === 1 && b !== null && typeof b === 'object' && !Object.keys(b).length);
      if (empty) {
        const missing = spec.invalid?.missingBody;
        if (missing) throw new AppError(400, missing.code, missing.message);
        if (b === undefined)
          throw spec.invalid?.code
            ? new AppError(400, spec.invalid.code, 'A JSON body is required')
            : errors.missingBody();
      }
      if (!body(b)) throw refusal(spec, 'body', failuresOf('body', body));
      const kept = spec.keepsIllFormedText;
      const illFormed = illFormedAt(
        kept && b !== null && typeof b === 'object' && !Array.isArray(b)
          ? Object.fromEntries(Object.entries(b).filter(([k]) => !kept.includes(k)))
          : b,
      );
      if (illFormed)
        throw refusal(
          spec,
          'body',
          textFailure('body', illFormed, 'must be well-formed Unicode: it holds half of a UTF-16 surrogate pair'),
        );
    }
    return next();
  };
}

const KEY_TEXT = /^[\x21-\x7e]+$/;

type Idempotency = 'stored' | 'native' | 'bound';

const namesJob = (err: unknown): boolean =>
  err instanceof AppError && typeof (err.extra.details as { jobId?: unknown } | undefined)?.jobId === 'string';

/**
 * `stored` idempotency: a retry with the key answers the first run's answer; a first run keeps
 * its success. `bound`: the key is bound to the request, and the use case answers the retry.
 */
function idempotency(spec: RouteSpec) {
  return async (ctx: AppContext, next: Next) => {
    const key = ctx.get('idempotency-key');
    const mode =
      typeof spec.idempotency === 'function'
        ? spec.idempotency((ctx.request.body ?? {}) as Record<string, unknown>)
        : spec.idempotency;
    if (!mode || !key) return next();
    // one rule for every route's key, also where the use case keeps it (native)
    if (key.length > MAX_KEY_LENGTH || !KEY_TEXT.test(key))
      throw errors.invalidInput(
        `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters (a UUID is a good one)`,
      );
    if (mode === 'native') return next();
    const tenantDb = ctx.state.tenantDb;
    if (!tenantDb) return next();
    const keys = new IdempotencyKeys(tenantDb);
    // the route and its parameters, not the URL: /v1/x and /x are one request
    const fingerprint = fingerprintOf(
      ctx.method,
      `${spec.path} ${JSON.stringify(ctx.params)}`,
      ctx.request.body ?? null,
    );
    if (mode === 'bound') {
      const { made, since } = await keys.bind(key, fingerprint);
      ctx.state.jobKey = `${key}@${since.getTime()}`;
      const undo = () => (made ? keys.unbind(key, fingerprint).catch(() => undefined) : undefined);
      try {
        await next();
      } catch (err) {
        // an answer that names its job (a publication whose products failed) is that job's: the
        // key stays bound to this request, as the job stays found by it; only a refusal frees it
        if (!namesJob(err)) await undo();
        throw err;
      }
      if (ctx.status < 200 || ctx.status >= 300) await undo();
      return;
    }
    const claim = await keys.claim(key, fingerprint);
    if (claim.kind === 'replay') {
      const kept = openResponse(claim.response, ctx.deps.config.secretsKey);
      ctx.status = kept.status;
      ctx.type = 'application/json';
      ctx.body = kept.json;
      if (kept.location) ctx.set('Location', kept.location);
      ctx.set('Idempotent-Replayed', 'true');
      return;
    }
    ctx.state.keyedRun = { runId: claim.runId, startedAt: claim.startedAt };
    try {
      await next();
    } catch (err) {
      await keys.release(key, fingerprint).catch(() => undefined);
      throw err;
    }
    const ok = ctx.status >= 200 && ctx.status < 300 && ctx.body !== undefined && typeof ctx.body === 'object';
    if (ok)
      await keys.keep(
        key,
        fingerprint,
        sealResponse(
          { status: ctx.status, json: JSON.stringify(ctx.body), location: ctx.response.get('Location') || null },
          ctx.deps.config.secretsKey,
        ),
      );
    else await keys.release(key, fingerprint);
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
      idempotency(spec),
      async (ctx: AppContext) => {
        await spec.handler(ctx);
      },
    ];
    (router[spec.method] as (path: string, ...mw: unknown[]) => void)(spec.path, ...chain);
  }
}

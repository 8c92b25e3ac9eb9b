import type { Next } from 'koa';
import type { AppContext } from '../context';
import { AppError, errors, isAppError, type Area } from '../../shared/errors/catalog';
import { carriedAppError } from '../../shared/errors/failures';

/** Which envelope and codes a path gets. `/v1` is the same API under the spec's versioned base. */
export function areaOf(path: string): Area {
  // the router matches paths case-insensitively, so /ORDERS is the orders area too
  const first =
    path
      .toLowerCase()
      .replace(/^\/v1(?=\/|$)/, '')
      .split('/')[1] ?? '';
  if (first === 'orders') return 'orders';
  if (first === 'products') return 'products';
  if (first === 'inventory') return 'inventory';
  if (first === 'locations') return 'locations';
  return 'other';
}

/** Errors raised by the body parser (co-body / raw-body) carry `type` and `status`. */
function fromParserError(err: unknown, limit: number): AppError | null {
  const e = err as { type?: string; status?: number; name?: string; code?: unknown } | null;
  if (!e || typeof e !== 'object') return null;
  // a gzip or deflate body that does not decompress (zlib's Z_DATA_ERROR, Z_BUF_ERROR, …); koa-body
  // turns the non-Error zlib throws into an Error whose message is that object as JSON
  // (brotli's codes are ERR__ERROR_…)
  const code = typeof e.code === 'string' ? e.code : /"code":"([A-Z0-9_]+)"/.exec((err as Error).message ?? '')?.[1];
  if (code && /^(Z_|ERR__ERROR_)/.test(code))
    return errors.invalidInput('Request body does not decompress as its Content-Encoding says');
  // an encoding the parser does not know (inflation answers 415 without a type)
  if (e.status === 415 && !e.type) return errors.unsupportedMediaType('unsupported content encoding');
  // co-body reports bad JSON as a SyntaxError with status 400 and no type
  // never the parser's own text: it quotes the body, which may hold a secret
  if (e.name === 'SyntaxError' && e.status === 400) {
    const message = (err as Error).message;
    // the JSON parser's refusal of prototype keys quotes nothing; keep it, it says what to fix
    if (/forbidden prototype property/i.test(message))
      return errors.invalidJson(`Request body is not valid JSON: ${message}`);
    // strict parsing takes objects and arrays only: `"text"`, `42` or `null` is JSON, just not a body
    if (/only supports object and array/.test(message))
      return errors.invalidJson('Request body must be a JSON object (or array), not a single value');
    const at = /position (\d+)/.exec(message)?.[1];
    return errors.invalidJson(`Request body is not valid JSON${at ? ` (at position ${at})` : ''}`);
  }
  switch (e.type) {
    case 'entity.parse.failed':
      return errors.invalidJson();
    case 'entity.too.large':
      return errors.payloadTooLarge(limit);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return errors.unsupportedMediaType('unsupported charset');
    case 'request.aborted':
    case 'request.size.invalid':
      return errors.invalidInput('Request body is incomplete');
    default:
      return null;
  }
}

export function render(ctx: AppContext, err: AppError): void {
  const code = err.codeFor(ctx.state.area);
  ctx.status = err.status;
  for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
  ctx.body =
    ctx.state.area === 'orders'
      ? { error: { code, message: err.message } }
      : { code, message: err.message, ...err.extra };
}

/** First middleware: every failure leaves as the area's error envelope; unknown failures are 500s and logged. */
export function errorHandler() {
  return async (ctx: AppContext, next: Next) => {
    ctx.state.area = areaOf(ctx.path);
    try {
      await next();
      if (ctx.body === undefined && ctx.status === 404) throw errors.routeNotFound(ctx.method, ctx.path);
      if (ctx.body === undefined && ctx.status === 405)
        throw errors.methodNotAllowed(ctx.method, ctx.path, ctx.response.get('Allow'));
    } catch (err) {
      const limit = (err as { limit?: number } | null)?.limit ?? ctx.deps.config.bodyLimitBytes;
      // a refusal raised inside a workflow or activity comes back wrapped; it is answered as if raised here
      const known = isAppError(err) ? err : (carriedAppError(err) ?? fromParserError(err, limit));
      if (known) return render(ctx, known);
      ctx.deps.log.error({ err, requestId: ctx.state.requestId }, 'unhandled error');
      render(ctx, errors.internal());
    }
  };
}

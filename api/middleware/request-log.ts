import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import type { AppContext } from '../context';
import { httpRequestDuration } from '../../shared/metrics/metrics';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Outermost middleware: a request id (the client's X-Request-Id when sane) and one log line per request. */
export function requestLog() {
  return async (ctx: AppContext, next: Next) => {
    const started = process.hrtime.bigint();
    const given = ctx.get('x-request-id');
    ctx.state.requestId = SAFE_ID.test(given) ? given : randomUUID();
    ctx.set('X-Request-Id', ctx.state.requestId);
    try {
      await next();
    } finally {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      // a path no route matched is one series, whatever was asked
      httpRequestDuration.observe(
        { route: ctx.state.route ?? '(unmatched)', method: ctx.method, status: String(ctx.status) },
        durationMs / 1000,
      );
      ctx.deps.log.info(
        {
          requestId: ctx.state.requestId,
          tenantId: ctx.state.principal?.tenantId,
          method: ctx.method,
          route: ctx.state.route ?? null,
          path: ctx.path,
          status: ctx.status,
          durationMs: Math.round(durationMs * 100) / 100,
        },
        'request',
      );
    }
  };
}

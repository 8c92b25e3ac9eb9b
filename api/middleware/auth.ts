import type { Next } from 'koa';
import type { AppContext } from '../context';
import type { RouteSpec } from '../route';
import { errors } from '../../shared/errors/catalog';
import { TenantDb } from '../../shared/db/tenant-db';

// the scheme is a case-insensitive token (RFC 9110 §11.1), then one or more spaces (RFC 6750 §2.1)
const BEARER = /^Bearer +([A-Za-z0-9_-]{16,200})$/i;

export function bearerOf(ctx: AppContext): string {
  const match = BEARER.exec(ctx.get('authorization'));
  if (!match)
    throw errors.invalidToken(
      ctx.get('authorization')
        ? 'Malformed Authorization header; expected "Bearer <key>"'
        : 'Missing Authorization header',
    );
  return match[1];
}

/**
 * Resolves the bearer credential to a tenant and checks the route's scopes. Every failure is
 * decided here, before the body is read: 401 for a missing, malformed, unknown or revoked
 * credential; 403 for a suspended tenant or a missing scope.
 */
export function authenticate(auth: RouteSpec['auth']) {
  return async (ctx: AppContext, next: Next) => {
    if (auth === 'public' || auth === 'refresh-token') return next();
    const result = await ctx.deps.tenancy.authenticate(bearerOf(ctx));
    if (result === 'invalid') throw errors.invalidToken('Unknown or revoked credentials');
    if (result === 'suspended') throw errors.permissionDenied('The tenant is suspended');
    const missing = auth.scopes.filter((s) => !result.scopes.has(s));
    if (missing.length) throw errors.permissionDenied(`This key lacks the scope ${missing.join(', ')}`);
    ctx.state.principal = result;
    ctx.state.tenantDb = new TenantDb(ctx.deps.db, result.tenantId);
    return next();
  };
}

/**
 * Permission scopes, `<area>:<action>`. The spec's list, plus the read and create scopes it
 * leaves unnamed (orders:read for order reads, and the areas API.md adds).
 */
export const SCOPES = [
  'orders:read',
  'orders:create',
  'orders:update',
  'products:read',
  'products:create',
  'products:update',
  'products:delete',
  'products:import',
  'products:export',
  'inventory:read',
  'inventory:update',
  'inventory:adjust',
  'inventory:transfer',
  'inventory:count',
  'inventory:manage',
  'locations:read',
  'locations:create',
  'locations:update',
  'locations:delete',
  'channels:read',
  'channels:update',
  'customers:read',
  'customers:update',
  'webhooks:read',
  'webhooks:update',
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** Parses a comma-separated list; `all` stands for every scope. Unknown names, or none, are an error. */
export function parseScopes(list: string): Scope[] {
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!names.length) throw new Error(`No scope named: give at least one (${SCOPES.join(', ')}) or all`);
  // a typo beside `all` is still a typo: refused, not swallowed by the wider grant
  const unknown = names.filter((n) => n !== 'all' && !isScope(n));
  if (unknown.length) throw new Error(`Unknown scope(s): ${unknown.join(', ')}. Known: ${SCOPES.join(', ')}`);
  if (names.includes('all')) return [...SCOPES];
  return names as Scope[];
}

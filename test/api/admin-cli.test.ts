import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expectError } from '../helpers/expect-error';
import { http, testStack } from '../helpers/stack';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const { apiUrl, env } = testStack();

/** `npm run admin -- …` as an operator runs it (tsx scripts/admin.ts), against the suite's database. */
async function admin(...args: string[]): Promise<any> {
  const { stdout } = await run(
    join(ROOT, 'node_modules', '.bin', 'tsx'),
    [join(ROOT, 'scripts', 'admin.ts'), ...args],
    {
      cwd: ROOT,
      env: { ...process.env, MONGODB_URI: env.MONGODB_URI, MONGODB_DB: env.MONGODB_DB },
    },
  );
  return JSON.parse(stdout);
}

async function adminFails(...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    await admin(...args);
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
  throw new Error(`admin ${args.join(' ')} succeeded`);
}

test('create a tenant, issue a key that works, list it without its secret, revoke it → 401', async () => {
  const tenant = await admin('tenant', 'create', '--name', 'Acme', '--tax-rate', '0.16');
  expect(tenant).toMatchObject({ name: 'Acme', status: 'active', settings: { taxRate: 0.16, timeZone: 'UTC' } });

  const issued = await admin(
    'key',
    'issue',
    '--tenant',
    tenant._id,
    '--scopes',
    'products:read,orders:read',
    '--name',
    'ci',
  );
  expect(issued.key).toMatch(/^bok_/);
  expect(issued.scopes).toEqual(['products:read', 'orders:read']);
  const token = await http(apiUrl, 'POST', '/auth/token', { key: issued.key });
  expect(token.status).toBe(200);
  expect(token.body.tenantId).toBe(tenant._id);

  const listed = await admin('key', 'list', '--tenant', tenant._id);
  expect(listed).toHaveLength(1);
  expect(listed[0]).toMatchObject({ keyId: issued.keyId, name: 'ci', revokedAt: null });
  expect(JSON.stringify(listed)).not.toContain(issued.key);

  const revoked = await admin('key', 'revoke', issued.keyId);
  expect(revoked.revokedAt).not.toBeNull();
  expectError(await http(apiUrl, 'POST', '/auth/token', { key: issued.key }), 401, 'auth:invalid_token');
});

test('a tenant created with a time zone keeps it, spelled as the time zone data spells it', async () => {
  const tenant = await admin('tenant', 'create', '--name', 'Taquería', '--time-zone', 'america/mexico_city');
  expect(tenant.settings).toEqual({ taxRate: 0, timeZone: 'America/Mexico_City' });
  const listed = (await admin('tenant', 'list')).find((t: { _id: string }) => t._id === tenant._id);
  expect(listed.settings.timeZone).toBe('America/Mexico_City');
});

test('suspend and resume a tenant', async () => {
  const tenant = await admin('tenant', 'create', '--name', 'Suspendable');
  const issued = await admin('key', 'issue', '--tenant', tenant._id, '--scopes', 'all');
  expect(issued.scopes).toContain('inventory:manage');
  expect((await admin('tenant', 'suspend', tenant._id)).status).toBe('suspended');
  expectError(await http(apiUrl, 'POST', '/auth/token', { key: issued.key }), 403, 'auth:permission_denied');
  expect((await admin('tenant', 'resume', tenant._id)).status).toBe('active');
  expect((await http(apiUrl, 'POST', '/auth/token', { key: issued.key })).status).toBe(200);
  const tenants = await admin('tenant', 'list');
  expect(tenants.map((t: { _id: string }) => t._id)).toContain(tenant._id);
});

test('bad usage exits 2 with a message and the usage text', async () => {
  const unknownScope = await adminFails('key', 'issue', '--tenant', 'ten_x', '--scopes', 'orders:fly');
  expect(unknownScope.code).toBe(2);
  expect(unknownScope.stderr).toContain('Unknown scope(s): orders:fly');
  const noTenant = await adminFails('key', 'issue', '--tenant', 'ten_missing', '--scopes', 'all');
  expect(noTenant.code).toBe(1);
  expect(noTenant.stderr).toContain('No tenant ten_missing');
  const badZone = await adminFails('tenant', 'create', '--name', 'Nowhere', '--time-zone', 'Mars/Olympus_Mons');
  expect(badZone.code).toBe(2);
  expect(badZone.stderr).toContain('--time-zone must be an IANA time zone name');
  const unknown = await adminFails('tenant', 'explode');
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain('npm run admin --');
});

test('a mistyped option is bad usage (exit 2, usage text); an empty scope list issues no key', async () => {
  const tenant = await admin('tenant', 'create', '--name', 'CLI typos');
  const typo = await adminFails('key', 'issue', '--tenant', tenant._id, '--scope', 'all');
  expect(typo.code).toBe(2);
  expect(typo.stderr).toContain("Unknown option '--scope'");
  expect(typo.stderr).toContain('npm run admin --');
  const empty = await adminFails('key', 'issue', '--tenant', tenant._id, '--scopes', ',');
  expect(empty.code).toBe(2);
  expect(empty.stderr).toContain('No scope named');
  expect(await admin('key', 'list', '--tenant', tenant._id)).toEqual([]);
});

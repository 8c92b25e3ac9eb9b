import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { http, testStack } from '../helpers/stack';

/**
 * The admin CLI refuses bad input before writing anything: bad usage (an unknown scope even beside
 * `all`, an extra id, a blank name or number) exits 2; an id that names nothing exits 1.
 */
const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const { apiUrl, env } = testStack();

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** `npm run admin -- …` as an operator runs it, never throwing: the exit code, stdout and stderr. */
async function cli(...args: string[]): Promise<Ran> {
  try {
    const { stdout, stderr } = await run(
      join(ROOT, 'node_modules', '.bin', 'tsx'),
      [join(ROOT, 'scripts', 'admin.ts'), ...args],
      { cwd: ROOT, env: { ...process.env, MONGODB_URI: env.MONGODB_URI, MONGODB_DB: env.MONGODB_DB } },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function admin(...args: string[]): Promise<any> {
  const r = await cli(...args);
  if (r.code !== 0) throw new Error(`admin ${args.join(' ')} → exit ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const tokenStatus = async (key: string) => (await http(apiUrl, 'POST', '/auth/token', { key })).status;

test('an unknown scope beside "all" is refused (exit 2), not issued as a key with every scope', async () => {
  const tenant = await admin('tenant', 'create', '--name', 'Review scopes');
  const r = await cli('key', 'issue', '--tenant', tenant._id, '--scopes', 'all,orders:fly');
  // "products:read,products:fly" is refused with "Unknown scope(s): products:fly"; "all,orders:fly" must be too
  expect({ code: r.code, refused: r.stderr.includes('Unknown scope(s): orders:fly') }).toEqual({
    code: 2,
    refused: true,
  });
  expect(await admin('key', 'list', '--tenant', tenant._id)).toEqual([]);
});

test('key revoke with two key ids does not exit 0 while leaving the second key working', async () => {
  const tenant = await admin('tenant', 'create', '--name', 'Review revoke two');
  const a = await admin('key', 'issue', '--tenant', tenant._id, '--scopes', 'products:read');
  const b = await admin('key', 'issue', '--tenant', tenant._id, '--scopes', 'products:read');
  const r = await cli('key', 'revoke', a.keyId, b.keyId);
  const bStatus = await tokenStatus(b.key);
  // either the extra argument is bad usage (exit 2), or both keys are revoked; never a silent success
  // that leaves the second key admitting requests
  if (r.code === 0) expect({ code: r.code, secondKeyToken: bStatus }).toEqual({ code: 0, secondKeyToken: 401 });
  else expect(r.code).toBe(2);
});

test('key list for a tenant that does not exist fails like key issue does (exit 1, "No tenant"), not an empty list', async () => {
  const r = await cli('key', 'list', '--tenant', 'ten_doesnotexist');
  expect({ code: r.code, message: r.stderr.includes('No tenant ten_doesnotexist') }).toEqual({
    code: 1,
    message: true,
  });
});

test('blank numbers are refused (exit 2), not read as 0: --tax-rate "", --ai-daily-tokens "" / " "', async () => {
  const tax = await cli('tenant', 'create', '--name', 'Review blank tax', '--tax-rate', '');
  const budget = await cli('tenant', 'create', '--name', 'Review blank budget', '--ai-daily-tokens', '');
  const tenant = await admin('tenant', 'create', '--name', 'Review budget set', '--ai-daily-tokens', '5000');
  const blankSet = await cli('tenant', 'ai-budget', tenant._id, '--ai-daily-tokens', ' ');
  const after = (await admin('tenant', 'list')).find((t: { _id: string }) => t._id === tenant._id);
  expect({
    taxCode: tax.code,
    budgetCode: budget.code,
    blankSetCode: blankSet.code,
    budgetAfter: after.settings.aiDailyTokenBudget,
  }).toEqual({ taxCode: 2, budgetCode: 2, blankSetCode: 2, budgetAfter: 5000 });
});

test('a blank tenant name is refused (exit 2) as a missing one is', async () => {
  const before = (await admin('tenant', 'list')).length;
  const r = await cli('tenant', 'create', '--name', '   ');
  expect(r.code).toBe(2);
  expect((await admin('tenant', 'list')).length).toBe(before);
});

test('an id that names nothing is a failure (exit 1) as for key issue, not bad usage (exit 2 with the usage text)', async () => {
  // `key issue --tenant ten_missing` exits 1 ("No tenant ten_missing"); the other commands taking an id disagree
  const issue = await cli('key', 'issue', '--tenant', 'ten_missing', '--scopes', 'all');
  const revoke = await cli('key', 'revoke', 'key_missing');
  const suspend = await cli('tenant', 'suspend', 'ten_missing');
  expect({ issue: issue.code, revoke: revoke.code, suspend: suspend.code }).toEqual({
    issue: 1,
    revoke: 1,
    suspend: 1,
  });
});

test.each([['   '], ['']])('key issue --name %j is bad usage (exit 2) and issues no key', async (name) => {
  const tenant = await admin('tenant', 'create', '--name', 'Blank key name');
  const r = await cli('key', 'issue', '--tenant', tenant._id, '--scopes', 'products:read', '--name', name);
  const keys = await admin('key', 'list', '--tenant', tenant._id);
  expect({ code: r.code, keys: keys.length }).toEqual({ code: 2, keys: 0 });
});

import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseScopes } from '../shared/auth/scopes';
import { canonicalTimeZone, DEFAULT_TIME_ZONE, Tenancy } from '../shared/auth/tenancy';
import { connectMongo, ensureIndexes } from '../shared/db/mongo';
import { allCollections } from '../shared/collections';

const USAGE = `npm run admin -- <command>

  tenant create --name <name> [--tax-rate <0..1>] [--time-zone <IANA name, default UTC>]
                [--ai-daily-tokens <n>]
  tenant ai-budget <tenantId> --ai-daily-tokens <n|default>
  tenant list
  tenant suspend <tenantId>
  tenant resume <tenantId>
  key issue --tenant <tenantId> --scopes <scope,scope|all> [--name <label>]
  key list --tenant <tenantId>
  key revoke <keyId>

Connects to MONGODB_URI (MONGODB_DB, default backoffice); without it, to the stack that
\`npm start\` is running. Prints JSON. An issued key is printed once and never stored.`;

function mongoTarget(): { uri: string; db: string } {
  if (process.env.MONGODB_URI) return { uri: process.env.MONGODB_URI, db: process.env.MONGODB_DB ?? 'backoffice' };
  const file = join(resolve(process.env.DATA_DIR ?? join(__dirname, '..', '.data')), 'stack.json');
  if (existsSync(file)) {
    const { env } = JSON.parse(readFileSync(file, 'utf8')) as { env: Record<string, string> };
    return { uri: env.MONGODB_URI, db: env.MONGODB_DB };
  }
  throw new Error('No database: set MONGODB_URI, or start the service with `npm start` first.');
}

class UsageError extends Error {}

/** What a command names does not exist: a failure (exit 1), not bad usage. */
class NotFound extends Error {}

/** A scope list that names no scope, or an unknown one, is bad usage. */
function scopesOf(list: string) {
  try {
    return parseScopes(list);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

// Number('') and Number(' ') are 0: a blank value must not pass as one
function tokens(text: string): number {
  const n = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n)) throw new UsageError(`--ai-daily-tokens must be a whole number of tokens; got ${text}`);
  return n;
}

function taxRateOf(text: string | undefined): number {
  const n = text === undefined ? 0 : text.trim() === '' ? NaN : Number(text);
  if (!(n >= 0 && n <= 1)) throw new UsageError('--tax-rate must be a number from 0 to 1');
  return n;
}

/** How many words each command takes (noun, verb, and an id where it names one). */
const WORDS: Record<string, number> = {
  'tenant create': 2,
  'tenant ai-budget': 3,
  'tenant list': 2,
  'tenant suspend': 3,
  'tenant resume': 3,
  'key issue': 2,
  'key list': 2,
  'key revoke': 3,
};

/** The command line as parseArgs reads it; what it refuses (an unknown option) is bad usage. */
function parsed(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        'tax-rate': { type: 'string' },
        'time-zone': { type: 'string' },
        'ai-daily-tokens': { type: 'string' },
        tenant: { type: 'string' },
        scopes: { type: 'string' },
      },
    });
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS_')) throw new UsageError((err as Error).message);
    throw err;
  }
}

async function run(tenancy: Tenancy, argv: string[]): Promise<unknown> {
  const { values, positionals } = parsed(argv);
  const [noun, verb, id] = positionals;
  const words = WORDS[`${noun} ${verb}`];
  // `key revoke a b` must not revoke a alone and report success
  if (words !== undefined && positionals.length > words)
    throw new UsageError(`Unexpected argument(s): ${positionals.slice(words).join(' ')}`);
  const need = (value: string | undefined, what: string): string => {
    if (value === undefined || value.trim() === '') throw new UsageError(`Missing ${what}`);
    return value;
  };
  const found = <T>(value: T | null, what: string): T => {
    if (!value) throw new NotFound(`No ${what}`);
    return value;
  };
  switch (`${noun} ${verb}`) {
    case 'tenant create': {
      const taxRate = taxRateOf(values['tax-rate']);
      const timeZone = canonicalTimeZone(values['time-zone'] ?? DEFAULT_TIME_ZONE);
      if (!timeZone)
        throw new UsageError(
          `--time-zone must be an IANA time zone name (America/Mexico_City, UTC, …); got ${values['time-zone']}`,
        );
      const aiDailyTokenBudget =
        values['ai-daily-tokens'] === undefined ? undefined : tokens(values['ai-daily-tokens']);
      return tenancy.createTenant(need(values.name, '--name').trim(), { taxRate, timeZone, aiDailyTokenBudget });
    }
    case 'tenant ai-budget': {
      const given = need(values['ai-daily-tokens'], '--ai-daily-tokens');
      return found(
        await tenancy.setAiDailyTokenBudget(need(id, 'tenant id'), given === 'default' ? null : tokens(given)),
        `tenant ${id}`,
      );
    }
    case 'tenant list':
      return tenancy.listTenants();
    case 'tenant suspend':
      return found(await tenancy.setTenantStatus(need(id, 'tenant id'), 'suspended'), `tenant ${id}`);
    case 'tenant resume':
      return found(await tenancy.setTenantStatus(need(id, 'tenant id'), 'active'), `tenant ${id}`);
    case 'key issue':
      return tenancy.issueKey(
        need(values.tenant, '--tenant'),
        scopesOf(need(values.scopes, '--scopes')),
        values.name === undefined ? undefined : need(values.name, '--name').trim(),
      );
    case 'key list': {
      const tenantId = need(values.tenant, '--tenant');
      found(await tenancy.getTenant(tenantId), `tenant ${tenantId}`);
      return tenancy.listKeys(tenantId);
    }
    case 'key revoke':
      return found(await tenancy.revokeKey(need(id, 'key id')), `key ${id}`);
    default:
      throw new UsageError(noun ? `Unknown command: ${positionals.join(' ')}` : 'No command given');
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.length === 0 || argv[0] === 'help' || argv.includes('--help')) {
    console.log(USAGE);
    return;
  }
  const target = mongoTarget();
  const mongo = await connectMongo(target.uri, target.db);
  try {
    await ensureIndexes(mongo.db, allCollections);
    const result = await run(new Tenancy(mongo.db), argv);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await mongo.client.close();
  }
}

main().catch((err) => {
  console.error(`error: ${err instanceof Error ? err.message : err}`);
  if (err instanceof UsageError) console.error(`\n${USAGE}`);
  process.exit(err instanceof UsageError ? 2 : 1);
});

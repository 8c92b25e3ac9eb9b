import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SCOPES } from '../shared/auth/scopes';
import { Tenancy } from '../shared/auth/tenancy';
import { connectMongo, ensureIndexes } from '../shared/db/mongo';
import { allCollections } from '../shared/collections';
import { startStack, type Ports } from './stack/stack';

/**
 * `npm start`: the whole service on loopback with its data in .data/, plus a development tenant
 * and key (created on the first start, reused after). Ctrl-C or SIGTERM stops every process.
 */
const ROOT = resolve(__dirname, '..');
const DATA = resolve(process.env.DATA_DIR ?? join(ROOT, '.data'));
const CREDENTIALS = join(DATA, 'dev-credentials.json');
const STACK_FILE = join(DATA, 'stack.json');

/** Each port of the embedded stack can be moved with an environment variable. */
const PORT_ENV: Record<keyof Ports, string> = {
  api: 'PORT',
  temporal: 'TEMPORAL_PORT',
  temporalUi: 'TEMPORAL_UI_PORT',
  temporalHttp: 'TEMPORAL_HTTP_PORT',
  temporalMetrics: 'TEMPORAL_METRICS_PORT',
  mongodb: 'MONGODB_PORT',
  s3: 'S3_PORT',
  s3Console: 'S3_CONSOLE_PORT',
};

interface DevCredentials {
  apiUrl: string;
  apiKey: string;
  tenantId: string;
  temporalUiUrl: string | null;
}

async function devTenant(mongodbUri: string, dbName: string): Promise<{ apiKey: string; tenantId: string }> {
  const mongo = await connectMongo(mongodbUri, dbName);
  try {
    await ensureIndexes(mongo.db, allCollections);
    const tenancy = new Tenancy(mongo.db);
    if (existsSync(CREDENTIALS)) {
      const saved = JSON.parse(readFileSync(CREDENTIALS, 'utf8')) as DevCredentials;
      const principal = await tenancy.authenticate(saved.apiKey);
      if (typeof principal === 'object' && principal.tenantId === saved.tenantId) return saved;
    }
    const tenant = await tenancy.createTenant('Development');
    const key = await tenancy.issueKey(tenant._id, [...SCOPES], 'development');
    return { apiKey: key.key, tenantId: tenant._id };
  } finally {
    await mongo.client.close();
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  mkdirSync(DATA, { recursive: true });
  const ports: Partial<Ports> = {};
  for (const [name, env] of Object.entries(PORT_ENV) as [keyof Ports, string][]) {
    if (process.env[env]) ports[name] = Number(process.env[env]);
  }
  const stack = await startStack({ dataDir: DATA, ports, withApp: true });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping …`);
    await stack.stop();
    rmSync(STACK_FILE, { force: true });
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  try {
    const { apiKey, tenantId } = await devTenant(stack.env.MONGODB_URI, stack.env.MONGODB_DB);
    const credentials: DevCredentials = { apiUrl: stack.apiUrl!, apiKey, tenantId, temporalUiUrl: stack.temporalUiUrl };
    writeFileSync(CREDENTIALS, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 });
    writeFileSync(STACK_FILE, JSON.stringify({ env: stack.env, pid: process.pid }, null, 2) + '\n', { mode: 0o600 });
    console.log(
      [
        '',
        `Back office ready in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        `  API          ${credentials.apiUrl}   (OpenAPI: ${credentials.apiUrl}/openapi.json)`,
        `  API key      ${apiKey}   (tenant ${tenantId}, every scope)`,
        `  Temporal UI  ${credentials.temporalUiUrl ?? '(external Temporal: see your server)'}`,
        `  Saved to     ${CREDENTIALS}`,
        `  Logs         ${join(DATA, 'logs')}`,
        '',
        'Ctrl-C stops everything.',
      ].join('\n'),
    );
  } catch (err) {
    console.error(err);
    await stop('error');
  }
  // A child that dies on its own takes the stack down, rather than leaving half a service.
  for (const proc of stack.procs) {
    void proc.exited.then((code) => {
      if (!stopping) {
        console.error(`${proc.name} exited (code ${code}); see ${proc.logFile}`);
        void stop('child exit');
      }
    });
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});

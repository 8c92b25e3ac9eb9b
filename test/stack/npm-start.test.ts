import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, portOpen } from '../../scripts/stack/process';
import { http } from '../helpers/stack';

/**
 * `npm start` as a user runs it (tsx scripts/start.ts), on free ports and a temporary data
 * directory so it never meets a developer's running stack: ready with credentials, a second
 * start reuses tenant, key and data, and SIGTERM stops every process it started.
 */
const ROOT = join(__dirname, '..', '..');
jest.setTimeout(180_000);

const PORT_ENV = [
  'PORT',
  'TEMPORAL_PORT',
  'TEMPORAL_UI_PORT',
  'TEMPORAL_HTTP_PORT',
  'TEMPORAL_METRICS_PORT',
  'MONGODB_PORT',
  'S3_PORT',
  'S3_CONSOLE_PORT',
];

async function startOnce(
  env: Record<string, string>,
): Promise<{ stop: () => Promise<number | null>; output: () => string }> {
  const child = spawn(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'scripts', 'start.ts')], {
    cwd: ROOT,
    // only the variables a user would have: no external addresses, so every server is embedded
    env: { PATH: process.env.PATH!, HOME: process.env.HOME!, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (out.includes('Ctrl-C stops everything')) {
        clearInterval(timer);
        resolve();
      }
    }, 100);
    void exited.then(() => {
      clearInterval(timer);
      reject(new Error(`npm start exited early:\n${out}`));
    });
  });
  return {
    output: () => out,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

test('npm start: ready with credentials; restart reuses them and the data; SIGTERM stops everything', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'backoffice-start-'));
  const env: Record<string, string> = { DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  for (const name of PORT_ENV) env[name] = String(await freePort());
  try {
    const first = await startOnce(env);
    const creds = JSON.parse(readFileSync(join(dataDir, 'dev-credentials.json'), 'utf8'));
    expect(creds).toEqual({
      apiUrl: `http://127.0.0.1:${env.PORT}`,
      apiKey: expect.stringMatching(/^bok_/),
      tenantId: expect.stringMatching(/^ten_/),
      temporalUiUrl: `http://127.0.0.1:${env.TEMPORAL_UI_PORT}`,
    });
    expect(first.output()).toContain(creds.apiKey);
    expect(first.output()).toContain(creds.temporalUiUrl);
    const token = await http(creds.apiUrl, 'POST', '/auth/token', { key: creds.apiKey });
    expect(token.status).toBe(200);
    expect((await fetch(creds.temporalUiUrl)).status).toBe(200);

    expect(await first.stop()).toBe(0);
    for (const name of PORT_ENV.filter((n) => n !== 'S3_CONSOLE_PORT' && n !== 'TEMPORAL_HTTP_PORT')) {
      expect({ name, open: await portOpen(Number(env[name])) }).toEqual({ name, open: false });
    }

    const second = await startOnce(env);
    const again = JSON.parse(readFileSync(join(dataDir, 'dev-credentials.json'), 'utf8'));
    expect(again).toEqual(creds);
    // the key is still in the database: the data outlived the restart
    const second_token = await http(creds.apiUrl, 'POST', '/auth/token', { key: creds.apiKey });
    expect(second_token.status).toBe(200);
    expect(second_token.body.tenantId).toBe(creds.tenantId);
    expect(await second.stop()).toBe(0);
    expect(await portOpen(Number(env.PORT))).toBe(false);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

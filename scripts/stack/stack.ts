import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { MongoClient } from 'mongodb';
import { createS3Client, ensureBucket } from '../../shared/s3/client';
import { ensureServerBuilt, SERVERS } from './servers';
import { freePort, httpOk, startNodeProcess, startProcess, waitFor, WORKER_NODE_FLAGS, type Proc } from './process';

/**
 * The whole service on loopback: the embedded servers for every role whose address is not given
 * in the environment, then our worker and API. Used by `npm start` (fixed ports, data kept in
 * .data/) and by the test suite (free ports, a temporary data directory).
 */
export interface StackOptions {
  dataDir: string;
  /** 'free' picks free ports for everything; otherwise the given ports (defaults for the rest). */
  ports: 'free' | Partial<Ports>;
  /** Start our worker and API processes too (false: servers only). */
  withApp: boolean;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

export interface Ports {
  api: number;
  temporal: number;
  temporalUi: number;
  temporalHttp: number;
  temporalMetrics: number;
  mongodb: number;
  s3: number;
  s3Console: number;
}

const DEFAULT_PORTS: Ports = {
  api: 3000,
  temporal: 7233,
  temporalUi: 8233,
  temporalHttp: 7243,
  temporalMetrics: 7244,
  mongodb: 27117,
  s3: 9100,
  s3Console: 9101,
};

export interface Stack {
  /** The environment our processes run with: every address and credential (see shared/config.ts). */
  env: Record<string, string>;
  apiUrl: string | null;
  temporalUiUrl: string | null;
  procs: Proc[];
  /** Restarts one of our processes (worker or api), e.g. after a test killed it. */
  restart(name: 'worker' | 'api'): Promise<Proc>;
  stop(): Promise<void>;
}

const ROOT = resolve(__dirname, '..', '..');

interface Secrets {
  s3AccessKey: string;
  s3SecretKey: string;
  kmsKey: string;
  /** SECRETS_KEY of our processes (shared/config.ts). */
  secretsKey: string;
}

/** Credentials of the embedded MinIO, made once per data directory so a second start reuses its data. */
function secretsFor(dataDir: string): Secrets {
  const file = join(dataDir, 'secrets.json');
  const made: Secrets = {
    s3AccessKey: `bo${randomBytes(8).toString('hex')}`,
    s3SecretKey: randomBytes(24).toString('base64url'),
    kmsKey: `backoffice-key:${randomBytes(32).toString('base64')}`,
    secretsKey: randomBytes(32).toString('base64url'),
  };
  // a data directory from before a secret existed keeps what it has and gains the new one
  const secrets: Secrets = existsSync(file)
    ? { ...made, ...(JSON.parse(readFileSync(file, 'utf8')) as Partial<Secrets>) }
    : made;
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

async function resolvePorts(spec: StackOptions['ports']): Promise<Ports> {
  if (spec !== 'free') return { ...DEFAULT_PORTS, ...spec };
  const ports = {} as Ports;
  for (const key of Object.keys(DEFAULT_PORTS) as (keyof Ports)[]) ports[key] = await freePort();
  return ports;
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const given = opts.env ?? process.env;
  const dataDir = resolve(opts.dataDir);
  const logDir = join(dataDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const ports = await resolvePorts(opts.ports);
  const procs: Proc[] = [];
  const stopAll = async () => {
    for (const p of [...procs].reverse()) await p.stop();
  };

  try {
    const env: Record<string, string> = {
      MONGODB_DB: given.MONGODB_DB ?? 'backoffice',
      TEMPORAL_NAMESPACE: given.TEMPORAL_NAMESPACE ?? 'default',
      TEMPORAL_TASK_QUEUE: given.TEMPORAL_TASK_QUEUE ?? 'backoffice',
      S3_BUCKET: given.S3_BUCKET ?? 'backoffice',
      S3_REGION: given.S3_REGION ?? 'us-east-1',
      LOG_LEVEL: given.LOG_LEVEL ?? 'info',
      SECRETS_KEY: given.SECRETS_KEY ?? secretsFor(dataDir).secretsKey,
      // a local stack delivers webhooks to receivers on this machine (http, loopback): see docs/webhooks.md
      WEBHOOK_TARGETS: given.WEBHOOK_TARGETS ?? 'loopback',
      WEBHOOK_ALLOW_HTTP: given.WEBHOOK_ALLOW_HTTP ?? 'true',
      HOST: '127.0.0.1',
      PORT: String(ports.api),
    };
    const starts: Promise<void>[] = [];
    let temporalUiUrl: string | null = null;

    // Build whatever is missing first (sequentially: the machine has two cores to share).
    if (!given.TEMPORAL_ADDRESS) ensureServerBuilt(SERVERS.temporal, log);
    if (!given.MONGODB_URI) ensureServerBuilt(SERVERS.ferretdb, log);
    if (!given.S3_ENDPOINT) ensureServerBuilt(SERVERS.minio, log);

    if (given.MONGODB_URI) {
      env.MONGODB_URI = given.MONGODB_URI;
    } else {
      const dir = join(dataDir, 'ferretdb');
      mkdirSync(dir, { recursive: true });
      const proc = startProcess(
        'ferretdb',
        ensureServerBuilt(SERVERS.ferretdb, log),
        [`--listen-addr=127.0.0.1:${ports.mongodb}`, `--sqlite-url=file:${dir}/`, '--log-level=error'],
        { logDir },
      );
      procs.push(proc);
      env.MONGODB_URI = `mongodb://127.0.0.1:${ports.mongodb}/`;
      starts.push(
        waitFor(
          'FerretDB',
          async () => {
            const client = new MongoClient(env.MONGODB_URI, { serverSelectionTimeoutMS: 500 });
            try {
              await client.db('admin').command({ ping: 1 });
              return true;
            } finally {
              await client.close();
            }
          },
          { proc },
        ),
      );
    }

    if (given.S3_ENDPOINT) {
      env.S3_ENDPOINT = given.S3_ENDPOINT;
      env.S3_ACCESS_KEY_ID = given.S3_ACCESS_KEY_ID ?? '';
      env.S3_SECRET_ACCESS_KEY = given.S3_SECRET_ACCESS_KEY ?? '';
      env.S3_FORCE_PATH_STYLE = given.S3_FORCE_PATH_STYLE ?? 'true';
    } else {
      const secrets = secretsFor(dataDir);
      const dir = join(dataDir, 'minio');
      mkdirSync(dir, { recursive: true });
      const proc = startProcess(
        'minio',
        ensureServerBuilt(SERVERS.minio, log),
        [
          'server',
          dir,
          '--address',
          `127.0.0.1:${ports.s3}`,
          '--console-address',
          `127.0.0.1:${ports.s3Console}`,
          '--quiet',
        ],
        {
          logDir,
          env: {
            ...process.env,
            MINIO_ROOT_USER: secrets.s3AccessKey,
            MINIO_ROOT_PASSWORD: secrets.s3SecretKey,
            MINIO_KMS_SECRET_KEY: secrets.kmsKey, // enables SSE-S3
            MINIO_UPDATE: 'off',
            MINIO_BROWSER: 'off', // no console UI: nothing listens on the console port
            MINIO_CALLHOME_ENABLE: 'off',
          },
        },
      );
      procs.push(proc);
      Object.assign(env, {
        S3_ENDPOINT: `http://127.0.0.1:${ports.s3}`,
        S3_ACCESS_KEY_ID: secrets.s3AccessKey,
        S3_SECRET_ACCESS_KEY: secrets.s3SecretKey,
        S3_FORCE_PATH_STYLE: 'true',
      });
      starts.push(
        waitFor('MinIO', () => httpOk(`${env.S3_ENDPOINT}/minio/health/ready`), { proc }).then(async () => {
          const s3 = createS3Client({
            endpoint: env.S3_ENDPOINT,
            region: env.S3_REGION,
            bucket: env.S3_BUCKET,
            accessKeyId: env.S3_ACCESS_KEY_ID,
            secretAccessKey: env.S3_SECRET_ACCESS_KEY,
            forcePathStyle: true,
          });
          try {
            await ensureBucket(s3, env.S3_BUCKET);
          } finally {
            s3.destroy();
          }
        }),
      );
    }

    if (given.TEMPORAL_ADDRESS) {
      env.TEMPORAL_ADDRESS = given.TEMPORAL_ADDRESS;
      temporalUiUrl = given.TEMPORAL_UI_URL ?? null;
    } else {
      const proc = startProcess(
        'temporal',
        ensureServerBuilt(SERVERS.temporal, log),
        [
          'server',
          'start-dev',
          '--ip',
          '127.0.0.1',
          '--port',
          String(ports.temporal),
          '--ui-port',
          String(ports.temporalUi),
          '--http-port',
          String(ports.temporalHttp),
          '--metrics-port',
          String(ports.temporalMetrics),
          '--db-filename',
          join(dataDir, 'temporal.db'),
          '--namespace',
          env.TEMPORAL_NAMESPACE,
          '--search-attribute',
          'TenantId=Keyword',
          '--search-attribute',
          'JobType=Keyword',
          '--log-level',
          'warn',
          '--disable-config-file',
          '--disable-config-env',
        ],
        { logDir, env: { ...process.env, TEMPORAL_CLI_SHOW_STACKS: '0' } },
      );
      procs.push(proc);
      env.TEMPORAL_ADDRESS = `127.0.0.1:${ports.temporal}`;
      temporalUiUrl = `http://127.0.0.1:${ports.temporalUi}`;
      starts.push(
        waitFor(
          'Temporal',
          async () => {
            const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS, connectTimeout: 1000 });
            try {
              await connection.workflowService.describeNamespace({ namespace: env.TEMPORAL_NAMESPACE });
              return true;
            } finally {
              await connection.close();
            }
          },
          { proc },
        ),
      );
    }

    await Promise.all(starts);

    const childEnv = { ...process.env, ...env };
    const startWorker = () =>
      startNodeProcess('worker', join(ROOT, 'worker', 'main.ts'), {
        logDir,
        env: childEnv,
        cwd: ROOT,
        nodeFlags: WORKER_NODE_FLAGS,
      });
    const startApi = async () => {
      const p = startNodeProcess('api', join(ROOT, 'api', 'server.ts'), { logDir, env: childEnv, cwd: ROOT });
      await waitFor('API', () => httpOk(`http://127.0.0.1:${ports.api}/health`), { proc: p, timeoutMs: 90_000 });
      return p;
    };

    let apiUrl: string | null = null;
    if (opts.withApp) {
      procs.push(startWorker());
      procs.push(await startApi()); // /health is 200 only once the worker polls, too
      apiUrl = `http://127.0.0.1:${ports.api}`;
    }

    return {
      env,
      apiUrl,
      temporalUiUrl,
      procs,
      async restart(name) {
        const index = procs.findIndex((p) => p.name === name);
        if (index >= 0) await procs[index].stop();
        const p = name === 'worker' ? startWorker() : await startApi();
        if (index >= 0) procs[index] = p;
        else procs.push(p);
        return p;
      },
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

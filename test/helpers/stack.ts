import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import pino from 'pino';
import type { Client } from '@temporalio/client';
import type { S3Client } from '@aws-sdk/client-s3';
import { createApp } from '../../api/app';
import type { AppDeps } from '../../api/context';
import type { RouteSpec } from '../../api/route';
import { allRoutes } from '../../api/routes';
import { SCOPES, type Scope } from '../../shared/auth/scopes';
import { Tenancy } from '../../shared/auth/tenancy';
import { loadConfig, type Config } from '../../shared/config';
import { connectMongo, ensureIndexes, type Mongo } from '../../shared/db/mongo';
import { allCollections } from '../../shared/collections';
import { createS3Client } from '../../shared/s3/client';
import { connectTemporal } from '../../shared/temporal/connect';
import { Jobs } from '../../shared/jobs/jobs';
import { testStack } from './test-stack';

export { testStack, type TestStack } from './test-stack';

export function testConfig(): Config {
  return loadConfig({ ...process.env, ...testStack().env });
}

/**
 * Connections to the suite's real servers for one test file: MongoDB, Temporal and S3, plus
 * tenancy helpers. Close them in afterAll with `close()`.
 */
export class TestDeps {
  private constructor(
    readonly config: Config,
    readonly mongo: Mongo,
    readonly temporal: Client,
    readonly s3: S3Client,
    readonly tenancy: Tenancy,
  ) {}

  /** `database` gives a test its own MongoDB database (a bulky test keeps others' scans small). */
  static async open(options: { database?: string } = {}): Promise<TestDeps> {
    const config = { ...testConfig(), ...(options.database ? { mongodbDb: options.database } : {}) };
    const mongo = await connectMongo(config.mongodbUri, config.mongodbDb);
    await ensureIndexes(mongo.db, allCollections);
    const temporal = await connectTemporal(config.temporalAddress, config.temporalNamespace);
    return new TestDeps(config, mongo, temporal, createS3Client(config.s3), new Tenancy(mongo.db));
  }

  get db() {
    return this.mongo.db;
  }

  /** A new active tenant with one key holding `scopes` (all of them by default). */
  async tenantWithKey(scopes: readonly Scope[] = SCOPES, name = 'test tenant') {
    const tenant = await this.tenancy.createTenant(name);
    const key = await this.tenancy.issueKey(tenant._id, [...scopes]);
    return { tenantId: tenant._id, key: key.key, keyId: key.keyId };
  }

  /** The API app over these connections, listening on a free port (for routes only tests declare). */
  async serveApp(
    routes: RouteSpec[] = allRoutes,
    /** Settings of this app only (an own task queue, an AI provider), over the suite's. */
    overrides: Partial<Config> = {},
    /** The app's Temporal client (one that stalls stands for an API process dying mid-request). */
    temporal: Client = this.temporal,
  ): Promise<{ url: string; close: () => Promise<void> }> {
    const config = { ...this.config, ...overrides };
    // the app's own Tenancy with its credential cache, as in the API process; `this.tenancy`
    // changes keys and tenants as the admin CLI does, from outside
    const tenancy = new Tenancy(this.db, { cache: true });
    const deps: AppDeps = {
      config,
      db: this.db,
      tenancy,
      temporal,
      jobs: new Jobs(temporal, config.taskQueue),
      s3: this.s3,
      log: pino({ level: 'silent' }),
    };
    const server: Server = createApp(deps, routes).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    const close = () => {
      tenancy.close();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    };
    return { url: `http://127.0.0.1:${port}`, close };
  }

  async close(): Promise<void> {
    await this.temporal.connection.close();
    await this.mongo.client.close();
    this.s3.destroy();
  }
}

// the HTTP client lives in client.ts; these names stay importable from here for the suites not yet moved
export { http, type HttpResult } from './client';

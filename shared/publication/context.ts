import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { TenantDb } from '../db/tenant-db';
import type { Jobs } from '../jobs/jobs';

/** What the publication use cases run on, for one tenant: the first argument of each. */
export interface PublicationContext {
  tenantDb: TenantDb;
  temporal: Client;
  /** Starts publication jobs (on its task queue) and finds them again. */
  jobs: Jobs;
  /** Decrypts the channels' signing secrets. */
  secretsKey: string;
  /** Publications of at most this many products answer once done; larger ones answer with a job at once. */
  syncMax: number;
  log: Logger;
}

import type { Db } from 'mongodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Logger } from 'pino';
import type { Config } from '../shared/config';
import { ping } from './system/ping';
import { updateJob } from './system/update-job';
import { rollbackOperation } from './bulk/rollback-operation';
import { importActivities } from './csv/import-activities';
import { exportCsv } from './csv/export-csv';
import { transferActivities } from './inventory/transfer-activities';
import { publicationActivities } from './publication/publish-activities';

export interface ActivityDeps {
  config: Config;
  db: Db;
  s3: S3Client;
  log: Logger;
}

/** Every activity, over injected dependencies. Workflows import the *type* only. */
export function createActivities(deps: ActivityDeps) {
  return {
    ping: ping(deps.db),
    updateJob: updateJob(deps.db),
    rollbackOperation: rollbackOperation(deps.db),
    ...importActivities(deps),
    exportCsv: exportCsv(deps),
    ...transferActivities(deps),
    ...publicationActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;

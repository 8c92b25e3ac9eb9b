import type { Db } from 'mongodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Logger } from 'pino';
import type { Config } from '../shared/config';
import { AppError } from '../shared/errors/catalog';
import { toApplicationFailure } from '../shared/errors/failures';
import { ping } from './system/ping';
import { updateJob } from './system/update-job';
import { rollbackOperation } from './bulk/rollback-operation';
import { importActivities } from './csv/import-activities';
import { exportCsv } from './csv/export-csv';
import { transferActivities } from './inventory/transfer-activities';
import { publicationActivities } from './publication/publish-activities';
import { orderStockActivities } from './orders/order-stock-activities';
import { editActivities } from './edits/edit-activities';
import { webhookActivities } from './webhooks/deliver-activities';

export interface ActivityDeps {
  config: Config;
  db: Db;
  s3: S3Client;
  log: Logger;
}

/**
 * The one place a domain refusal leaves an activity: an AppError below 500 (insufficient stock, a
 * rollback refused) becomes a non-retryable ApplicationFailure carrying the error, which the API
 * turns back into the same answer (api/middleware/errors.ts). Anything else is retried.
 */
function refusalsNotRetried<T extends Record<string, (...args: any[]) => Promise<unknown>>>(activities: T): T {
  const wrapped: Record<string, (...args: any[]) => Promise<unknown>> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args) => {
      try {
        return await fn(...args);
      } catch (err) {
        if (err instanceof AppError && err.status < 500) throw toApplicationFailure(err);
        throw err;
      }
    };
  }
  return wrapped as T;
}

/** Every activity, over injected dependencies. Workflows import the *type* only. */
export function createActivities(deps: ActivityDeps) {
  return refusalsNotRetried({
    ping: ping(deps.db),
    updateJob: updateJob(deps.db),
    rollbackOperation: rollbackOperation(deps.db),
    ...importActivities(deps),
    exportCsv: exportCsv(deps),
    ...transferActivities(deps),
    ...publicationActivities(deps),
    ...orderStockActivities(deps),
    ...editActivities(deps),
    ...webhookActivities(deps),
  });
}

export type Activities = ReturnType<typeof createActivities>;

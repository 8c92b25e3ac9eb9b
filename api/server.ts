import pino from 'pino';
import { createApp } from './app';
import { loadConfig } from '../shared/config';
import { connectMongo, ensureIndexes } from '../shared/db/mongo';
import { allCollections } from '../shared/collections';
import { finishStaleConsumptions } from '../shared/consumption/recovery';
import { dropExpiredPreviews } from '../shared/edits/cleanup';
import { dropExpiredKeys } from '../shared/idempotency/keys';
import { Tenancy } from '../shared/auth/tenancy';
import { createS3Client } from '../shared/s3/client';
import { connectTemporal } from '../shared/temporal/connect';
import { Jobs } from '../shared/jobs/jobs';
import { relayOutbox } from '../shared/webhooks/relay';
import { dropOldWebhookRecords } from '../shared/webhooks/retention';

/** The API process: one MongoDB pool and one Temporal client, shut down cleanly on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = pino({ level: config.logLevel, base: { role: 'api' } });
  const mongo = await connectMongo(config.mongodbUri, config.mongodbDb);
  await ensureIndexes(mongo.db, allCollections);
  const temporal = await connectTemporal(config.temporalAddress, config.temporalNamespace);
  const s3 = createS3Client(config.s3);
  const tenancy = new Tenancy(mongo.db, { cache: true });
  const jobs = new Jobs(temporal, config.taskQueue);
  const app = createApp({ config, db: mongo.db, tenancy, temporal, jobs, s3, log });

  const server = app.listen(config.port, config.host, () => {
    log.info({ url: `http://${config.host}:${config.port}` }, 'api listening');
  });
  const sweep = setInterval(() => {
    void tenancy.sweepExpiredTokens().catch((err) => log.warn({ err }, 'token sweep failed'));
    // plans of bulk-edit previews past their 24 hours (shared/edits/cleanup.ts)
    void dropExpiredPreviews(mongo.db).catch((err) => log.warn({ err }, 'preview sweep failed'));
    // Idempotency-Keys past their 24 hours (shared/idempotency/keys.ts)
    void dropExpiredKeys(mongo.db).catch((err) => log.warn({ err }, 'idempotency-key sweep failed'));
    // webhook events and deliveries past their 30 days (shared/webhooks/retention.ts)
    void dropOldWebhookRecords(mongo.db).catch((err) => log.warn({ err }, 'webhook retention sweep failed'));
  }, 10 * 60_000);
  sweep.unref();
  // consumptions a killed API process left half-way are finished by the next sweep (shared/consumption/recovery.ts)
  const recover = setInterval(
    () => void finishStaleConsumptions(mongo.db).catch((err) => log.warn({ err }, 'consumption recovery failed')),
    30_000,
  );
  recover.unref();
  // events a killed process left in the outbox are fanned out by the next relay (shared/webhooks/relay.ts)
  const relay = setInterval(
    () => void relayOutbox(mongo.db).catch((err) => log.warn({ err }, 'webhook relay failed')),
    config.webhooks.relayIntervalMs,
  );
  relay.unref();

  const shutdown = (signal: string) => {
    log.info({ signal }, 'api stopping');
    clearInterval(sweep);
    clearInterval(recover);
    clearInterval(relay);
    tenancy.close();
    server.close(() => {
      void Promise.allSettled([temporal.connection.close(), mongo.client.close()]).then(() => {
        s3.destroy();
        process.exit(0);
      });
    });
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

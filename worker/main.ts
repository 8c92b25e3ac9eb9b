import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import pino from 'pino';
import { createActivities } from '../activities';
import { loadConfig } from '../shared/config';
import { connectMongo, ensureIndexes } from '../shared/db/mongo';
import { allCollections } from '../shared/collections';
import { createS3Client } from '../shared/s3/client';
import { connectTemporal } from '../shared/temporal/connect';
import { backfillProductSearch } from '../shared/products/search-backfill';
import { relayOutbox } from '../shared/webhooks/relay';
import { installWebhookRuntime } from '../shared/webhooks/runtime';
import { workflowBundle } from './bundle';
import { freeLoopbackAddress, serveWorkerMetrics } from './metrics';

/**
 * The worker process: runs workflows and activities from the task queue. On SIGINT/SIGTERM the
 * SDK stops polling, lets running activities finish (up to the grace time), then we close the
 * connections. A killed worker loses nothing: Temporal hands its tasks to the next one.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = pino({ level: config.logLevel, base: { role: 'worker' } });
  const sdkMetrics = config.workerMetricsPort ? await freeLoopbackAddress() : null;
  Runtime.install({
    shutdownSignals: ['SIGINT', 'SIGTERM'],
    ...(sdkMetrics
      ? { telemetryOptions: { metrics: { prometheus: { bindAddress: sdkMetrics, useSecondsForDurations: true } } } }
      : {}),
  });

  const mongo = await connectMongo(config.mongodbUri, config.mongodbDb);
  // activities rely on the unique indexes (ledger keys, SKU claims) even before an API has started
  await ensureIndexes(mongo.db, allCollections);
  const s3 = createS3Client(config.s3);
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  // activities record events (jobs settling, stock moving) and fan them out to endpoint workflows
  const temporal = await connectTemporal(config.temporalAddress, config.temporalNamespace);
  installWebhookRuntime({ temporal, taskQueue: config.taskQueue, retryScale: config.webhooks.retryScale, log });
  const relay = setInterval(
    () => void relayOutbox(mongo.db).catch((err) => log.warn({ err }, 'webhook relay failed')),
    config.webhooks.relayIntervalMs,
  );
  relay.unref();
  // products stored before their search field: in the background, once per database
  void backfillProductSearch(mongo.db)
    .then((count) => count !== null && log.info({ count }, 'products given their search text'))
    .catch((err) => log.warn({ err }, 'search text backfill failed; the next start tries again'));
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    workflowBundle: await workflowBundle(),
    activities: createActivities({ config, db: mongo.db, s3, log }),
    shutdownGraceTime: '10 seconds',
  });
  const metrics =
    config.workerMetricsPort && sdkMetrics
      ? await serveWorkerMetrics(config.host, config.workerMetricsPort, sdkMetrics)
      : null;
  log.info(
    { taskQueue: config.taskQueue, namespace: config.temporalNamespace, metricsPort: config.workerMetricsPort },
    'worker started',
  );
  try {
    await worker.run(); // resolves after a shutdown signal, once in-flight work is done
  } finally {
    metrics?.close();
    clearInterval(relay);
    await temporal.connection.close();
    await connection.close();
    await mongo.client.close();
    s3.destroy();
    log.info('worker stopped');
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import {
  cancelPublication,
  percentOf,
  publicationProgress,
  type PublicationInput,
  type PublicationProgress,
  type PublicationResult,
} from '../../shared/publication/messages';

/** A batch that stopped because the job's cancel is recorded (publishBatch's non-retryable `cancelled`). */
function stoppedByRecordedCancel(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === 'cancelled';
}

/** What stopped a batch: the channel's own answer when an activity failed on it. */
function failureMessage(err: unknown): string {
  if (err instanceof ActivityFailure && err.cause) return err.cause.message;
  return (err as Error).message;
}

/** The code a failed job's unsent products carry: the channel's being down, or another failure. */
function unsentCode(err: unknown): string {
  const down =
    err instanceof ActivityFailure &&
    err.cause instanceof ApplicationFailure &&
    err.cause.type === 'channel-unavailable';
  return down ? 'CHANNEL_UNAVAILABLE' : 'PUBLICATION_FAILED';
}

const acts = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  // short: a killed worker's batch moves to another worker within seconds
  heartbeatTimeout: '20 seconds',
  // a cancel waits for the batch to stop, so the counts include what it did
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 10,
    nonRetryableErrorTypes: ['CHANNEL_NOT_FOUND', 'cancelled'],
  },
});

/**
 * One publication: the products in batches, each batch an activity. The cancel signal stops it
 * between batches, and cancels the batch under way (which stops before its next product). The
 * job record and the channel's lock are settled at the end, whatever happened.
 */
export async function publicationWorkflow(input: PublicationInput): Promise<PublicationResult> {
  const p: PublicationProgress = {
    status: 'processing',
    total: input.productIds.length,
    processed: 0,
    published: 0,
    failed: 0,
    skipped: 0,
    percent: 0,
    cancelReason: null,
  };
  const results: { sku: string; success: boolean; error?: string }[] = [];
  let cancelRequested = false;
  let batchScope: CancellationScope | null = null;
  setHandler(publicationProgress, () => p);
  setHandler(cancelPublication, ({ reason }) => {
    if (p.status !== 'processing') return;
    cancelRequested = true;
    p.cancelReason ??= reason; // the first cancel's reason (a retried cancel signals again)
    batchScope?.cancel();
  });

  await acts.updateJob({ tenantId: input.tenantId, jobId: input.jobId, status: 'processing' });
  let failure: string | null = null;
  let failedFrom = input.productIds.length;
  let failedCode = 'PUBLICATION_FAILED';
  for (let from = 0; from < input.productIds.length && !cancelRequested; from += input.batchSize) {
    const productIds = input.productIds.slice(from, from + input.batchSize);
    try {
      const r = await CancellationScope.cancellable(async () => {
        batchScope = CancellationScope.current();
        return acts.publishBatch({
          tenantId: input.tenantId,
          jobId: input.jobId,
          channelId: input.channelId,
          productIds,
          options: input.options,
          targetMarketplaces: input.targetMarketplaces,
        });
      });
      for (const x of r.results) {
        p.processed++;
        if (x.success) p.published++;
        else if ((x as { skipped?: boolean }).skipped) p.skipped++;
        else p.failed++;
        if (input.collectResults)
          results.push({ sku: x.sku, success: x.success, ...(x.error ? { error: x.error } : {}) });
      }
    } catch (err) {
      if (cancelRequested) break; // the batch stopped because of the cancel
      if (stoppedByRecordedCancel(err)) {
        // the batch read the cancel the API recorded before its signal came (or the API died
        // between the two): a cancel all the same
        cancelRequested = true;
        break;
      }
      // the channel still down after every retry (or the batch failed otherwise): the job fails,
      // and this batch's products and the rest are recorded failed with the reason
      failure = isCancellation(err) ? 'cancelled' : failureMessage(err);
      failedCode = unsentCode(err);
      failedFrom = from;
      break;
    } finally {
      batchScope = null;
    }
    p.percent = percentOf(p.processed, p.total);
  }
  p.status = cancelRequested ? 'cancelled' : failure ? 'failed' : 'completed';
  const counts = await acts.finishPublication({
    tenantId: input.tenantId,
    jobId: input.jobId,
    channelId: input.channelId,
    status: p.status,
    cancelReason: p.cancelReason,
    total: p.total,
    // their outcomes come back only for an answer that lists them (a sync job's few): a large
    // job's would outgrow what a Temporal event may hold
    collectResults: input.collectResults,
    ...(failure && failure !== 'cancelled'
      ? { unsent: { productIds: input.productIds.slice(failedFrom), error: `${failedCode}: ${failure}` } }
      : {}),
  });
  // recorded by older builds without it
  if (input.collectResults) results.push(...(counts.unsent ?? []).map(({ skipped: _s, ...r }) => r));
  Object.assign(p, {
    published: counts.published,
    failed: counts.failed,
    skipped: counts.skipped,
    processed: counts.published + counts.failed + counts.skipped,
    percent: percentOf(counts.published + counts.failed + counts.skipped, p.total),
  });
  await condition(allHandlersFinished);
  return { ...p, error: failure, results: input.collectResults ? results : [] };
}

import { WorkflowFailedError } from '@temporalio/client';
import { AppError } from '../errors/catalog';
import type { JobRecord } from '../jobs/collection';
import { Locations } from '../locations/locations';
import { workflowHandle } from '../temporal/workflows';
import { publicationChannel } from './channel-lookup';
import type { PublicationContext } from './context';
import { settlePublication } from './jobs';
import { publication, type PublicationResult } from './messages';
import { lockChannel, PUBLICATION_JOB, type PublishOptions } from './publication';
import { resolveSelection, type Selection } from './selection';

/**
 * Products per publishBatch activity. A killed worker re-sends only the products in flight (each
 * outcome is written as it comes), so the size bounds only the work an activity holds: large
 * enough that the workflow's round trip per batch (a workflow task, an activity task) is small
 * beside it.
 */
const BATCH_SIZE = 250;

export interface PublishRequest {
  channelId: string;
  selection: Selection;
  options: PublishOptions;
  targetMarketplaces: string[];
  /** The client's Idempotency-Key: a retry answers the same job. */
  idempotencyKey?: string;
}

/** A small publication answers with its results once done; a larger one with its job at once. */
export type PublishAnswer =
  { async: false; jobId: string; results: PublicationResult['results'] } | { async: true; jobId: string };

/**
 * Publishes a selection of products to a channel: the channel must be active, a location given
 * for stock must exist, the selection must resolve to products, and no other publication may be
 * running on the channel (its lock is taken with the job, before the workflow starts). Every
 * publication runs as the same workflow; one of at most `syncMax` products is awaited here, so
 * its caller gets the per-product results (400 PRODUCT_EXPORT_FAILED when any failed).
 */
export async function startPublication(c: PublicationContext, req: PublishRequest): Promise<PublishAnswer> {
  const job = (await c.jobs.startedBy(c.tenantDb, PUBLICATION_JOB, req.idempotencyKey)) ?? (await startNew(c, req));
  // a retry with the same Idempotency-Key answers as its first request did
  if (!job.input.sync) return { async: true, jobId: job._id };
  return awaitSync(c, job);
}

async function startNew(c: PublicationContext, req: PublishRequest): Promise<JobRecord> {
  const { tenantDb } = c;
  const channel = await publicationChannel(c, req.channelId);
  if (channel.status !== 'active')
    throw new AppError(400, 'CHANNEL_INACTIVE', `Channel ${req.channelId} is ${channel.status}`, {
      field: 'channelId',
    });
  // stock is read at this location: an unknown one would publish 0 for every product
  if (req.options.locationId) await new Locations(tenantDb).require(req.options.locationId);
  const ids = await resolveSelection(tenantDb, req.selection);
  if (!ids.length) throw new AppError(400, 'NO_PRODUCTS', 'The selection resolved no products');
  const sync = ids.length <= c.syncMax;
  const channelId = channel._id.toHexString();
  const { job } = await c.jobs.start(tenantDb, {
    type: PUBLICATION_JOB,
    prefix: 'exp',
    workflow: publication,
    idempotencyKey: req.idempotencyKey,
    input: { channelId, mode: req.selection.mode, count: ids.length, sync },
    beforeStart: (job) => lockChannel(tenantDb, channelId, job._id, (holder) => settlePublication(c, holder)),
    workflowInput: (jobId) => ({
      tenantId: tenantDb.tenantId,
      jobId,
      channelId,
      productIds: ids,
      options: req.options,
      targetMarketplaces: req.targetMarketplaces,
      batchSize: BATCH_SIZE,
      collectResults: sync,
    }),
  });
  return job;
}

/** A small publication's answer: its results once its workflow ended. */
async function awaitSync(c: PublicationContext, job: JobRecord): Promise<PublishAnswer> {
  let result: PublicationResult;
  try {
    result = await workflowHandle(c.temporal, publication, job.workflowId).result();
  } catch (err) {
    // its workflow ended without an answer (terminated, timed out): the job is recorded failed,
    // and the refusal names it, so a keyed retry answers this job instead of starting another
    if (!(err instanceof WorkflowFailedError)) throw err;
    const settled = await settlePublication(c, job);
    throw new AppError(
      400,
      'PRODUCT_EXPORT_FAILED',
      `The publication ended before it finished (${settled.status}); GET /products/export/${job._id} has each product's outcome`,
      { details: { jobId: job._id, results: [] } },
    );
  }
  if (result.status === 'failed')
    throw new AppError(
      400,
      'PRODUCT_EXPORT_FAILED',
      `The publication failed: ${result.error ?? 'the channel could not be reached'}`,
      { details: { jobId: job._id, results: result.results } },
    );
  // cut short: not every product was tried, so no answer of one result per product; the job
  // (GET /products/export/{jobId}) has the counts and each product's outcome
  if (result.status === 'cancelled')
    throw new AppError(
      400,
      'PRODUCT_EXPORT_FAILED',
      `The publication was cancelled${result.cancelReason ? ` (${result.cancelReason})` : ''}: ${result.published} of ${result.total} products published`,
      { details: { jobId: job._id, results: result.results, cancelled: true } },
    );
  if (result.failed > 0)
    throw new AppError(
      400,
      'PRODUCT_EXPORT_FAILED',
      `${result.failed} of ${result.results.length} products failed to publish`,
      { details: { jobId: job._id, results: result.results } },
    );
  return { async: false, jobId: job._id, results: result.results };
}

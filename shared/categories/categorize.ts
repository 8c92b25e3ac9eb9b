import { BulkOperations } from '../bulk/operations';
import { resolveChannelType } from '../channels/channel-types';
import type { ChannelDoc } from '../channels/channels';
import { RetryableChannelError, type ConnectorTarget } from '../channels/connector';
import type { TenantDb } from '../db/tenant-db';
import { applyChanges } from '../edits/apply';
import { products } from '../products/collections';
import type { ProductDoc } from '../products/types';
import {
  assignmentOf,
  categorySite,
  sameAssignment,
  withAssignment,
  type CategoryAssignment,
  type CategorySite,
} from './assignment';
import { predictCategories, PredictorError } from './predictor';

export type Categorized =
  | { ok: true; product: ProductDoc; category: CategoryAssignment | null }
  | { ok: false; product: ProductDoc; error: string };

/** How long a publication waits out a throttled predictor before handing the batch back to Temporal to retry. */
const MAX_THROTTLE_WAIT_MS = 60_000;
/** Writes of a suggested category tried on a product others keep changing. */
const WRITE_ATTEMPTS = 3;

/** The bulk operation that records the categories one publication suggested (one per job, so a retried batch adds to it). */
export function categorizationOperationId(jobId: string): string {
  return `bop_${jobId}`;
}

export interface CategorizerDeps {
  tenantDb: TenantDb;
  channel: ChannelDoc;
  target: ConnectorTarget;
  jobId: string;
  enableCategorization: boolean;
  forceRecategorization: boolean;
  /** The channel's rate limit, shared with the sends. */
  slot: () => Promise<void>;
  cancelled?: AbortSignal;
}

/**
 * Categorization during a publication. With `enableCategorization` a product without a category
 * under the channel's key gets the predictor's first suggestion (source `suggested`), written to
 * the product and recorded in the job's bulk operation before the product is sent;
 * `forceRecategorization` asks again for a product whose category was suggested (a `manual` one is
 * never replaced). A marketplace fails a product the predictor cannot place; the other types send
 * it without a category. A predictor that is down or throttled is the channel being down: the
 * batch is retried. One that has no predictor (404, 501) is not asked again in this batch.
 */
export class PublicationCategorizer {
  readonly site: CategorySite;
  private readonly marketplace: boolean;
  /** Whether the channel has a predictor: unknown until its first answer, which the other products of the batch wait for. */
  private hasPredictor: boolean | null = null;
  private probe: Promise<unknown> | null = null;
  private started = false;

  constructor(private readonly d: CategorizerDeps) {
    this.site = categorySite(d.channel);
    this.marketplace = resolveChannelType(d.channel.type)?.marketplace ?? false;
  }

  async categorize(p: ProductDoc): Promise<Categorized> {
    const current = assignmentOf(p, this.site.key);
    const ask =
      this.d.enableCategorization && (!current || (this.d.forceRecategorization && current.source !== 'manual'));
    if (!ask) return this.without(p, current, 'categorization is off');
    const title = p.title?.value?.trim();
    if (!title) return this.without(p, current, 'the product has no title to categorize');
    while (this.hasPredictor === null && this.probe) await this.probe.catch(() => undefined);
    if (this.hasPredictor === false) return this.without(p, current, 'the channel has no category predictor');
    let best;
    const call = predictCategories({
      target: this.d.target,
      channelType: this.site.channelType,
      siteId: this.site.siteId,
      title,
      limit: 1,
      slot: this.d.slot,
      maxThrottleWaitMs: MAX_THROTTLE_WAIT_MS,
      cancelled: this.d.cancelled,
    });
    if (this.hasPredictor === null) this.probe = call;
    try {
      [best] = await call;
      this.hasPredictor = true;
    } catch (err) {
      if (!(err instanceof PredictorError)) throw err;
      if (err.kind === 'unavailable' || err.kind === 'throttled') throw new RetryableChannelError(err.message);
      if (err.kind === 'unsupported') {
        this.hasPredictor = false;
        return this.without(p, current, 'the channel has no category predictor');
      }
      return { ok: false, product: p, error: `CATEGORIZATION_FAILED: ${err.message}` };
    } finally {
      if (this.probe === call) this.probe = null;
    }
    if (!best) return this.without(p, current, `the channel's category predictor found no category for "${title}"`);
    const value = {
      id: best.categoryId,
      name: best.categoryName,
      path: best.path,
      source: 'suggested' as const,
      channelId: this.d.channel._id.toHexString(),
    };
    return this.write(p, value);
  }

  /** The product as it stands: with the category it has, else sent without one, or failed on a marketplace. */
  private without(p: ProductDoc, current: CategoryAssignment | null, why: string): Categorized {
    if (current || !this.marketplace || !this.d.enableCategorization)
      return { ok: true, product: p, category: current };
    return {
      ok: false,
      product: p,
      error: `CATEGORY_NOT_FOUND: ${why}; ${this.site.channelType} lists a product only in a category: assign one with POST /products/marketplace-categories`,
    };
  }

  private async write(p: ProductDoc, value: Omit<CategoryAssignment, 'assignedAt'>): Promise<Categorized> {
    const operationId = categorizationOperationId(this.d.jobId);
    const ops = new BulkOperations(this.d.tenantDb);
    let doc: ProductDoc | null = p;
    for (let attempt = 0; doc && attempt < WRITE_ATTEMPTS; attempt++) {
      const current = assignmentOf(doc, this.site.key);
      if (current?.source === 'manual') return { ok: true, product: doc, category: current }; // assigned meanwhile
      if (sameAssignment(current, value)) return { ok: true, product: doc, category: current };
      const category = { ...value, assignedAt: new Date().toISOString() };
      const metafields = withAssignment(doc.metafields ?? [], this.site.key, category);
      if (!this.started) {
        await ops.start({
          id: operationId,
          type: 'marketplace-category',
          operationName: `categorization of publication ${this.d.jobId}`,
          actor: `publication ${this.d.jobId}`,
          source: { jobId: this.d.jobId, channelId: value.channelId, metafieldKey: this.site.key },
        });
        this.started = true;
      }
      const applied = await applyChanges(this.d.tenantDb, operationId, [
        { current: doc, patch: { set: { metafields }, unset: [] } },
      ]);
      const outcome = applied.get(doc._id.toHexString());
      if (outcome?.ok) return { ok: true, product: { ...doc, metafields, version: outcome.afterVersion }, category };
      doc = (await this.d.tenantDb.collection(products).findOne({ _id: doc._id })) as ProductDoc | null;
    }
    return {
      ok: false,
      product: p,
      error: 'CATEGORIZATION_FAILED: the product kept changing while it was categorized',
    };
  }
}

/** Ends the job's categorization operation (if it suggested anything), counting what it recorded. */
export async function finishCategorization(tenantDb: TenantDb, jobId: string): Promise<void> {
  const ops = new BulkOperations(tenantDb);
  const id = categorizationOperationId(jobId);
  const op = await ops.get(id);
  if (!op || op.status !== 'processing') return;
  const n = (await ops.itemsOf(id)).length;
  await ops.finish(id, 'completed', { totalProcessed: n, created: 0, updated: n, skipped: 0, failed: 0 });
}

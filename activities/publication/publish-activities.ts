import { isDeepStrictEqual } from 'node:util';
import { ObjectId } from 'mongodb';
import { ApplicationFailure, Context, heartbeat } from '@temporalio/activity';
import type { ActivityDeps } from '../index';
import { TenantDb } from '../../shared/db/tenant-db';
import { Channels, type ChannelDoc } from '../../shared/channels/channels';
import { resolveChannelType } from '../../shared/channels/channel-types';
import { RetryableChannelError, sendProduct } from '../../shared/channels/connector';
import { SharedRateGate } from '../../shared/channels/rate-gate';
import { finishCategorization, PublicationCategorizer } from '../../shared/categories/categorize';
import { channelPayload } from '../../shared/channels/payloads';
import { productStock } from '../../shared/inventory/stock-view';
import { FINISHED_JOB_STATUSES, jobs } from '../../shared/jobs/collection';
import { jobsFinished } from '../../shared/metrics/metrics';
import { announceJobEnd } from '../../shared/jobs/events';
import { freshReads, mapLimitSettled } from '../../shared/concurrency';
import { inBatch, type Outcome } from '../../shared/db/group-commit';
import { duplicateKeyIndexes, isDuplicateKeyError } from '../../shared/db/duplicate-key';
import { newId } from '../../shared/ids';
import { products } from '../../shared/products/collections';
import type { ProductDoc } from '../../shared/products/types';
import {
  INACTIVE_BINDING,
  publicationItems,
  unlockChannel,
  type PublicationItem,
  type PublishOptions,
} from '../../shared/publication/publication';
import { productsByIds } from '../../shared/publication/selection';
import { percentOf } from '../../shared/publication/messages';

export interface BatchInput {
  tenantId: string;
  jobId: string;
  channelId: string;
  productIds: string[];
  options: PublishOptions;
  targetMarketplaces: string[];
}

export interface BatchResult {
  results: { sku: string; success: boolean; error?: string; skipped?: boolean }[];
}

/** The longest `lastError` a product binding holds (shared/products/schema.ts). */
const MAX_LAST_ERROR = 2000;

/** What settles one product of a publication: its binding to the channel, and the job's item. */
interface Settlement {
  productId: ProductDoc['_id'];
  /** The product's binding to this channel after the send, and the bindings it was read with. */
  binding: { next: Binding; base: Binding[] | undefined } | null;
  item: Omit<PublicationItem, 'tenantId'>;
}

type Binding = Record<string, unknown>;

/** `bindings` with the element of `next`'s channel replaced by it (added when there is none). */
function withBinding(bindings: Binding[] | undefined, next: Binding): Binding[] {
  const out = [...(bindings ?? [])];
  const i = out.findIndex((b) => b.channelId === next.channelId);
  if (i >= 0) out[i] = next;
  else out.push(next);
  return out;
}

/** A write of the bindings guarded by the array it was made from: another channel's job may write its own element. */
const bindingsWrite = (productId: ProductDoc['_id'], base: Binding[] | undefined, next: Binding) => ({
  filter: { _id: productId, bindings: base ?? { $exists: false } } as never,
  update: { $set: { bindings: withBinding(base, next) as never } },
});

/**
 * Makes the product's binding to this channel `next` on the product as it is now: a job for
 * another channel wrote its own element since this one read the product. Only this channel's
 * element is ours (one publication per channel runs at a time), so a binding equal to `next`
 * is this job's write.
 */
async function ensureBinding(tenantDb: TenantDb, productId: ProductDoc['_id'], next: Binding): Promise<void> {
  const col = tenantDb.collection(products);
  for (let attempt = 0; attempt < 20; attempt++) {
    const now = await col.findOne({ _id: productId });
    if (!now) return; // deleted meanwhile: nothing to bind
    const bindings = now.bindings as unknown as Binding[] | undefined;
    if (
      isDeepStrictEqual(
        bindings?.find((b) => b.channelId === next.channelId),
        next,
      )
    )
      return;
    const { filter, update } = bindingsWrite(productId, bindings, next);
    if ((await col.updateOne(filter, update)).matchedCount === 1) return;
  }
  throw new Error(`the bindings of product ${productId.toHexString()} keep changing`); // retried by Temporal
}

/**
 * Writes the settlements that are ready together: the bindings in one bulkWrite, the items in
 * one unordered insertMany (an item already there is a retry's: the same outcome). A product's
 * send resolves only once its settlement is written, so a killed worker re-sends only the
 * products whose answers were not recorded; the sends that finish while a write is under way
 * share the next one (shared/db/group-commit.ts).
 */
async function settle(tenantDb: TenantDb, batch: Settlement[]): Promise<Outcome<void>[]> {
  const bound = batch.filter((s) => s.binding);
  if (bound.length) {
    const res = await tenantDb.collection(products).bulkWrite(
      bound.map((s) => ({ updateOne: bindingsWrite(s.productId, s.binding!.base, s.binding!.next) })),
      { ordered: false },
    );
    // some products' bindings changed since they were read (a job for another channel): those
    // are written again on the bindings as they are now; which ones, a read of each tells
    if (res.matchedCount < bound.length)
      await Promise.all(bound.map((s) => ensureBinding(tenantDb, s.productId, s.binding!.next)));
  }
  try {
    await tenantDb.collection(publicationItems).insertMany(
      batch.map((s) => s.item),
      { ordered: false },
    );
  } catch (err) {
    if (!isDuplicateKeyError(err) && duplicateKeyIndexes(err) === null) throw err;
  }
  return batch.map(() => ({ ok: true, value: undefined }));
}

/**
 * The product's binding to the channel after an outcome (a new one when the product had none), or
 * null for a channel whose type a binding may not name (the catalog-only `pos`): the product
 * schema refuses such a binding, and a product holding one could no longer be saved. Such a
 * publication is recorded by its items only. Every binding written has an id, as normalizeProduct
 * gives one (shared/products/normalize.ts): an existing binding keeps its own, so later edits of
 * the product do not mint another.
 */
function bindingAfter(
  p: ProductDoc,
  channel: ChannelDoc,
  outcome: { ok: true; handle: string } | { ok: false; error: string },
): Binding | null {
  const type = resolveChannelType(channel.type);
  if (!type?.bindable) return null;
  const now = new Date().toISOString();
  const bindings = (p.bindings ?? []) as unknown as Binding[];
  const found = bindings.find((b) => b.channelId === channel._id.toHexString());
  const current = found
    ? { ...found, id: found.id ?? newId('bnd') }
    : {
        id: newId('bnd'),
        channelId: channel._id.toHexString(),
        handle: p.sku,
        type: type.id,
        desiredStatus: 'active',
        reservedStock: 0,
        overrides: [],
        customValues: [],
      };
  return outcome.ok
    ? {
        ...current,
        handle: outcome.handle,
        status: 'active',
        syncStatus: 'synced',
        // the version sent: a write of the product since (or during the send) makes it read pending
        syncedVersion: p.version,
        lastError: null,
        lastSyncedAt: now,
      }
    : {
        ...current,
        status: 'error',
        syncStatus: 'error',
        // the binding schema's limit: a categorization error quotes the product's title
        lastError: outcome.error.slice(0, MAX_LAST_ERROR),
        lastSyncedAt: now,
      };
}

/**
 * A failed job's products that have no outcome (the channel stayed down through every retry of
 * their batch, or their batch never ran) are recorded failed with `error`, so published, failed
 * and skipped add up to the total. Their bindings are left as they were: nothing is known to have
 * reached the channel. Answers every one of them as its recorded outcome (a retry's the same).
 */
async function recordUnsent(
  tenantDb: TenantDb,
  jobId: string,
  unsent: { productIds: string[]; error: string },
): Promise<BatchResult['results']> {
  const items = tenantDb.collection(publicationItems);
  const ids = unsent.productIds.map((productId) => `${jobId}:${productId}`);
  const settled = new Map((await items.findByIds(ids)).map((i) => [i.productId, i]));
  const missing = unsent.productIds.filter((id) => !settled.has(id));
  if (missing.length) {
    const found = await tenantDb.collection(products).findByIds(
      missing.map((id) => new ObjectId(id)),
      { projection: { sku: 1 } },
    );
    const skus = new Map(found.map((p) => [p._id.toHexString(), p.sku]));
    const at = new Date();
    const failed = missing.map((productId) => ({
      _id: `${jobId}:${productId}`,
      jobId,
      productId,
      sku: skus.get(productId) ?? productId,
      outcome: 'failed' as const,
      error: unsent.error.slice(0, MAX_LAST_ERROR),
      handle: null,
      at,
    }));
    try {
      await items.insertMany(failed, { ordered: false });
    } catch (err) {
      if (!isDuplicateKeyError(err) && duplicateKeyIndexes(err) === null) throw err;
    }
    for (const i of await items.findByIds(failed.map((f) => f._id))) settled.set(i.productId, i);
  }
  return unsent.productIds.flatMap((productId) => {
    const i = settled.get(productId);
    return i ? [resultOf(i.sku, i)] : [];
  });
}

/** A product's result in a batch's answer, from its recorded outcome. */
function resultOf(sku: string, item: Pick<PublicationItem, 'outcome' | 'error'> | null | undefined) {
  return {
    sku,
    success: item?.outcome === 'published',
    ...(item?.error ? { error: item.error } : {}),
    ...(item?.outcome === 'skipped' ? { skipped: true } : {}),
  };
}

/**
 * Publication activities. A batch sends its products through the connector, a few at a time,
 * and writes each outcome (the publication item, the product's binding) as it comes; run again
 * (a retry, a killed worker) it skips products this job already settled, and a product caught
 * mid-send is sent again with the same Idempotency-Key, which the channel sees as a duplicate.
 * A cancellation (the job's cancel) stops it before the next product.
 */
export function publicationActivities({ db, config }: ActivityDeps) {
  return {
    async publishBatch(input: BatchInput): Promise<BatchResult> {
      const tenantDb = new TenantDb(db, input.tenantId);
      const channels = new Channels(tenantDb, config.secretsKey);
      const channel = await channels.get(input.channelId);
      const items = tenantDb.collection(publicationItems);
      const docs = await productsByIds(tenantDb, input.productIds);
      /** Records a product as skipped for `error` (once: a retry's record is the same). */
      const skip = async (productId: string, sku: string, error: string) => {
        await items.updateOne(
          { _id: `${input.jobId}:${productId}` },
          {
            $setOnInsert: {
              jobId: input.jobId,
              productId,
              sku,
              outcome: 'skipped',
              error,
              handle: null,
              at: new Date(),
            },
          },
          { upsert: true },
        );
        return resultOf(sku, await items.findOne({ _id: `${input.jobId}:${productId}` }));
      };
      // a product deleted since the selection was made is skipped, and counted so: published,
      // failed and skipped always add up to the job's total
      const found = new Set(docs.map((p) => p._id.toHexString()));
      const gone = input.productIds.filter((id) => !found.has(id));
      const goneResults = [];
      for (const productId of gone) goneResults.push(await skip(productId, productId, 'PRODUCT_NOT_FOUND'));
      // the channel deleted while the job ran: nothing more is sent, the rest is skipped
      if (!channel) {
        const rest = [];
        for (const p of docs) rest.push(await skip(p._id.toHexString(), p.sku, 'CHANNEL_NOT_FOUND'));
        return { results: [...goneResults, ...rest] };
      }
      // what a previous attempt of this batch settled, in one read by primary key
      const settled = new Map(
        (await items.findByIds(docs.map((p) => `${input.jobId}:${p._id.toHexString()}`))).map((i) => [i._id, i]),
      );
      // read fresh before every send, the sends waiting at once sharing one read: nothing may be
      // sent once a cancel is recorded (the activity's own cancellation arrives only with its next
      // heartbeat), nor once the channel is switched off or gone
      const beforeSend = freshReads(async () => {
        const [job, now] = await Promise.all([
          tenantDb.collection(jobs).findOne({ _id: input.jobId }, { projection: { cancelRequestedAt: 1 } }),
          channels.get(input.channelId),
        ]);
        const channelOff = !now ? 'CHANNEL_NOT_FOUND' : now.status !== 'active' ? 'CHANNEL_INACTIVE' : null;
        return { cancelRequested: !!job?.cancelRequestedAt, channelOff };
      });
      const lane = `publication:${input.tenantId}:${input.jobId}`;
      const stock = input.options.includeInventory
        ? await productStock(tenantDb, docs, input.options.locationId)
        : new Map();
      const target = {
        endpointUrl: channel.settings.endpointUrl,
        secret: channels.signingSecret(channel),
        timeoutMs: channel.settings.timeoutMs ?? 15_000,
      };
      const cancelled = Context.current().cancellationSignal;
      // the channel's calls are spaced with every process's: the previous batch's last send, the
      // API's category suggestions
      const gate = new SharedRateGate(tenantDb, input.channelId, channel.settings.rateLimitPerSecond);
      const categorizer = new PublicationCategorizer({
        tenantDb,
        channel,
        target,
        jobId: input.jobId,
        enableCategorization: input.options.enableCategorization,
        forceRecategorization: input.options.forceRecategorization,
        slot: () => gate.slot(),
        cancelled,
      });
      const beat = setInterval(() => heartbeat(), 2000);
      try {
        // a failed send fails the batch only once the sends under way have ended and written their
        // outcomes: a failure reported earlier is retried (or the job closed) while they still run
        const results = await mapLimitSettled(docs, channel.settings.concurrency ?? 4, async (p) => {
          const itemId = `${input.jobId}:${p._id.toHexString()}`;
          const done = settled.get(itemId);
          if (done) return resultOf(p.sku, done);
          const now = cancelled.aborted ? null : await beforeSend();
          if (!now || now.cancelRequested)
            throw ApplicationFailure.nonRetryable('the publication was cancelled', 'cancelled');
          let item: Omit<PublicationItem, 'tenantId'>;
          let bindingOut: Settlement['binding'] = null;
          const binding = (p.bindings as unknown as { channelId: string; status?: string }[]).find(
            (b) => b.channelId === input.channelId,
          );
          // the channel switched off since the job started (the rest of the job is skipped with
          // the spec's per-product literal), or the product's own binding to it is
          const off =
            now.channelOff ??
            (binding?.status && INACTIVE_BINDING.includes(binding.status) && !input.options.forceUpdate
              ? 'CHANNEL_INACTIVE'
              : null);
          if (off) {
            item = {
              _id: itemId,
              jobId: input.jobId,
              productId: p._id.toHexString(),
              sku: p.sku,
              outcome: 'skipped',
              error: off,
              handle: null,
              at: new Date(),
            };
          } else {
            const categorized = await categorizer.categorize(p).catch((err: unknown) => {
              if (err instanceof RetryableChannelError)
                throw ApplicationFailure.retryable(err.message, 'channel-unavailable');
              throw err;
            });
            const doc = categorized.product;
            let outcome;
            if (!categorized.ok) outcome = { ok: false as const, error: categorized.error };
            else {
              await gate.slot();
              const payload = channelPayload(channel.type, doc, {
                includeVariants: input.options.includeVariants,
                includeInventory: input.options.includeInventory,
                stock: (sku) => stock.get(sku)?.total ?? 0,
                // as the category's key reads it: trimmed, blank is the type's default
                siteId: channel.settings.siteId?.trim() || undefined,
                targetMarketplaces: input.targetMarketplaces,
                category: categorized.category,
              });
              try {
                outcome = await sendProduct(
                  target,
                  doc.sku,
                  payload,
                  `${input.jobId}:${doc._id.toHexString()}`,
                  cancelled,
                );
              } catch (err) {
                if (err instanceof RetryableChannelError)
                  throw ApplicationFailure.retryable(err.message, 'channel-unavailable');
                throw err;
              }
            }
            const next = bindingAfter(doc, channel, outcome);
            if (next) bindingOut = { next, base: doc.bindings as unknown as Binding[] | undefined };
            item = outcome.ok
              ? {
                  _id: itemId,
                  jobId: input.jobId,
                  productId: doc._id.toHexString(),
                  sku: doc.sku,
                  outcome: 'published',
                  error: null,
                  handle: outcome.handle,
                  at: new Date(),
                }
              : {
                  _id: itemId,
                  jobId: input.jobId,
                  productId: doc._id.toHexString(),
                  sku: doc.sku,
                  outcome: 'failed',
                  error: outcome.error,
                  handle: null,
                  at: new Date(),
                };
          }
          await inBatch(lane, { productId: p._id, binding: bindingOut, item }, (batch: Settlement[]) =>
            settle(tenantDb, batch),
          );
          return resultOf(p.sku, item);
        });
        return { results: [...goneResults, ...results] };
      } finally {
        clearInterval(beat);
      }
    },

    /**
     * Counts the job's outcomes, writes the job record's final state and frees the channel. Safe to
     * run again: the record is written only while it is unfinished, and the lock only by its job.
     */
    async finishPublication(input: {
      tenantId: string;
      jobId: string;
      channelId: string;
      status: 'completed' | 'failed' | 'cancelled';
      cancelReason: string | null;
      total: number;
      /** A failed job's products from the batch that failed on: those without an outcome fail with `error`. */
      unsent?: { productIds: string[]; error: string };
      /** Answer the unsent products' outcomes (a sync job's); otherwise they are only recorded. */
      collectResults?: boolean;
    }) {
      const tenantDb = new TenantDb(db, input.tenantId);
      // a count over thousands of items may outlast the heartbeat timeout on a slow store
      const beat = setInterval(() => heartbeat(), 2000);
      try {
        const unsent = input.unsent ? await recordUnsent(tenantDb, input.jobId, input.unsent) : [];
        const all = await tenantDb
          .collection(publicationItems)
          .find({ jobId: input.jobId }, { projection: { outcome: 1 } })
          .toArray();
        const counts = { total: input.total, published: 0, failed: 0, skipped: 0 };
        for (const i of all)
          counts[i.outcome === 'published' ? 'published' : i.outcome === 'failed' ? 'failed' : 'skipped']++;
        const now = new Date();
        const written = await tenantDb.collection(jobs).findOneAndUpdate(
          { _id: input.jobId, status: { $nin: [...FINISHED_JOB_STATUSES] } },
          {
            $set: {
              status: input.status,
              updatedAt: now,
              finishedAt: now,
              result: {
                ...counts,
                processed: all.length,
                // every product has an outcome unless a cancel cut the job short
                percent: percentOf(all.length, input.total),
                cancelReason: input.cancelReason,
              },
            },
          },
          { returnDocument: 'after' },
        );
        if (written) jobsFinished.inc({ type: written.type, outcome: input.status });
        // announced by the write that finished it, or again (the same event) by a retry that finds it so
        const ended = written ?? (await tenantDb.collection(jobs).findOne({ _id: input.jobId }));
        if (ended?.status === input.status) await announceJobEnd(tenantDb, ended);
        await finishCategorization(tenantDb, input.jobId);
        await unlockChannel(tenantDb, input.channelId, input.jobId);
        return { ...counts, unsent: input.collectResults ? unsent : [] };
      } finally {
        clearInterval(beat);
      }
    },
  };
}

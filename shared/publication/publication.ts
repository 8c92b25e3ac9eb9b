import { defineCollection } from '../db/collection';
import { isDuplicateKeyError } from '../db/duplicate-key';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { isFinished, jobs, type JobRecord } from '../jobs/collection';
import type { ProductDoc } from '../products/types';
import { assignmentOf, categorySite } from '../categories/assignment';
import { resolveChannelType } from '../channels/channel-types';
import { isImage } from '../channels/payloads';
import type { ChannelDoc } from '../channels/channels';

export const PUBLICATION_JOB = 'publication';
export const MAX_PUBLICATION_PRODUCTS = 5000;

export interface PublishOptions {
  enableCategorization: boolean;
  forceRecategorization: boolean;
  includeInventory: boolean;
  includeVariants: boolean;
  forceUpdate: boolean;
  locationId?: string;
}

export const OPTION_DEFAULTS: PublishOptions = {
  enableCategorization: true,
  forceRecategorization: false,
  includeInventory: true,
  includeVariants: true,
  forceUpdate: false,
};

/** One product's outcome in one publication: written as it happens, so a retried batch skips what is done. */
export interface PublicationItem {
  _id: string; // `${jobId}:${productId}`
  tenantId: string;
  jobId: string;
  productId: string;
  sku: string;
  outcome: 'published' | 'failed' | 'skipped';
  error: string | null;
  handle: string | null;
  at: Date;
}

export const publicationItems = defineCollection<PublicationItem>({
  name: 'publication_items',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, jobId: 1 } }],
});

/** One running publication per channel: the lock's key is the channel; it names the job holding it. */
export interface PublicationLock {
  _id: string; // `${tenantId}:${channelId}`
  tenantId: string;
  channelId: string;
  jobId: string;
  createdAt: Date;
}

export const publicationLocks = defineCollection<PublicationLock>({
  name: 'publication_locks',
  scope: 'tenant',
  indexes: [],
});

/** Takes the channel's lock for a job: 409 EXPORT_IN_PROGRESS while another job of the channel runs. */
export async function lockChannel(
  tenantDb: TenantDb,
  channelId: string,
  jobId: string,
  settle: (job: JobRecord) => Promise<JobRecord> = async (job) => job,
): Promise<void> {
  const locks = tenantDb.collection(publicationLocks);
  const _id = `${tenantDb.tenantId}:${channelId}`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await locks.insertOne({ _id, channelId, jobId, createdAt: new Date() });
      return;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
    const held = await locks.findOne({ _id });
    if (!held) continue;
    // taken already by this job: a retry starting a job whose first request died after locking
    if (held.jobId === jobId) return;
    const found = await tenantDb.collection(jobs).findOne({ _id: held.jobId });
    const holder = found && (await settle(found)); // a holder whose workflow ended unrecorded is over
    if (holder && !isFinished(holder.status)) {
      throw new AppError(
        409,
        'EXPORT_IN_PROGRESS',
        `A publication to this channel is already running (${held.jobId})`,
        { details: { jobId: held.jobId, channelId } },
      );
    }
    // left by a job that ended without releasing it
    await locks.deleteOne({ _id, jobId: held.jobId });
  }
  throw new AppError(409, 'EXPORT_IN_PROGRESS', 'A publication to this channel is starting; retry shortly', {
    details: { channelId },
  });
}

export async function unlockChannel(tenantDb: TenantDb, channelId: string, jobId: string): Promise<void> {
  await tenantDb.collection(publicationLocks).deleteOne({ _id: `${tenantDb.tenantId}:${channelId}`, jobId });
}

/** The problems no review can fix: a product with one is rejected, not merely in need of review. */
export const BLOCKING_PROBLEMS: readonly string[] = ['no image', 'zero price'];

/**
 * The products that have none of the blocking problems, as a database condition (so a list of them
 * pages in the database). A media item's type is stored (the schema's default is image).
 */
export const WITHOUT_BLOCKING_PROBLEMS = { 'media.type': 'image', price: { $gt: 0 } } as const;

/** A product binding's statuses that keep a publication from sending to it (unless forceUpdate). */
export const INACTIVE_BINDING: readonly string[] = ['inactive', 'paused'];

/**
 * Why a product cannot be published on a channel as it is (empty: it can). On a marketplace a
 * product without a category under the channel's key needs categorization: a publication with
 * enableCategorization asks the channel's predictor for it (or fails the product if none fits).
 */
export function publishProblems(p: ProductDoc, channel: Pick<ChannelDoc, 'type' | 'settings'>): string[] {
  const problems: string[] = [];
  if (!(p.media ?? []).some(isImage)) problems.push('no image');
  if (!(p.price > 0)) problems.push('zero price');
  const site = categorySite(channel);
  const marketplace = resolveChannelType(channel.type)?.marketplace ?? false;
  if (marketplace && !assignmentOf(p, site.key)) problems.push(`needs categorization for ${site.key}`);
  // text of spaces only is no title or brand
  const missing = [!p.title?.value?.trim() && 'title', marketplace && !p.brand?.trim() && 'brand'].filter(Boolean);
  if (missing.length) problems.push(`missing required attributes: ${missing.join(', ')}`);
  return problems;
}

import { ObjectId } from 'mongodb';
import { defineCollection } from '../db/collection';
import { isDuplicateKeyError } from '../db/duplicate-key';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { jobs, type JobRecord } from '../jobs/collection';
import { Catalog, parseProductId } from '../products/catalog';
import { products } from '../products/collections';
import { buildFilter, type ProductFilters } from '../products/query';
import type { ProductDoc } from '../products/types';

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

const FINAL = ['completed', 'failed', 'cancelled'];

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
    const found = await tenantDb.collection(jobs).findOne({ _id: held.jobId });
    const holder = found && (await settle(found)); // a holder whose workflow ended unrecorded is over
    if (holder && !FINAL.includes(holder.status)) {
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

export type SelectionMode = 'single' | 'selected' | 'filtered' | 'all';

/**
 * The products a publication covers, as ids. productIds may be product ids or SKUs (a variant's
 * SKU selects its product); an id or SKU the tenant lacks is a 400 naming it.
 */
export async function resolveSelection(
  tenantDb: TenantDb,
  mode: SelectionMode,
  productIds: string[] | undefined,
  filters: (Omit<ProductFilters, 'q'> & { q?: string }) | undefined,
): Promise<string[]> {
  const col = tenantDb.collection(products);
  if (mode === 'all' || mode === 'filtered') {
    const filter = mode === 'all' ? {} : buildFilter(filters ?? {}).filter;
    const docs = await col
      .find(filter, { projection: { _id: 1 }, sort: { createdAt: 1, _id: 1 }, limit: MAX_PUBLICATION_PRODUCTS + 1 })
      .toArray();
    if (docs.length > MAX_PUBLICATION_PRODUCTS)
      throw new AppError(
        400,
        'bad-request',
        `The selection has more than ${MAX_PUBLICATION_PRODUCTS} products; narrow it with filters`,
      );
    return docs.map((d) => d._id.toHexString());
  }
  const catalog = new Catalog(tenantDb);
  const ids: string[] = [];
  const unknown: string[] = [];
  for (const ref of productIds ?? []) {
    const byId = parseProductId(ref) ? await catalog.get(ref) : null;
    const owner = byId ? null : await catalog.skuOwner(ref.trim().toUpperCase());
    const id = byId ? byId._id.toHexString() : owner?.productId;
    if (id) ids.push(id);
    else unknown.push(ref);
  }
  if (unknown.length)
    throw new AppError(400, 'bad-request', `No product with id or SKU: ${unknown.slice(0, 20).join(', ')}`, {
      field: 'productIds',
      details: { unknown },
    });
  return [...new Set(ids)];
}

/**
 * One page of a selection, for validation: `all` and `filtered` read the page and count the
 * selection in the database, so a catalog of any size can be validated page by page (a
 * publication itself takes at most MAX_PUBLICATION_PRODUCTS).
 */
export async function selectionPage(
  tenantDb: TenantDb,
  mode: SelectionMode,
  productIds: string[] | undefined,
  filters: ProductFilters | undefined,
  page: number,
  limit: number,
): Promise<{ docs: ProductDoc[]; total: number }> {
  if (mode === 'all' || mode === 'filtered') {
    const col = tenantDb.collection(products);
    const filter = mode === 'all' ? {} : buildFilter(filters ?? {}).filter;
    const [docs, total] = await Promise.all([
      col.find(filter, { sort: { createdAt: 1, _id: 1 }, skip: (page - 1) * limit, limit }).toArray(),
      col.countDocuments(filter),
    ]);
    return { docs: docs as ProductDoc[], total };
  }
  const ids = await resolveSelection(tenantDb, mode, productIds, filters);
  return { docs: await productsByIds(tenantDb, ids.slice((page - 1) * limit, page * limit)), total: ids.length };
}

export async function productsByIds(tenantDb: TenantDb, ids: string[]): Promise<ProductDoc[]> {
  const col = tenantDb.collection(products);
  const docs = await Promise.all(ids.map((id) => col.findOne({ _id: new ObjectId(id) })));
  return docs.filter((d): d is ProductDoc => d !== null);
}

/** Why a product cannot be published on a channel type (empty: it can). */
export function publishProblems(p: ProductDoc, channelType: string): string[] {
  const problems: string[] = [];
  if (!p.media?.length) problems.push('no image');
  if (!(p.price > 0)) problems.push('zero price');
  const marketplace = ['mercadolibre', 't1', 'amazon', 'walmart', 'liverpool', 'coppel', 'tiktokshop'].includes(
    channelType,
  );
  if (marketplace && !p.category?.name) problems.push(`no category for ${channelType}`);
  const missing = [!p.title?.value && 'title', marketplace && !p.brand && 'brand'].filter(Boolean);
  if (missing.length) problems.push(`missing required attributes: ${missing.join(', ')}`);
  return problems;
}

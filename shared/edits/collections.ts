import { defineCollection } from '../db/collection';
import type { PlannedOutcome } from './plan';

/**
 * What a preview planned for one product, kept so that an apply given the preview's id writes
 * exactly that (`set`/`unset` over the version it was planned at) and re-plans only the products
 * changed since. `_id` is `${previewId}:${productId}`: one per product, and a retried preview page
 * writes it again in place. Expired previews are checked on read and deleted by a periodic sweep.
 */
export interface EditPatchDoc {
  _id: string;
  tenantId: string;
  previewId: string;
  productId: string;
  sku: string;
  /** The product's version the plan was made from. */
  version: number;
  outcome: PlannedOutcome;
  createdAt: Date;
}

export const editPatches = defineCollection<EditPatchDoc>({
  name: 'bulk_edit_patches',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, previewId: 1, _id: 1 } }, { key: { tenantId: 1, createdAt: 1 } }],
});

/**
 * The products of a run, page by page, fixed when it starts (`_id` `${jobId}:${page}`): a page is
 * then read by primary key, where paging the selection by id range made the embedded database
 * decode the whole catalog for every page. A retried page reads the same products. A preview's
 * pages stay for its apply; an apply's are deleted when it ends.
 */
export interface EditPageDoc {
  _id: string;
  tenantId: string;
  jobId: string;
  page: number;
  productIds: string[];
  /**
   * The operations that began writing this page's products, marked before their first write: a
   * page run again (a retried activity, a reset workflow) looks for what it already did only
   * then, and a first run spends no read on it.
   */
  writtenBy?: string[];
  createdAt: Date;
}

export const editPages = defineCollection<EditPageDoc>({
  name: 'bulk_edit_pages',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, jobId: 1 } }, { key: { tenantId: 1, createdAt: 1 } }],
});

import { BulkOperations } from '../bulk/operations';
import type { ChannelDoc } from '../channels/channels';
import type { TenantDb } from '../db/tenant-db';
import { applyChanges, closeOperation, type Change } from '../edits/apply';
import { claimId, productSkus } from '../products/collections';
import {
  assignmentOf,
  categorySite,
  sameAssignment,
  withAssignment,
  type CategoryAssignment,
  type CategorySite,
} from './assignment';
import { notFound, productsBySku } from './lookup';

export interface CategoryRequest {
  id: string;
  name?: string | null;
  path?: string[] | null;
}

export interface SkuResult {
  sku: string;
  success: boolean;
  error?: string;
}

export interface AssignOutcome {
  site: CategorySite;
  category: { id: string; name: string | null; path: string[] | null };
  results: SkuResult[];
  /** The bulk operation that records the change; null when nothing changed. */
  operationId: string | null;
  assigned: number;
  unchanged: number;
  failed: number;
}

/** Attempts at a product that other writers keep changing under us, before it is answered as a failure. */
const WRITE_ATTEMPTS = 3;

/**
 * Writes a category for products on a channel's marketplace site, recorded as one bulk operation
 * (type `marketplace-category`) that the rollback workflow can undo. Each product's write is
 * guarded by its version: a product changed in between is read again and written again. A
 * product that already has this very assignment is a success that changes nothing; a request that
 * changes nothing records no operation.
 */
export async function assignCategory(
  tenantDb: TenantDb,
  req: {
    channel: ChannelDoc;
    skus: string[];
    category: CategoryRequest;
    source: CategoryAssignment['source'];
    actor: string;
    operationName?: string | null;
  },
): Promise<AssignOutcome> {
  const site = categorySite(req.channel);
  const category = { id: req.category.id.trim(), name: req.category.name ?? null, path: req.category.path ?? null };
  const skus = [...new Set(req.skus.map((s) => s.trim().toUpperCase()))];
  const value: Omit<CategoryAssignment, 'assignedAt'> = {
    ...category,
    source: req.source,
    channelId: req.channel._id.toHexString(),
  };
  const results = new Map<string, SkuResult>();
  let pending = await productsBySku(tenantDb, skus);
  const missing = skus.filter((s) => !pending.has(s));
  if (missing.length) {
    const holders = await tenantDb.collection(productSkus).findByIds(missing.map((s) => claimId(tenantDb.tenantId, s)));
    const kinds = new Map(holders.map((h) => [h.sku, h.kind]));
    for (const sku of missing) {
      const kind = kinds.get(sku);
      results.set(sku, { sku, success: false, error: notFound(kind && kind !== 'product' ? kind : null) });
    }
  }
  let operationId: string | null = null;
  let assigned = 0;
  let unchanged = 0;
  const ops = new BulkOperations(tenantDb);
  for (let attempt = 1; pending.size && attempt <= WRITE_ATTEMPTS; attempt++) {
    const assignedAt = new Date().toISOString();
    const changes: Change[] = [];
    for (const [sku, doc] of pending) {
      if (sameAssignment(assignmentOf(doc, site.key), value)) {
        unchanged++;
        results.set(sku, { sku, success: true });
        continue;
      }
      const metafields = withAssignment(doc.metafields ?? [], site.key, { ...value, assignedAt });
      changes.push({ current: doc, patch: { set: { metafields }, unset: [] } });
    }
    if (!changes.length) {
      pending = new Map(); // every one already says this: nothing left to write
      break;
    }
    operationId ??= await ops.start({
      type: 'marketplace-category',
      operationName: req.operationName ?? null,
      actor: req.actor,
      source: { channelId: value.channelId, metafieldKey: site.key, category },
    });
    const applied = await applyChanges(tenantDb, operationId, changes);
    const lost: string[] = [];
    for (const c of changes) {
      const outcome = applied.get(c.current._id.toHexString());
      if (outcome?.ok) {
        assigned++;
        results.set(c.current.sku, { sku: c.current.sku, success: true });
      } else lost.push(c.current.sku);
    }
    pending = lost.length ? await productsBySku(tenantDb, lost) : new Map();
    for (const sku of lost)
      if (!pending.has(sku)) results.set(sku, { sku, success: false, error: 'Product not found' }); // deleted meanwhile
  }
  for (const sku of pending.keys())
    results.set(sku, { sku, success: false, error: 'The product kept changing while it was written; send it again' });
  const ordered = skus.map((s) => results.get(s)!);
  const failed = ordered.filter((r) => !r.success).length;
  // every write lost to a request assigning the same (the category was there when re-read): the
  // operation recorded nothing, and is not kept
  if (operationId)
    operationId = await closeOperation(tenantDb, operationId, {
      totalProcessed: skus.length,
      created: 0,
      updated: assigned,
      skipped: unchanged,
      failed,
    });
  return { site, category, results: ordered, operationId, assigned, unchanged, failed };
}

import { ObjectId, type Filter } from 'mongodb';

import {
  BulkOperations,
  beforeImage,
  bulkOperationItems,
  type BulkOperation,
  type BulkOperationItem,
} from '../bulk/operations';
import { mapLimit } from '../concurrency';
import type { TenantDb } from '../db/tenant-db';
import { Catalog } from '../products/catalog';
import { productSkus, products } from '../products/collections';
import { writtenBy } from '../products/edit-marks';
import type { ProductDoc } from '../products/types';
import { applyChanges, type Change } from './apply';
import { editPages, editPatches, type EditPatchDoc } from './collections';
import { contentOf } from '../products/content';
import { diffContent, diffsOf, planProposal, type PlannedOutcome, type Planner } from './plan';
import { FieldSummaries, ZERO_COUNTS, type EditCounts, type PageResult, type ProductError } from './summary-rules';

/** What a run edits and how; fixed for the whole run (a job's record keeps it). */
export interface EditRun {
  /** The run's job: its pages (and, for a preview, its plans) are kept under this id. */
  jobId: string;
  type: Extract<BulkOperation['type'], 'flow' | 'ai-transform'>;
  mode: 'preview' | 'apply';
  /** The bulk operation an apply records its changes in (started with its first change). */
  operationId: string;
  /** Preview: where the plans are kept (the job id). Apply: the preview whose plans it writes, or null. */
  previewId: string | null;
  operation: { operationName: string | null; actor: string; source: Record<string, unknown> };
  /** The selection, when not applying a preview. */
  selection: SelectedProducts;
  pageSize: number;
  /** Products planned at once (a model call each for AI transforms). */
  concurrency: number;
}

interface Candidate {
  current: ProductDoc;
  /** A preview's plan for this product at `version` (applying a preview). */
  stored?: EditPatchDoc;
}

/** What a run's start reads to fix its products: the SKUs' products (resolved at the request), all, or a filter's. */
export type SelectedProducts = { productIds: string[] } | { all: true } | { filter: Filter<ProductDoc> };

/**
 * Fixes a run's products as pages (ids in order), once, when it starts: later writes, including
 * the run's own (a flow may move a product out of its filter), never move a product between
 * pages. Run again (a retried start), it writes the same pages over. Answers the count of
 * products and pages.
 */
export async function snapshotSelection(
  tenantDb: TenantDb,
  jobId: string,
  selection: SelectedProducts,
  pageSize: number,
): Promise<{ total: number; pages: number }> {
  const ids = [...new Set(await selectedIds(tenantDb, selection))].sort();
  const pages = Math.ceil(ids.length / pageSize);
  const col = tenantDb.collection(editPages);
  const createdAt = new Date();
  for (let from = 0; from < pages; from += 100) {
    const batch = Array.from({ length: Math.min(100, pages - from) }, (_, i) => from + i);
    await col.bulkWrite(
      batch.map((page) => ({
        updateOne: {
          filter: { _id: `${jobId}:${page}` },
          update: { $set: { jobId, page, productIds: ids.slice(page * pageSize, (page + 1) * pageSize), createdAt } },
          upsert: true,
        },
      })),
      { ordered: false },
    );
  }
  await col.deleteMany({ jobId, page: { $gte: pages } });
  return { total: ids.length, pages };
}

/**
 * The ids a selection names. All products are read from the SKU space (a claim per product, a
 * tenth of a product's size), where reading the products themselves decodes every one of them on
 * the embedded database; a filter needs the products.
 */
async function selectedIds(tenantDb: TenantDb, selection: SelectedProducts): Promise<string[]> {
  if ('productIds' in selection) return selection.productIds;
  if ('all' in selection)
    return (
      await tenantDb
        .collection(productSkus)
        .find({ kind: 'product' }, { projection: { productId: 1 } })
        .toArray()
    ).map((c) => c.productId);
  return (
    await tenantDb
      .collection(products)
      .find(selection.filter, { projection: { _id: 1 } })
      .toArray()
  ).map((p) => p._id.toHexString());
}

/** The pages of a run, or of the preview an apply writes. */
export async function pageCount(tenantDb: TenantDb, jobId: string): Promise<number> {
  return tenantDb.collection(editPages).countDocuments({ jobId });
}

/** Drops a finished apply's pages (a preview's stay for its apply, until the sweep). */
export async function dropPages(tenantDb: TenantDb, jobId: string): Promise<void> {
  await tenantDb.collection(editPages).deleteMany({ jobId });
}

/**
 * One page of a bulk edit: its products (fixed at the start, or a preview's), planned by the
 * engine with the rules of a product write, then kept as a preview's plans or applied and
 * recorded. Safe to run again (a retried activity): every product of the page this operation
 * already changed is recognised by its record and counted once, never changed twice. Reads are
 * by primary key only.
 */
export async function runEditPage(
  tenantDb: TenantDb,
  run: EditRun,
  planner: Planner,
  page: number,
  opts: { budgetExhausted?: boolean; onProgress?: () => void } = {},
): Promise<PageResult> {
  const catalog = new Catalog(tenantDb);
  const fromPreview = run.mode === 'apply' && run.previewId !== null;
  const source = fromPreview ? run.previewId! : run.jobId;
  const pageDoc = await tenantDb.collection(editPages).findOne({ _id: `${source}:${page}` });
  const ids = pageDoc?.productIds ?? [];

  const found = await tenantDb.collection(products).findByIds(ids.map((id) => new ObjectId(id)));
  const byId = new Map(found.map((p) => [p._id.toHexString(), p]));
  const stored = new Map<string, EditPatchDoc>();
  if (fromPreview)
    for (const plan of await tenantDb.collection(editPatches).findByIds(ids.map((id) => `${source}:${id}`)))
      stored.set(plan.productId, plan);
  // what this operation already did to the page's products (an earlier attempt of this page)
  const earlier = new Map<string, BulkOperationItem>();
  if (run.mode === 'apply' && pageDoc?.writtenBy?.includes(run.operationId))
    for (const item of await tenantDb
      .collection(bulkOperationItems)
      .findByIds(ids.map((id) => `${run.operationId}:${id}`)))
      earlier.set(item.productId, item);

  const counts: EditCounts = { ...ZERO_COUNTS };
  const errors: ProductError[] = [];
  const fields = new FieldSummaries();
  const replanned: string[] = [];
  let budgetExhausted = opts.budgetExhausted ?? false;

  const open: Candidate[] = [];
  const stale: string[] = [];
  for (const id of ids) {
    const current = byId.get(id) ?? null;
    const item = earlier.get(id);
    const plan = stored.get(id);
    if (item && writtenBy(current, run.operationId)) {
      // changed by an earlier attempt (and perhaps by someone since): counted, not changed again
      counts.matched++;
      counts.changed++;
      const before = beforeImage(item, current);
      if (current && before) fields.add(item.sku, diffContent(plainContent(before), plainContent(current)));
    } else if (item) {
      // recorded by an earlier attempt that died before its write (a write that landed marks the
      // product for good: editedBy): the record goes, and the product is planned afresh (or
      // answered as deleted). Kept, it would undo a change made since, or only part of a new plan
      stale.push(id);
      if (current) open.push({ current, stored: plan });
      else {
        counts.matched++;
        counts.failed++;
        errors.push({
          productId: id,
          sku: item.sku,
          code: 'not-found',
          message: 'the product was deleted after the run started',
        });
      }
    } else if (!current) {
      counts.matched++;
      counts.failed++;
      errors.push({
        productId: id,
        sku: plan?.sku ?? id,
        code: 'not-found',
        message: 'the product was deleted after the run started',
      });
    } else if (fromPreview && !plan) {
      // a preview's page lists only products it planned; one without a plan was skipped by it (its page failed)
      counts.matched++;
      counts.failed++;
      errors.push({
        productId: id,
        sku: current.sku,
        code: 'not-found',
        message: 'the preview has no plan for this product',
      });
    } else open.push({ current, stored: plan });
  }

  // plan: a preview's stored plan while its product is as planned, else the engine
  if (stale.length) await new BulkOperations(tenantDb).unrecordMany(run.operationId, stale);
  const outcomes = await mapLimit(open, run.concurrency, async (c): Promise<PlannedOutcome> => {
    if (c.stored && c.stored.version === c.current.version) return c.stored.outcome;
    if (c.stored) replanned.push(c.current.sku);
    if (budgetExhausted) return budgetRefusal();
    const outcome = await planProposal(catalog, c.current, await planner.propose(c.current));
    if (outcome.kind === 'failed' && outcome.code === 'BUDGET_EXCEEDED') budgetExhausted = true;
    opts.onProgress?.();
    return outcome;
  });

  if (run.mode === 'preview') {
    await keepPlans(tenantDb, run.previewId!, open, outcomes);
    // a preview writes no product: the holds its planning put on what products name go now
    await catalog.releaseHolds();
  }
  const changes: { c: Candidate; change: Change }[] = [];
  for (const [i, c] of open.entries()) {
    const o = outcomes[i];
    const productId = c.current._id.toHexString();
    counts.matched++;
    if (o.kind === 'change') changes.push({ c, change: { current: c.current, patch: o.patch } });
    else if (o.kind === 'unchanged') counts.unchanged++;
    else if (o.kind === 'invalid') {
      counts.invalid++;
      errors.push({
        productId,
        sku: c.current.sku,
        code: 'validation-error',
        message: o.message,
        fieldErrors: o.fieldErrors,
      });
    } else {
      counts.failed++;
      errors.push({ productId, sku: c.current.sku, code: o.code, message: o.message, retryable: o.retryable });
    }
  }
  if (run.mode === 'apply' && changes.length) {
    await new BulkOperations(tenantDb).start({ id: run.operationId, type: run.type, ...run.operation });
    await tenantDb
      .collection(editPages)
      .updateOne({ _id: `${source}:${page}` }, { $addToSet: { writtenBy: run.operationId } });
  }
  const applied =
    run.mode === 'apply'
      ? await applyChanges(
          tenantDb,
          run.operationId,
          changes.map((x) => x.change),
        )
      : null;
  for (const { c, change } of changes) {
    const result = applied?.get(c.current._id.toHexString());
    if (result && !result.ok) {
      counts.failed++;
      errors.push({
        productId: c.current._id.toHexString(),
        sku: c.current.sku,
        code: 'conflict',
        message: result.message,
      });
      continue;
    }
    counts.changed++;
    fields.add(c.current.sku, diffsOf(c.current, change.patch));
  }
  return { counts, errors, fields: fields.list(), replanned: replanned.sort(), budgetExhausted };
}

function budgetRefusal(): PlannedOutcome {
  return {
    kind: 'failed',
    code: 'BUDGET_EXCEEDED',
    message: "the tenant's daily AI token budget is used up; the rest of the run was not sent to the model",
    retryable: true,
  };
}

const plainContent = (doc: ProductDoc) => JSON.parse(JSON.stringify(contentOf(doc))) as Record<string, unknown>;

/** A preview's plans, one document per product, written again in place by a retried page. */
async function keepPlans(tenantDb: TenantDb, previewId: string, open: Candidate[], outcomes: PlannedOutcome[]) {
  if (!open.length) return;
  const createdAt = new Date();
  await tenantDb.collection(editPatches).bulkWrite(
    open.map((c, i) => {
      const productId = c.current._id.toHexString();
      return {
        updateOne: {
          filter: { _id: `${previewId}:${productId}` },
          update: {
            $set: {
              previewId,
              productId,
              sku: c.current.sku,
              version: c.current.version,
              outcome: outcomes[i],
              createdAt,
            },
          },
          upsert: true,
        },
      };
    }),
    { ordered: false },
  );
}

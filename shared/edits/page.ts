import { ObjectId, type Filter } from 'mongodb';

import { BulkOperations, bulkOperationItems, type BulkOperation, type BulkOperationItem } from '../bulk/operations';
import { mapLimit } from '../concurrency';
import type { TenantDb } from '../db/tenant-db';
import { Catalog } from '../products/catalog';
import { products } from '../products/collections';
import type { ProductDoc } from '../products/types';
import { applyChanges, type Change } from './apply';
import { editPatches, type EditPatchDoc } from './collections';
import { contentOf, diffContent, diffsOf, planProposal, type PlannedOutcome, type Planner } from './plan';
import { FieldSummaries, ZERO_COUNTS, type EditCounts, type PageResult, type ProductError } from './summary-rules';

/** What a run edits and how; fixed for the whole run (a job's record keeps it). */
export interface EditRun {
  type: Extract<BulkOperation['type'], 'flow' | 'ai-transform'>;
  mode: 'preview' | 'apply';
  /** The bulk operation an apply records its changes in (started with its first change). */
  operationId: string;
  /** Preview: where the plans are kept (the job id). Apply: the preview whose plans it writes, or null. */
  previewId: string | null;
  operation: { operationName: string | null; actor: string; source: Record<string, unknown> };
  /** The selection, when not applying a preview. */
  filter: Filter<ProductDoc>;
  pageSize: number;
  /** Products planned at once (a model call each for AI transforms). */
  concurrency: number;
}

interface Candidate {
  current: ProductDoc;
  /** A preview's plan for this product at `version` (applying a preview). */
  stored?: EditPatchDoc;
}

/**
 * One page of a bulk edit: the next `pageSize` products after `after` (by id), planned by the
 * engine with the rules of a product write, then kept as a preview's plans or applied and
 * recorded. Safe to run again for the same `after` (a retried activity): every product this
 * operation already changed in the page's id range is recognised by its record and counted once,
 * never changed twice, even if it no longer matches the selection. Products are counted by the
 * page whose id range holds them, so pages partition the run's counts.
 */
export async function runEditPage(
  tenantDb: TenantDb,
  run: EditRun,
  planner: Planner,
  after: string | null,
  opts: { budgetExhausted?: boolean; onProgress?: () => void } = {},
): Promise<PageResult> {
  const catalog = new Catalog(tenantDb);
  const col = tenantDb.collection(products);
  const fromPreview = run.mode === 'apply' && run.previewId !== null;

  // the page: products after `after`, or a preview's plans after it
  let candidates: Candidate[];
  let missing: EditPatchDoc[] = [];
  let lastId: string | null;
  let done: boolean;
  if (fromPreview) {
    const plans = await tenantDb
      .collection(editPatches)
      .find(
        { previewId: run.previewId!, _id: { $gt: `${run.previewId}:${after ?? ''}` } },
        { sort: { _id: 1 }, limit: run.pageSize },
      )
      .toArray();
    const found = await col.find({ _id: { $in: plans.map((p) => new ObjectId(p.productId)) } }).toArray();
    const byId = new Map(found.map((p) => [p._id.toHexString(), p]));
    candidates = plans.flatMap((stored) => {
      const current = byId.get(stored.productId);
      return current ? [{ current, stored }] : [];
    });
    missing = plans.filter((p) => !byId.has(p.productId));
    lastId = plans.length ? plans[plans.length - 1].productId : after;
    done = plans.length < run.pageSize;
  } else {
    const range = after ? { _id: { $gt: new ObjectId(after) } } : {};
    const page = await col
      .find({ $and: [run.filter, range] } as Filter<ProductDoc>, { sort: { _id: 1 }, limit: run.pageSize })
      .toArray();
    candidates = page.map((current) => ({ current }));
    lastId = page.length ? page[page.length - 1]._id.toHexString() : after;
    done = page.length < run.pageSize;
  }

  const counts: EditCounts = { ...ZERO_COUNTS };
  const errors: ProductError[] = [];
  const fields = new FieldSummaries();
  const replanned: string[] = [];
  let budgetExhausted = opts.budgetExhausted ?? false;

  for (const m of missing) {
    counts.matched++;
    counts.failed++;
    errors.push({
      productId: m.productId,
      sku: m.sku,
      code: 'not-found',
      message: 'the product was deleted after the preview',
    });
  }

  // what this operation already did in the page's range (an earlier attempt of this page)
  const earlier = new Map<string, BulkOperationItem>();
  if (run.mode === 'apply') {
    const upTo = done ? {} : { $lte: `${run.operationId}:${lastId}` };
    for (const item of await tenantDb
      .collection(bulkOperationItems)
      .find({ operationId: run.operationId, _id: { $gt: `${run.operationId}:${after ?? ''}`, ...upTo } })
      .toArray())
      earlier.set(item.productId, item);
  }
  const countDone = (item: BulkOperationItem, current: ProductDoc | null) => {
    counts.matched++;
    counts.changed++;
    if (current && item.before) fields.add(item.sku, diffContent(plainContent(item.before), plainContent(current)));
  };
  const open: Candidate[] = [];
  for (const c of candidates) {
    const item = earlier.get(c.current._id.toHexString());
    earlier.delete(c.current._id.toHexString());
    // recorded and not written (the attempt stopped in between): planned again below, written once
    if (item && item.before && c.current.version === item.before.version) open.push(c);
    else if (item) countDone(item, c.current);
    else open.push(c);
  }
  // changed by an earlier attempt and no longer selected (the edit moved it out of the filter)
  if (earlier.size) {
    const left = [...earlier.values()];
    const now = await col.find({ _id: { $in: left.map((i) => new ObjectId(i.productId)) } }).toArray();
    const byId = new Map(now.map((p) => [p._id.toHexString(), p]));
    for (const item of left) countDone(item, byId.get(item.productId) ?? null);
  }

  // plan: a preview's stored plan while its product is as planned, else the engine
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
  return { lastId, done, counts, errors, fields: fields.list(), replanned: replanned.sort(), budgetExhausted };
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

import { isDeepStrictEqual } from 'node:util';
import { ObjectId } from 'mongodb';
import { BulkOperations, bulkOperationItems } from '../bulk/operations';
import type { TenantDb } from '../db/tenant-db';
import { mapLimit } from '../concurrency';
import { AppError } from '../errors/catalog';
import { Catalog } from '../products/catalog';
import { presentProduct } from '../products/present';
import type { ProductDoc, ProductInput } from '../products/types';
import type { ParsedProduct } from './layout';
import { mergeWithStored } from './merge';
import { applyChanges } from '../edits/apply';
import { patchBetween, type Patch } from '../edits/plan';
import { contentOf } from '../products/content';
import { editedByAfter, writtenBy } from '../products/edit-marks';
import { skusOf } from '../products/normalize';

export interface ImportOptions {
  createIfNotExists: boolean;
  skipErrorRows: boolean;
  batchSize: number;
  fieldsToUpdate?: string[];
  operationName?: string | null;
  actor: string;
  /** What the operation record says the rows came from (format, file, job). */
  source: Record<string, unknown>;
}

export interface RowError {
  row: number;
  sku: string | null;
  message: string;
}

export interface ImportCounts {
  totalProcessed: number;
  created: number;
  updated: number;
  skipped: number;
  failed: number;
}

/** What one product of the file will do. */
export type Plan =
  | { kind: 'create'; parsed: ParsedProduct; product: ProductInput; _id?: ObjectId }
  | { kind: 'update'; parsed: ParsedProduct; current: ProductDoc; product: ProductInput; changed: string[] }
  | { kind: 'skip'; parsed: ParsedProduct; reason: string; current?: ProductDoc }
  | { kind: 'error'; parsed: ParsedProduct; messages: string[] };

function comparable(doc: ProductInput | ProductDoc): Record<string, unknown> {
  const shown = presentProduct({
    ...doc,
    _id: { toHexString: () => '' },
    createdAt: new Date(0),
    updatedAt: new Date(0),
    version: 0,
    tenantId: '',
  } as unknown as ProductDoc);
  delete shown.id;
  delete shown.createdAt;
  delete shown.updatedAt;
  delete shown.tenantId;
  return JSON.parse(JSON.stringify(shown));
}

/** Whether an update keeps the product's SKUs and their roles (then it is a plain guarded write of the fields it changes). */
function keepsSkus(current: ProductDoc, product: ProductInput): boolean {
  const keys = (p: ProductInput) =>
    skusOf(p)
      .map((s) => `${s.kind}:${s.sku}`)
      .sort()
      .join('\n');
  return keys(current) === keys(product);
}

/** The write from the stored product to the planned one, as plain JSON. */
function patchOf(current: ProductDoc, product: ProductInput): Patch {
  const plain = (v: unknown) => JSON.parse(JSON.stringify(v)) as Record<string, unknown>;
  return patchBetween(plain(contentOf(current)), plain(product));
}

function messageOf(err: unknown): string {
  if (err instanceof AppError) {
    const fe = err.extra.fieldErrors as { field: string; message: string }[] | undefined;
    return fe?.length ? fe.map((f) => `${f.field} ${f.message}`).join('; ') : err.message;
  }
  throw err;
}

/** How many products are planned (read) at once. */
const PLAN_CONCURRENCY = 16;

/**
 * Decides, without writing, what each parsed product would do. `idOf` fixes the id a created
 * product gets (an async chunk derives it from the job and the product's place in the file), so
 * a retried chunk that finds the SKU claimed by that very id knows it is its own earlier attempt.
 */
export async function planImport(
  tenantDb: TenantDb,
  parsed: ParsedProduct[],
  opts: Pick<ImportOptions, 'createIfNotExists' | 'fieldsToUpdate'> & {
    onProgress?: () => void;
    idOf?: (index: number) => ObjectId;
    /**
     * The import's operation and when it started (an async import planning one chunk of many): a
     * SKU held by a product this import created from another row is refused, not planned as an
     * update of that product (a file that gives one SKU to two products; the rows of one chunk
     * meet the same refusal when they are written).
     */
    createdBy?: { operationId: string; since: Date };
    /**
     * Nothing will be written (a preview): the hold each plan puts on the bundle components and
     * BOM materials it names (against a delete) is let go once planned, not left to expire.
     */
    planOnly?: boolean;
  },
): Promise<Plan[]> {
  const catalog = new Catalog(tenantDb);
  // the SKUs of rows refused on their own (a variation with a bad Type, a Shopify row without a
  // handle): the product they belong to is written without them, and must keep its stored
  // variants of those SKUs rather than lose them (an async chunk sees the rows it holds)
  const refused = new Set(parsed.flatMap((p) => (p.body === null && p.sku ? [p.sku.toUpperCase()] : [])));
  const plans = await mapLimit(parsed, PLAN_CONCURRENCY, async (p, index): Promise<Plan> => {
    if (p.errors.length || !p.body) return { kind: 'error', parsed: p, messages: p.errors };
    const sku = String(p.body.sku ?? '')
      .trim()
      .toUpperCase();
    const _id = opts.idOf?.(index);
    try {
      const owner = sku ? await catalog.skuOwner(sku) : null;
      const current = owner?.kind === 'product' ? await catalog.get(owner.productId) : null;
      opts.onProgress?.();
      if (owner?.kind === 'variant') {
        return {
          kind: 'error',
          parsed: p,
          messages: [`SKU ${sku} is a variant of another product (${owner.productId})`],
        };
      } else if (owner && !current && _id && owner.productId === _id.toHexString()) {
        return { kind: 'create', parsed: p, product: await catalog.prepare(p.body), _id }; // claimed by our earlier attempt
      } else if (owner) {
        if (!current) throw new AppError(409, 'conflict', `product ${sku} changed during the import`);
        // (a product created with our own id is this chunk's earlier attempt, planned like any other)
        if (opts.createdBy && current.createdAt >= opts.createdBy.since && owner.productId !== _id?.toHexString()) {
          const item = await tenantDb
            .collection(bulkOperationItems)
            .findOne({ _id: `${opts.createdBy.operationId}:${owner.productId}` });
          if (item?.action === 'created')
            return {
              kind: 'error',
              parsed: p,
              messages: [`SKU ${sku} is given to another product of this file too (${owner.productId})`],
            };
        }
        const product = await catalog.prepare(mergeWithStored(current, p, opts.fieldsToUpdate, refused), current);
        const before = comparable(current);
        const after = comparable(product);
        const changed = Object.keys({ ...before, ...after }).filter((k) => !isDeepStrictEqual(before[k], after[k]));
        return changed.length
          ? { kind: 'update', parsed: p, current, product, changed }
          : { kind: 'skip', parsed: p, reason: 'unchanged', current };
      } else if (!opts.createIfNotExists) {
        return {
          kind: 'skip',
          parsed: p,
          reason: `no product with SKU ${sku}; send createIfNotExists: true to create it`,
        };
      }
      return { kind: 'create', parsed: p, product: await catalog.prepare(p.body), _id };
    } catch (err) {
      return { kind: 'error', parsed: p, messages: [messageOf(err)] };
    }
  });
  if (opts.planOnly) await catalog.releaseHolds();
  return refuseSharedTargets(plans);
}

/**
 * A file that gives one SKU to two of its products (Shopify allows it across handles), or two
 * products that both update one stored product: only one write could land, so the later product
 * is an error, decided before anything is written. Reporting both as done would claim a write
 * that never happened, and an all-or-nothing import would write the others.
 */
function refuseSharedTargets(plans: Plan[]): Plan[] {
  const firstRow = new Map<string, number>();
  return plans.map((plan) => {
    if (plan.kind === 'error' || (plan.kind === 'skip' && !plan.current)) return plan;
    const current = plan.kind === 'create' ? undefined : plan.current;
    const targets = [
      ...(plan.kind === 'skip' ? [] : skusOf(plan.product).map((s) => s.sku.toUpperCase())),
      ...(current ? [`#${current._id.toHexString()}`, ...skusOf(current).map((s) => s.sku)] : []),
    ];
    const taken = targets.find((t) => firstRow.has(t));
    if (taken === undefined) {
      for (const t of targets) firstRow.set(t, plan.parsed.rows[0]);
      return plan;
    }
    const what = taken.startsWith('#') ? `product ${taken.slice(1)}` : `SKU ${taken}`;
    return {
      kind: 'error',
      parsed: plan.parsed,
      messages: [`${what} is also written by the product of row ${firstRow.get(taken)} of this file`],
    };
  });
}

export function countPlans(plans: Plan[]): ImportCounts & { errors: RowError[] } {
  const counts = { totalProcessed: 0, created: 0, updated: 0, skipped: 0, failed: 0 };
  const errors: RowError[] = [];
  for (const plan of plans) {
    const rows = plan.parsed.rows.length;
    counts.totalProcessed += rows;
    if (plan.kind === 'create') counts.created += rows;
    else if (plan.kind === 'update') counts.updated += rows;
    else if (plan.kind === 'skip') counts.skipped += rows;
    else {
      counts.failed += rows;
      for (const row of plan.parsed.rows)
        errors.push({ row, sku: plan.parsed.sku, message: plan.messages.join('; ') || 'invalid row' });
    }
  }
  return { ...counts, errors };
}

/**
 * Applies a plan in batches, recording every change with its before-image in one bulk
 * operation. A write that fails (a concurrent change, a SKU taken meanwhile) turns its rows into
 * errors; the others go on. Returns the counts as they ended and the operation id (null when
 * nothing changed).
 */
export async function applyImport(
  tenantDb: TenantDb,
  plans: Plan[],
  opts: ImportOptions & {
    /** An async job's chunks share one operation, named after the job. */
    operationId?: string;
    finish?: boolean;
    /** Called after each product written (an activity heartbeats here). */
    onProgress?: () => void;
  },
): Promise<{ counts: ImportCounts; errors: RowError[]; operationId: string | null }> {
  const catalog = new Catalog(tenantDb);
  const ops = new BulkOperations(tenantDb);
  const result = countPlans(plans);
  const { errors, ...counts } = result;
  if (opts.operationId) {
    // A retried chunk: what an earlier attempt recorded for these products. A write that landed
    // (the product is ours: created by it, or marked by it, edit-marks.ts) reads as unchanged and
    // is counted as what it was. One recorded but never made goes: its before-image may be older
    // than someone's change since, which the rollback would undo (the write records afresh).
    const seen = plans.flatMap((p) => (p.kind === 'update' || (p.kind === 'skip' && p.current) ? [p] : []));
    const earlier = await tenantDb
      .collection(bulkOperationItems)
      .findByIds(seen.map((p) => `${opts.operationId}:${p.current!._id.toHexString()}`));
    const byProduct = new Map(earlier.map((item) => [item.productId, item]));
    const stale: string[] = [];
    for (const plan of seen) {
      const current = plan.current!;
      const item = byProduct.get(current._id.toHexString());
      if (!item || (item.action !== 'created' && item.action !== 'updated')) continue;
      if (item.action === 'created' || writtenBy(current, opts.operationId)) {
        if (plan.kind === 'skip') {
          counts.skipped -= plan.parsed.rows.length;
          counts[item.action] += plan.parsed.rows.length;
        }
      } else stale.push(item.productId);
    }
    await ops.unrecordMany(opts.operationId, stale);
  }
  if (!opts.skipErrorRows && counts.failed > 0) {
    // all or nothing: one bad row means no row is written
    return {
      counts: { ...counts, created: 0, updated: 0, skipped: counts.totalProcessed - counts.failed },
      errors,
      operationId: null,
    };
  }
  const writes = plans.filter((p) => p.kind === 'create' || p.kind === 'update');
  if (writes.length === 0 && !opts.operationId) return { counts, errors, operationId: null };
  const operationId = await ops.start({
    id: opts.operationId,
    type: 'csv-import',
    operationName: opts.operationName,
    actor: opts.actor,
    source: opts.source,
  });
  const fail = (plan: Plan, err: unknown) => {
    const rows = plan.parsed.rows.length;
    const message = messageOf(err);
    if (plan.kind === 'create') counts.created -= rows;
    else counts.updated -= rows;
    counts.failed += rows;
    for (const row of plan.parsed.rows) errors.push({ row, sku: plan.parsed.sku, message });
  };
  for (let i = 0; i < writes.length; i += opts.batchSize) {
    const batch = writes.slice(i, i + opts.batchSize);
    // creates: recorded first (so a crash in between leaves nothing a rollback cannot see), then stored together
    const creates = batch.flatMap((p) => (p.kind === 'create' ? [{ plan: p, _id: p._id ?? new ObjectId() }] : []));
    if (creates.length) {
      await ops.recordMany(
        operationId,
        creates.map((c) => ({
          productId: c._id.toHexString(),
          sku: c.plan.product.sku,
          action: 'created' as const,
          before: null,
          afterVersion: 1,
        })),
      );
      const stored = await catalog.insertMany(creates.map((c) => ({ product: c.plan.product, _id: c._id })));
      for (const [j, result] of stored.entries()) {
        if (result instanceof AppError) {
          await ops.unrecord(operationId, creates[j]._id.toHexString());
          fail(creates[j].plan, result);
        }
      }
      opts.onProgress?.();
    }
    // updates that keep the product's SKUs: recorded, then written together, guarded by version (shared/edits)
    const updates = batch.filter((p): p is Extract<Plan, { kind: 'update' }> => p.kind === 'update');
    const together = new Set(updates.filter((p) => keepsSkus(p.current, p.product)));
    const applied = await applyChanges(
      tenantDb,
      operationId,
      [...together].map((p) => ({ current: p.current, patch: patchOf(p.current, p.product) })),
    );
    for (const plan of together) {
      const result = applied.get(plan.current._id.toHexString());
      if (result && !result.ok)
        fail(plan, new AppError(409, 'conflict', `product ${plan.current.sku} ${result.message}`));
    }
    if (together.size) opts.onProgress?.();
    // updates that change SKUs, one by one: recorded first too, and written with the operation's
    // mark (edit-marks.ts), so a retry after a kill tells its own write from someone else's
    for (const plan of updates) {
      if (together.has(plan)) continue;
      const productId = plan.current._id.toHexString();
      await ops.record(operationId, {
        productId,
        sku: plan.current.sku,
        action: 'updated',
        before: plan.current,
        afterVersion: plan.current.version + 1,
      });
      try {
        const marked = {
          ...plan.product,
          lastEditBy: operationId,
          editedBy: editedByAfter(plan.current, operationId),
        };
        await catalog.write(plan.current, marked);
        opts.onProgress?.();
      } catch (err) {
        if (!(err instanceof AppError)) throw err; // not a refusal: the retry finds the record
        await ops.unrecord(operationId, productId);
        fail(plan, err);
      }
    }
  }
  errors.sort((a, b) => a.row - b.row);
  if (opts.finish !== false) {
    // every write lost (a concurrent import took the SKU) or was refused: no operation
    if (counts.created + counts.updated === 0 && (await ops.discardIfEmpty(operationId)))
      return { counts, errors, operationId: null };
    await ops.finish(operationId, 'completed', counts);
  }
  return { counts, errors, operationId };
}

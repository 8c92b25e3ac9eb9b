import { pageWindow } from '../paging';
import { ObjectId } from 'mongodb';
import { defineCollection } from '../db/collection';
import { duplicateKeyIndexes, isDuplicateKeyError } from '../db/duplicate-key';
import type { TenantDb } from '../db/tenant-db';
import { newId } from '../ids';
import { isFinished, jobs } from '../jobs/collection';
import { products } from '../products/collections';
import type { ProductDoc } from '../products/types';
import { writtenBy } from '../products/edit-marks';
import { skusOf } from '../products/normalize';
import { recordEvent } from '../webhooks/events';
import { presentOperation } from './present';

/**
 * Bulk operations: every import (and later every rule flow and AI transform) that changes
 * products is recorded with a before-image of each product it created or changed, so it can be
 * rolled back for as long as nothing changed those products since.
 */
export interface BulkOperation {
  _id: string; // bop_…
  tenantId: string;
  type: 'csv-import' | 'rollback' | 'flow' | 'ai-transform' | 'marketplace-category';
  status: 'processing' | 'completed' | 'failed' | 'rolled_back';
  operationName: string | null;
  actor: string;
  source: Record<string, unknown>;
  /** totalProcessed = created + updated + skipped + failed + deleted (a rollback's deleted products; absent on older records). */
  counts: {
    totalProcessed: number;
    created: number;
    updated: number;
    skipped: number;
    failed: number;
    deleted?: number;
  };
  /** For a rollback: the operation it undid. For an undone operation: the rollback that undid it. */
  rollbackOf: string | null;
  rolledBackBy: string | null;
  /**
   * Why a failed rollback refused to start, or why an operation ended without its process
   * (interrupted: see leaseUntil). Absent on other operations and on older records.
   */
  error?: OperationError | null;
  /**
   * An operation run inside a request (started without an id; a job names its operation after
   * itself) has no workflow to finish it if its process dies: past this time, reading it ends it
   * from what it recorded. Null for a job's operation.
   */
  leaseUntil?: Date | null;
  createdAt: Date;
  finishedAt: Date | null;
}

/** A refusal as the API answers it, kept so a client polling a job sees what the POST would have said. */
export interface OperationError {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export interface BulkOperationItem {
  _id: string; // `${operationId}:${productId}`, so a retried write records it once
  tenantId: string;
  operationId: string;
  productId: string;
  sku: string;
  action: 'created' | 'updated' | 'deleted' | 'restored';
  /** The product before the change; null when the operation created it, or recorded it as `beforeFields`. */
  before: ProductDoc | null;
  /**
   * An update written as a patch (a bulk edit): the top-level fields it changed as they were
   * (`set`), those it added (`unset`: absent before) and the version it was written over. A few
   * fields instead of the whole product: the product before the change is the product after it
   * with these put back (beforeImage).
   */
  beforeFields?: { set: Record<string, unknown>; unset: string[]; version: number };
  /** The product's version right after the change: any other version means someone changed it since. */
  afterVersion: number | null;
  /**
   * A rollback records each step before it makes it (with this flag) and clears the flag once
   * made, so a rollback killed in between knows the product is its own to finish, not a product
   * someone else changed. Absent on every other item.
   */
  pending?: boolean;
}

/** The version a change was made over, whichever way its before-image was recorded. */
export function versionBefore(item: BulkOperationItem): number | null {
  return item.beforeFields?.version ?? item.before?.version ?? null;
}

/**
 * The product as it was before the item's change: the recorded image, or, for one recorded as
 * fields, `current` (the product as the change left it) with those fields put back.
 */
export function beforeImage(item: BulkOperationItem, current: ProductDoc | null): ProductDoc | null {
  if (item.before || !item.beforeFields || !current) return item.before;
  // the recorded values as read (no structuredClone: its objects would come from another realm under a VM)
  const image: Record<string, unknown> = { ...current, ...item.beforeFields.set };
  for (const k of item.beforeFields.unset) delete image[k];
  return { ...(image as unknown as ProductDoc), version: item.beforeFields.version };
}

export const bulkOperations = defineCollection<BulkOperation>({
  name: 'bulk_operations',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, createdAt: -1 } }, { key: { tenantId: 1, type: 1, createdAt: -1 } }],
});

export const bulkOperationItems = defineCollection<BulkOperationItem>({
  name: 'bulk_operation_items',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, operationId: 1 } }, { key: { tenantId: 1, productId: 1 } }],
});

/** Products one read of productsOf asks for. */
const VERSION_READ_CHUNK = 5000;

const ZERO = { totalProcessed: 0, created: 0, updated: 0, skipped: 0, failed: 0 };

/** Longer than any request runs (a sync import is at most 5,000 rows). */
export const REQUEST_LEASE_MS = 15 * 60_000;

/** When a processing operation is taken as abandoned (older records run by a request carry no lease). */
function leaseEnd(op: BulkOperation): Date | null {
  if (op.leaseUntil !== undefined) return op.leaseUntil;
  const byRequest = (op.type === 'csv-import' || op.type === 'marketplace-category') && !op.source?.jobId;
  return byRequest ? new Date(op.createdAt.getTime() + REQUEST_LEASE_MS) : null;
}

export class BulkOperations {
  constructor(private readonly tenantDb: TenantDb) {}

  private get ops() {
    return this.tenantDb.collection(bulkOperations);
  }
  private get items() {
    return this.tenantDb.collection(bulkOperationItems);
  }

  async start(op: {
    type: BulkOperation['type'];
    operationName?: string | null;
    actor: string;
    source?: Record<string, unknown>;
    rollbackOf?: string;
    id?: string;
  }): Promise<string> {
    const id = op.id ?? newId('bop');
    await this.ops.updateOne(
      { _id: id },
      {
        $setOnInsert: {
          type: op.type,
          status: 'processing',
          operationName: op.operationName ?? null,
          actor: op.actor,
          source: op.source ?? {},
          counts: ZERO,
          rollbackOf: op.rollbackOf ?? null,
          rolledBackBy: null,
          createdAt: new Date(),
          finishedAt: null,
          leaseUntil: op.id ? null : new Date(Date.now() + REQUEST_LEASE_MS),
        },
      },
      { upsert: true },
    );
    return id;
  }

  async record(operationId: string, item: Omit<BulkOperationItem, '_id' | 'tenantId' | 'operationId'>): Promise<void> {
    const _id = `${operationId}:${item.productId}`;
    try {
      await this.items.insertOne({ _id, operationId, ...item });
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      // recorded before (a retried write): the first before-image and action are the ones to undo
      // (a record of a write that never landed is dropped before a retry writes over someone's change)
      await this.items.updateById(_id, { $set: { afterVersion: item.afterVersion } });
    }
  }

  /** Records many items at once; items a retried batch recorded before keep their first before-image. */
  async recordMany(
    operationId: string,
    items: Omit<BulkOperationItem, '_id' | 'tenantId' | 'operationId'>[],
  ): Promise<void> {
    if (!items.length) return;
    await this.items
      .insertMany(
        items.map((item) => ({ _id: `${operationId}:${item.productId}`, operationId, ...item })),
        { ordered: false },
      )
      .catch(async (err) => {
        const again = duplicateKeyIndexes(err);
        if (!again) throw err;
        for (const i of again) await this.record(operationId, items[i]);
      });
  }

  /** Records the steps a rollback is about to take; an intent recorded by an earlier attempt stays as it was. */
  async recordIntents(
    operationId: string,
    items: Omit<BulkOperationItem, '_id' | 'tenantId' | 'operationId' | 'pending'>[],
  ): Promise<void> {
    if (!items.length) return;
    await this.items
      .insertMany(
        items.map((item) => ({ _id: `${operationId}:${item.productId}`, operationId, ...item, pending: true })),
        { ordered: false },
      )
      .catch((err) => {
        if (!duplicateKeyIndexes(err)) throw err;
      });
  }

  /** Marks recorded intents as done, each with its product's version after the step (null: deleted). */
  async completeItems(operationId: string, done: { productId: string; afterVersion: number | null }[]): Promise<void> {
    if (!done.length) return;
    await this.items.bulkWrite(
      done.map((d) => ({
        updateOne: {
          filter: { _id: `${operationId}:${d.productId}` },
          update: { $set: { afterVersion: d.afterVersion }, $unset: { pending: '' } },
        },
      })),
      { ordered: false },
    );
  }

  /** Forgets the intents of steps that were not made. */
  async unrecordMany(operationId: string, productIds: string[]): Promise<void> {
    if (productIds.length)
      await this.items.deleteMany({ _id: { $in: productIds.map((id) => `${operationId}:${id}`) } });
  }

  /** Forgets an item recorded ahead of a write that then did not happen. */
  async unrecord(operationId: string, productId: string): Promise<void> {
    await this.items.deleteById(`${operationId}:${productId}`);
  }

  async finish(operationId: string, status: BulkOperation['status'], counts: BulkOperation['counts']): Promise<void> {
    await this.ops.updateOne(
      { _id: operationId, status: 'processing' },
      { $set: { status, counts, finishedAt: new Date() } },
    );
    await this.announceFinished(operationId);
  }

  /**
   * bulk_operation.completed, once the operation has ended as it says: the products it changed
   * announce no product.* event each, and a sync import or a category assignment is no job to
   * announce itself. Keyed by the operation, so a retried finish records the same event;
   * sequence 1 (its rollback's event is 2).
   */
  private async announceFinished(operationId: string, read?: BulkOperation): Promise<void> {
    const op = read ?? (await this.ops.findOne({ _id: operationId }));
    if (!op || (op.status !== 'completed' && op.status !== 'failed')) return;
    await recordEvent(this.tenantDb, {
      type: 'bulk_operation.completed',
      key: `finished:${operationId}`,
      id: op._id,
      sequence: 1,
      resource: presentOperation(op),
    });
  }

  /** Ends an operation that refused to run, with the refusal a client polling it is shown. */
  async refuse(operationId: string, error: OperationError): Promise<void> {
    await this.ops.updateOne(
      { _id: operationId, status: 'processing' },
      { $set: { status: 'failed', error, finishedAt: new Date() } },
    );
    await this.announceFinished(operationId);
  }

  /**
   * Drops an operation still processing that recorded no product (every write it tried lost or
   * was refused): a run that changed nothing records no operation. Answers whether it was dropped.
   */
  async discardIfEmpty(operationId: string): Promise<boolean> {
    if (await this.items.countDocuments({ operationId })) return false;
    return (await this.ops.deleteOne({ _id: operationId, status: 'processing' })).deletedCount === 1;
  }

  /** Drops a rollback record made for a job whose workflow then could not be started (nothing was done under it). */
  async discardRollback(operationId: string): Promise<void> {
    await this.ops.deleteOne({ _id: operationId, type: 'rollback', status: 'processing' });
  }

  async get(id: string): Promise<BulkOperation | null> {
    const op = await this.ops.findOne({ _id: id });
    return op && this.settled(op);
  }

  /**
   * The operation, ended if its process died before finishing it (its lease is over) or the job
   * that ran it ended without closing it: what it recorded stays (completed, so it can be rolled
   * back), records of writes that never landed go, and `failed` when nothing is left.
   */
  private async settled(op: BulkOperation): Promise<BulkOperation> {
    if (op.status !== 'processing') return op;
    const until = leaseEnd(op);
    if (until) return until.getTime() > Date.now() ? op : this.closeStopped(op, 'request');
    return (await this.jobEnded(op)) ? this.closeStopped(op, 'job') : op;
  }

  /**
   * Whether the async import that runs this operation (`bop_<jobId>`) has ended while the operation
   * is still processing: its workflow failed past its retries or was terminated, and never closed it.
   */
  private async jobEnded(op: BulkOperation): Promise<boolean> {
    if (op.type !== 'csv-import' || !op._id.startsWith('bop_')) return false;
    const job = await this.tenantDb.collection(jobs).findOne({ _id: op._id.slice(4) }, { projection: { status: 1 } });
    return job !== null && isFinished(job.status);
  }

  /** Ends an operation whose request or job stopped before finishing it, keeping what it wrote. */
  private async closeStopped(op: BulkOperation, by: 'request' | 'job'): Promise<BulkOperation> {
    const items = await this.itemsOf(op._id);
    const found = await this.productsOf(items, { lastEditBy: 1, editedBy: 1, tenantId: 1 });
    // recorded ahead of a write the process died before making: the product is missing, or does
    // not carry the operation's mark (a save since may have given it the same version)
    const unmade = items.filter((i) => {
      const p = found.get(i.productId);
      return i.action === 'created' ? !p : !writtenBy(p, op._id);
    });
    await this.unrecordMany(
      op._id,
      unmade.map((i) => i.productId),
    );
    const kept = items.filter((i) => !unmade.includes(i));
    const created = kept.filter((i) => i.action === 'created').length;
    const counts = { ...ZERO, totalProcessed: kept.length, created, updated: kept.length - created };
    const ended = await this.ops.findOneAndUpdate(
      { _id: op._id, status: 'processing' },
      {
        $set: {
          status: kept.length ? 'completed' : 'failed',
          counts,
          error: {
            code: 'interrupted',
            message: `the ${by} that ran this operation stopped before it finished; the counts are the products it changed`,
          },
          finishedAt: new Date(),
        },
      },
      { returnDocument: 'after' },
    );
    const now = ended ?? (await this.ops.findOne({ _id: op._id })) ?? op;
    await this.announceFinished(op._id, now);
    return now;
  }

  async list(q: { type?: string; page: number; limit: number }) {
    const filter = q.type ? { type: q.type as BulkOperation['type'] } : {};
    const [rows, total] = await Promise.all([
      this.ops.find(filter, { sort: { createdAt: -1, _id: -1 }, ...pageWindow(q) }).toArray(),
      this.ops.countDocuments(filter),
    ]);
    return { rows: await Promise.all(rows.map((op) => this.settled(op))), total };
  }

  /** The products of `items` (the fields of `projection`), by id; missing ones are absent. */
  private async productsOf(
    items: BulkOperationItem[],
    projection: Record<string, 1>,
  ): Promise<Map<string, ProductDoc>> {
    const found = new Map<string, ProductDoc>();
    // in chunks: the embedded database binds each id as an SQL variable, and refuses past 32,766
    for (let from = 0; from < items.length; from += VERSION_READ_CHUNK) {
      const ids = items.slice(from, from + VERSION_READ_CHUNK).map((i) => new ObjectId(i.productId));
      for (const p of await this.tenantDb.collection(products).findByIds(ids, { projection }))
        found.set(p._id.toHexString(), p);
    }
    return found;
  }

  itemsOf(operationId: string) {
    return this.items.find({ operationId }, { sort: { _id: 1 } }).toArray();
  }

  /**
   * Whether the operation can still be undone, and if not, the SKUs that block it: an item is
   * blocked when its product's version is no longer the one the operation left.
   */
  async rollbackCheck(
    op: BulkOperation,
  ): Promise<{ canRollback: boolean; reason: string | null; blockedSkus: string[] }> {
    if (op.type === 'rollback')
      return { canRollback: false, reason: 'a rollback is not itself reversible', blockedSkus: [] };
    if (op.status === 'rolled_back')
      return { canRollback: false, reason: `already rolled back by ${op.rolledBackBy}`, blockedSkus: [] };
    if (op.status !== 'completed')
      return { canRollback: false, reason: `the operation is ${op.status}`, blockedSkus: [] };
    const items = await this.itemsOf(op._id);
    if (items.length === 0) return { canRollback: false, reason: 'the operation changed no products', blockedSkus: [] };
    const current = await this.productsOf(items, { version: 1, tenantId: 1, sku: 1, 'variants.sku': 1 });
    const blockedSkus = items.filter((i) => current.get(i.productId)?.version !== i.afterVersion).map((i) => i.sku);
    if (blockedSkus.length)
      return {
        canRollback: false,
        reason: `products changed since the operation: ${blockedSkus.join(', ')}`,
        blockedSkus,
      };
    const created = items.filter((i) => i.action === 'created').map((i) => current.get(i.productId)!);
    const held = await this.bundlesHolding(op._id, created);
    if (held.size) {
      const skus = items.filter((i) => held.has(i.productId)).map((i) => i.sku);
      const uses = [...held.values()].flat();
      return {
        canRollback: false,
        reason: `products it created are components of bundles made since (${[...new Set(uses)].join(', ')}): ${skus.join(', ')}`,
        blockedSkus: skus,
      };
    }
    return { canRollback: true, reason: null, blockedSkus: [] };
  }

  /**
   * The bundles that name a product the operation created (its SKU or a variant's), by that
   * product's id, leaving out bundles the operation created itself (its rollback deletes them
   * too). Deleting such a product would leave the bundle a component no write of it could keep,
   * so, as DELETE /products/{id} refuses it, a rollback keeps it.
   */
  async bundlesHolding(operationId: string, created: ProductDoc[]): Promise<Map<string, string[]>> {
    const held = new Map<string, string[]>();
    const owner = new Map<string, string>();
    for (const p of created)
      for (const s of skusOf({ sku: p.sku, variants: p.variants ?? [] })) owner.set(s.sku, p._id.toHexString());
    if (!owner.size) return held;
    const bundles = await this.tenantDb
      .collection(products)
      .find({ 'bundleConfig.components.productSku': { $in: [...owner.keys()] } } as never, {
        projection: { sku: 1, bundleConfig: 1 },
      })
      .toArray();
    if (!bundles.length) return held;
    const ours = new Set(
      (
        await this.items
          .find(
            { _id: { $in: bundles.map((b) => `${operationId}:${b._id.toHexString()}`) }, action: 'created' },
            {
              projection: { productId: 1 },
            },
          )
          .toArray()
      ).map((i) => i.productId),
    );
    for (const b of bundles) {
      const bundleId = b._id.toHexString();
      if (ours.has(bundleId)) continue;
      for (const c of b.bundleConfig?.components ?? []) {
        const id = owner.get(c.productSku);
        if (id && id !== bundleId && !held.get(id)?.includes(b.sku)) held.set(id, [...(held.get(id) ?? []), b.sku]);
      }
    }
    return held;
  }

  async markRolledBack(operationId: string, rollbackId: string): Promise<boolean> {
    const res = await this.ops.updateOne(
      { _id: operationId, status: 'completed' },
      { $set: { status: 'rolled_back', rolledBackBy: rollbackId } },
    );
    return res.modifiedCount === 1;
  }
}

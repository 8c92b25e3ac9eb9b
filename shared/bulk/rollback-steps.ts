import { isDeepStrictEqual } from 'node:util';
import { ObjectId } from 'mongodb';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { Catalog } from '../products/catalog';
import { products, productSkus } from '../products/collections';
import { contentOf } from '../products/content';
import { skusOf } from '../products/normalize';
import { markLeavingMany } from '../products/sku-marks';
import { stockLevels } from '../inventory/collections';
import type { ProductDoc } from '../products/types';
import { BulkOperations, beforeImage, type BulkOperationItem } from './operations';

export const CHANGED_SINCE = 'changed since the operation';

/** The product's version once the step is made (null: deleted), or why the product cannot be undone. */
type StepEnd = { done: true; afterVersion: number | null } | { done: false; reason: string };

const changed: StepEnd = { done: false, reason: CHANGED_SINCE };

/**
 * The steps of one rollback, each safe to run again from any point it was stopped at. A step
 * records its intent (a pending item under the rollback's id) before it touches the product and
 * completes the item after, so a later attempt tells apart the two cases a kill can leave: no
 * item and the product as the operation left it (nothing done yet: make the step), or a pending
 * item and the product already in the target state (done but not recorded: record it).
 * Items go by batches: one read, one write of intents, one delete of created products and one
 * write of completions per batch; a changed product is restored on its own (a guarded write).
 */
export class RollbackSteps {
  private readonly catalog: Catalog;
  private readonly ops: BulkOperations;

  constructor(
    private readonly tenantDb: TenantDb,
    private readonly rollbackId: string,
  ) {
    this.catalog = new Catalog(tenantDb);
    this.ops = new BulkOperations(tenantDb);
  }

  /**
   * Undoes a batch of the operation's items; `mine` holds what this rollback recorded so far, by
   * product id. Answers, per item, null when its product is undone (now or by an earlier
   * attempt), else why not. `onStep` is called after each product restored (a heartbeat).
   */
  async undo(
    batch: BulkOperationItem[],
    mine: Map<string, BulkOperationItem>,
    onStep?: () => void,
  ): Promise<(string | null)[]> {
    const ends = new Map<string, StepEnd>();
    const open = batch.filter((item) => {
      const recorded = mine.get(item.productId);
      if (recorded && !recorded.pending) ends.set(item.productId, { done: true, afterVersion: recorded.afterVersion });
      return !ends.has(item.productId);
    });
    const current = await this.currentOf(open);

    // a product with no intent of ours is untouched by this rollback: only one as the operation left it is undone
    const started = open.filter((item) => {
      if (mine.has(item.productId)) return true;
      const p = current.get(item.productId);
      if (p && item.afterVersion !== null && p.version === item.afterVersion) return true;
      ends.set(item.productId, changed);
      return false;
    });
    await this.ops.recordIntents(
      this.rollbackId,
      started
        .filter((item) => !mine.has(item.productId))
        .map((item) => ({
          productId: item.productId,
          sku: item.sku,
          action: item.action === 'created' ? ('deleted' as const) : ('restored' as const),
          before: current.get(item.productId)!,
          afterVersion: null,
        })),
    );

    for (const [productId, end] of await this.deleteCreated(
      started.filter((i) => i.action === 'created'),
      current,
    ))
      ends.set(productId, end);
    for (const item of started.filter((i) => i.action !== 'created')) {
      ends.set(item.productId, await this.restoreChanged(item, current.get(item.productId) ?? null));
      onStep?.();
    }

    const done = started.flatMap((item) => {
      const end = ends.get(item.productId)!;
      return end.done ? [{ productId: item.productId, afterVersion: end.afterVersion }] : [];
    });
    await this.ops.completeItems(this.rollbackId, done);
    // nothing of ours stays on a product this rollback did not undo
    await this.ops.unrecordMany(
      this.rollbackId,
      started.filter((item) => !ends.get(item.productId)!.done).map((item) => item.productId),
    );
    return batch.map((item) => {
      const end = ends.get(item.productId)!;
      return end.done ? null : end.reason;
    });
  }

  private async currentOf(items: BulkOperationItem[]): Promise<Map<string, ProductDoc>> {
    if (!items.length) return new Map();
    const found = await this.tenantDb
      .collection(products)
      .find({ _id: { $in: items.map((i) => new ObjectId(i.productId)) } })
      .toArray();
    return new Map(found.map((p) => [p._id.toHexString(), p]));
  }

  /**
   * Products the operation created: deleted if still at the version it left them (several at
   * once, as Catalog.deleteAt does one), their SKUs given back. One found gone is one an earlier
   * attempt deleted (its intent is recorded), perhaps stopped before it gave the SKUs back.
   */
  private async deleteCreated(
    items: BulkOperationItem[],
    current: Map<string, ProductDoc>,
  ): Promise<Map<string, StepEnd>> {
    const ends = new Map<string, StepEnd>();
    if (!items.length) return ends;
    const atVersion = items.flatMap((item) => {
      const p = current.get(item.productId);
      return p && p.version === item.afterVersion ? [p] : [];
    });
    // marked leaving before looking for what holds them, as DELETE /products/{id} marks (sku-marks.ts)
    const marks = await markLeavingMany(
      this.tenantDb,
      atVersion.map((p) => ({ productId: p._id.toHexString(), skus: skusOf(p).map((s) => s.sku) })),
    );
    // a component of a bundle made (or being made) since stays, as does one holding stock
    const kept = new Map<string, string>();
    for (const [productId, { skus }] of marks.named)
      kept.set(productId, `named by a bundle write moments ago (${skus.join(', ')})`);
    for (const [productId, bundles] of await this.ops.bundlesHolding(items[0].operationId, atVersion))
      kept.set(productId, `a component of the bundle${bundles.length === 1 ? '' : 's'} ${bundles.join(', ')}`);
    for (const [productId, where] of await this.stockHolding(atVersion))
      kept.set(productId, `holds stock (${where}): set it to zero first`);
    const byVersion = new Map<number, ObjectId[]>();
    for (const p of atVersion)
      if (!kept.has(p._id.toHexString())) byVersion.set(p.version, [...(byVersion.get(p.version) ?? []), p._id]);
    const col = this.tenantDb.collection(products);
    for (const [version, ids] of byVersion) await col.deleteMany({ _id: { $in: ids }, version });
    // what is left was changed since (before this rollback began, or in between: the guard kept it)
    const left = new Set(
      (
        await col
          .find({ _id: { $in: items.map((i) => new ObjectId(i.productId)) } }, { projection: { _id: 1 } })
          .toArray()
      ).map((p) => p._id.toHexString()),
    );
    // a product still there (kept, or changed since so the guard kept it) leaves nothing: its marks go
    await marks.unmark([...left]);
    const gone = items.filter((i) => !left.has(i.productId)).map((i) => i.productId);
    if (gone.length) await this.tenantDb.collection(productSkus).deleteMany({ productId: { $in: gone } });
    for (const item of items) {
      const reason = kept.get(item.productId);
      ends.set(
        item.productId,
        reason && left.has(item.productId)
          ? { done: false, reason }
          : left.has(item.productId)
            ? changed
            : { done: true, afterVersion: null },
      );
    }
    return ends;
  }

  /**
   * The products whose SKUs hold stock somewhere, by id, with where: deleting one would leave its
   * stock under a SKU no product holds, so, as DELETE /products/{id} refuses it, a rollback keeps it.
   */
  private async stockHolding(created: ProductDoc[]): Promise<Map<string, string>> {
    const owner = new Map<string, string>();
    for (const p of created) for (const s of skusOf(p)) owner.set(s.sku, p._id.toHexString());
    const held = new Map<string, string>();
    if (!owner.size) return held;
    const levels = await this.tenantDb
      .collection(stockLevels)
      .find({ sku: { $in: [...owner.keys()] }, onHand: { $ne: 0 } } as never, {
        projection: { sku: 1, locationId: 1, onHand: 1 },
      })
      .toArray();
    for (const l of levels) {
      const id = owner.get(l.sku)!;
      const where = `${l.sku}: ${l.onHand} at ${l.locationId}`;
      held.set(id, held.has(id) ? `${held.get(id)}, ${where}` : where);
    }
    return held;
  }

  /** A product the operation changed: put its before-image back, or find it back already. */
  private async restoreChanged(item: BulkOperationItem, current: ProductDoc | null): Promise<StepEnd> {
    const before = beforeImage(item, current);
    if (!before || item.afterVersion === null) return { done: false, reason: 'no before-image was recorded' };
    try {
      if (current && current.version === item.afterVersion) {
        // the guarded write moves the version by exactly one
        if (await this.catalog.restore(before, item.afterVersion))
          return { done: true, afterVersion: item.afterVersion + 1 };
        current = await this.catalog.get(item.productId); // written in between: ours (a retry) or someone's
      }
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      // a concurrent write: look again; another refusal (a SKU of the before-image taken since) is this product's
      if (err.code !== 'conflict') return { done: false, reason: err.message };
      current = await this.catalog.get(item.productId);
    }
    if (!current || !isDeepStrictEqual(contentOf(current), contentOf(before))) return changed;
    await this.settleClaims(current);
    return { done: true, afterVersion: current.version };
  }

  /**
   * A restore stopped after its write may not have given back the SKUs the operation had added
   * (variants it created) or set each claim's kind: the claims are made to match the product.
   */
  private async settleClaims(product: ProductDoc): Promise<void> {
    const productId = product._id.toHexString();
    const wanted = skusOf(product);
    const claims = this.tenantDb.collection(productSkus);
    await claims.deleteMany({ productId, sku: { $nin: wanted.map((s) => s.sku) } });
    for (const s of wanted) await claims.updateOne({ productId, sku: s.sku }, { $set: { kind: s.kind } });
  }
}

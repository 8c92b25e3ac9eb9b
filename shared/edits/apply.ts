import {
  BulkOperations,
  bulkOperationItems,
  bulkOperations,
  type BulkOperation,
  type BulkOperationItem,
} from '../bulk/operations';
import type { TenantDb } from '../db/tenant-db';
import { products } from '../products/collections';
import type { ProductDoc } from '../products/types';
import { searchTextOf } from '../products/search';
import { editedByAfter, writtenBy } from '../products/edit-marks';
import type { Patch } from './plan';

export interface Change {
  current: ProductDoc;
  patch: Patch;
}

export type Applied = { ok: true; afterVersion: number } | { ok: false; message: string };

/** The fields a change writes, as they were: what its record keeps to undo it (not the whole product). */
function fieldsBefore({ current, patch }: Change): NonNullable<BulkOperationItem['beforeFields']> {
  const was = current as unknown as Record<string, unknown>;
  const set: Record<string, unknown> = {};
  const unset: string[] = [];
  for (const k of Object.keys(patch.set)) {
    if (k in was) set[k] = was[k];
    else unset.push(k);
  }
  for (const k of patch.unset) set[k] = was[k];
  return { set, unset, version: current.version };
}

const CONFLICT = 'changed by another request while the edit was applied; run the edit again for it';

/**
 * Writes a batch of planned changes, each recorded first in the bulk operation with the fields
 * it changes as they were (so a kill between the two leaves a record a retry recognises, never a change a
 * rollback cannot see). Each write is guarded by the version the change was planned from and
 * moves it by one; the SKUs are untouched (planProposal refused any change of them), so the
 * write is the changed top-level fields alone (and `lastEditBy`, the operation), all of a batch
 * in one unordered bulkWrite. A product someone changed in between keeps their change: its
 * record is dropped and it is answered as a conflict.
 */
/** The product's search text once the change is written (products/search.ts). */
function searchAfter({ current, patch }: Change): string {
  const after: Record<string, unknown> = { ...current, ...patch.set };
  for (const k of patch.unset) delete after[k];
  return searchTextOf(after as unknown as ProductDoc);
}

export async function applyChanges(
  tenantDb: TenantDb,
  operationId: string,
  changes: Change[],
): Promise<Map<string, Applied>> {
  const out = new Map<string, Applied>();
  if (!changes.length) return out;
  const ops = new BulkOperations(tenantDb);
  await ops.recordMany(
    operationId,
    changes.map((c) => ({
      productId: c.current._id.toHexString(),
      sku: c.current.sku,
      action: 'updated' as const,
      before: null,
      beforeFields: fieldsBefore(c),
      afterVersion: c.current.version + 1,
    })),
  );
  const updatedAt = new Date();
  const col = tenantDb.collection(products);
  const res = await col.bulkWrite(
    changes.map((c) => ({
      updateOne: {
        filter: { _id: c.current._id, version: c.current.version },
        update: {
          $set: {
            ...c.patch.set,
            search: searchAfter(c),
            lastEditBy: operationId,
            editedBy: editedByAfter(c.current, operationId),
            updatedAt,
            version: c.current.version + 1,
          } as Partial<ProductDoc>,
          ...(c.patch.unset.length ? { $unset: Object.fromEntries(c.patch.unset.map((k) => [k, ''])) } : {}),
        },
      },
    })),
    { ordered: false },
  );
  let landed: Set<string> | null = null;
  if (res.matchedCount < changes.length) {
    // which ones did not hold: a product this operation's write reached carries its id (the
    // version alone could be someone else's write, which would make a rollback undo their change)
    const found = await col.findByIds(
      changes.map((c) => c.current._id),
      { projection: { _id: 1, lastEditBy: 1, editedBy: 1, tenantId: 1 } },
    );
    landed = new Set(found.filter((p) => writtenBy(p, operationId)).map((p) => p._id.toHexString()));
  }
  const lost: string[] = [];
  for (const c of changes) {
    const id = c.current._id.toHexString();
    const afterVersion = c.current.version + 1;
    if (!landed || landed.has(id)) out.set(id, { ok: true, afterVersion });
    else {
      lost.push(id);
      out.set(id, { ok: false, message: CONFLICT });
    }
  }
  await ops.unrecordMany(operationId, lost);
  return out;
}

/**
 * Ends a run's bulk operation once its pages are done; answers its id, or null when the run
 * recorded none. A page starts the operation before its writes, so a run whose every write lost
 * to a concurrent save (or whose killed attempt's records were dropped by the retry) is left with
 * an operation without items: it is deleted, as a run that changes nothing records no operation.
 * The delete is guarded by the status (never an operation that ended, or was rolled back), and
 * a retry (the activity run again) answers the same: a deleted operation stays gone, an ended
 * one is answered as it is.
 */
export async function closeOperation(
  tenantDb: TenantDb,
  operationId: string,
  counts: BulkOperation['counts'],
): Promise<string | null> {
  const ops = new BulkOperations(tenantDb);
  const op = await ops.get(operationId);
  if (!op) return null;
  if (op.status === 'processing') {
    const items = await tenantDb.collection(bulkOperationItems).countDocuments({ operationId });
    if (items === 0) {
      await tenantDb.collection(bulkOperations).deleteOne({ _id: operationId, status: 'processing' });
      return null;
    }
  }
  await ops.finish(operationId, 'completed', counts);
  return operationId;
}

import type { TenantDb } from '../db/tenant-db';
import { Catalog } from '../products/catalog';
import { BulkOperations, bulkOperationItems } from './operations';
import type { RollbackResult } from './messages';

export class RollbackRefused extends Error {
  constructor(
    message: string,
    readonly blockedSkus: string[],
  ) {
    super(message);
    this.name = 'RollbackRefused';
  }
}

/**
 * Undoes a bulk operation: products it created are deleted, products it changed get their
 * before-image back, each only if still at the version the operation left. Safe to run again
 * (a retried activity): what this rollback already did is recorded under its own id and skipped.
 */
export async function rollbackOperation(
  tenantDb: TenantDb,
  operationId: string,
  rollbackId: string,
  actor: string,
): Promise<RollbackResult> {
  const ops = new BulkOperations(tenantDb);
  const catalog = new Catalog(tenantDb);
  const op = await ops.get(operationId);
  if (!op) throw new RollbackRefused(`No bulk operation ${operationId}`, []);
  const alreadyOurs = op.status === 'rolled_back' && op.rolledBackBy === rollbackId;
  if (!alreadyOurs) {
    const done = await tenantDb.collection(bulkOperationItems).countDocuments({ operationId: rollbackId });
    if (done === 0) {
      const check = await ops.rollbackCheck(op);
      if (!check.canRollback)
        throw new RollbackRefused(`Operation ${operationId} cannot be rolled back: ${check.reason}`, check.blockedSkus);
    }
  }
  await ops.start({
    id: rollbackId,
    type: 'rollback',
    rollbackOf: operationId,
    actor,
    operationName: `rollback of ${op.operationName ?? operationId}`,
  });
  const done = new Set((await ops.itemsOf(rollbackId)).map((i) => i.productId));
  const result: RollbackResult = { operationId, rollbackOperationId: rollbackId, deleted: 0, restored: 0, failed: [] };
  for (const item of await ops.itemsOf(operationId)) {
    if (done.has(item.productId)) {
      if (item.action === 'created') result.deleted++;
      else result.restored++;
      continue;
    }
    const current = await catalog.get(item.productId);
    let ok = false;
    if (item.action === 'created')
      ok = item.afterVersion !== null && (await catalog.deleteAt(item.productId, item.afterVersion));
    else if (item.before && item.afterVersion !== null) ok = await catalog.restore(item.before, item.afterVersion);
    if (!ok) {
      result.failed.push({ sku: item.sku, reason: 'changed since the operation' });
      continue;
    }
    const after = item.action === 'created' ? null : await catalog.get(item.productId);
    await ops.record(rollbackId, {
      productId: item.productId,
      sku: item.sku,
      action: item.action === 'created' ? 'deleted' : 'restored',
      before: current,
      afterVersion: after?.version ?? null,
    });
    if (item.action === 'created') result.deleted++;
    else result.restored++;
  }
  const counts = {
    totalProcessed: result.deleted + result.restored + result.failed.length,
    created: 0,
    updated: result.restored,
    skipped: 0,
    failed: result.failed.length,
  };
  await ops.finish(rollbackId, result.failed.length ? 'failed' : 'completed', counts);
  if (!result.failed.length) await ops.markRolledBack(operationId, rollbackId);
  return result;
}

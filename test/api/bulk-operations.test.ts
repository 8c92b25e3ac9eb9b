import { ApiClient, type HttpResult } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import { BulkOperations, beforeImage, bulkOperations } from '../../shared/bulk/operations';
import { rollback } from '../../shared/bulk/messages';
import { rollbackOperation } from '../../shared/bulk/rollback';
import { ROLLBACK_JOB_TYPE } from '../../shared/bulk/rollback-jobs';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';
import { TenantDb } from '../../shared/db/tenant-db';
import { newId } from '../../shared/ids';
import { jobs } from '../../shared/jobs/collection';
import { Jobs } from '../../shared/jobs/jobs';
import { Catalog } from '../../shared/products/catalog';
import { productSkus, products } from '../../shared/products/collections';

/** Bulk-operation history and rollback (a job the client polls), through HTTP. */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key);
});
afterAll(() => deps.close());

const P = () => `B${Date.now().toString(36).toUpperCase()}${++n}`;

/** A native CSV from partial rows (unset columns empty). */
function csv(rows: Record<string, string | number>[]): string {
  return toCsvText(
    nativeLayout.columns,
    rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, String(v)]))),
  );
}

const importCsv = (body: Record<string, unknown>) => api.post('/products/bulk/csv/import', body);
const bySku = async (sku: string) => {
  const exists = (await api.get(`/products/sku/${sku}/exists`)).body;
  return exists.exists ? (await api.get(`/products/${exists.productId}`)).body : null;
};
const rollbackUrl = (operationId: string) => `/products/bulk/operations/${operationId}/rollback`;

/** Polls the rollback job of an operation until it ended; the last answer. */
async function rollbackEnded(operationId: string, client = api, timeoutMs = 60_000): Promise<HttpResult> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await client.get(rollbackUrl(operationId));
    expect(res.status).toBe(200);
    if (res.body.status === 'completed' || res.body.status === 'failed') return res;
    if (Date.now() > deadline) throw new Error(`rollback of ${operationId} still ${res.body.status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('bulk operations and rollback', () => {
  test('rollback deletes created products and restores changed ones; it is recorded too', async () => {
    const kept = P();
    await importCsv({ content: csv([{ sku: kept, title: 'Original', price: 1 }]), createIfNotExists: true });
    const original = await bySku(kept);
    const created = P();
    const res = await importCsv({
      content: csv([
        { sku: kept, title: 'Changed', price: 2 },
        { sku: created, title: 'Brand new', price: 3 },
      ]),
      createIfNotExists: true,
    });
    expect(res.body).toMatchObject({ created: 1, updated: 1 });
    const operationId = res.body.operationId as string;
    const started = await api.post(rollbackUrl(operationId));
    // the request never waits for the rollback: it answers the job, and the client polls
    expect(started.status).toBe(202);
    expect(started.headers.get('location')).toBe(rollbackUrl(operationId));
    expect(started.body).toEqual({
      jobId: expect.stringMatching(/^rbk_/),
      status: expect.stringMatching(/^(queued|processing)$/),
      operationId,
      rollbackOperationId: expect.stringMatching(/^bop_/),
    });
    const rb = await rollbackEnded(operationId);
    expect(rb.body).toMatchObject({
      jobId: started.body.jobId,
      status: 'completed',
      success: true,
      operationId,
      rollbackOperationId: started.body.rollbackOperationId,
      deleted: 1,
      restored: 1,
      failed: [],
    });
    expect(await bySku(created)).toBeNull();
    const restored = await bySku(kept);
    expect({ ...restored, updatedAt: original.updatedAt }).toEqual(original);
    const op = (await api.get(`/products/bulk/operations/${operationId}`)).body;
    expect(op).toMatchObject({ status: 'rolled_back', rolledBackBy: rb.body.rollbackOperationId, canRollback: false });
    const recorded = (await api.get(`/products/bulk/operations/${rb.body.rollbackOperationId}`)).body;
    expect(recorded).toMatchObject({ type: 'rollback', status: 'completed', rollbackOf: operationId });
    const history = (await api.get('/products/bulk/operations', { query: { type: 'rollback' } })).body;
    expect(history.operations.map((o: { id: string }) => o.id)).toContain(rb.body.rollbackOperationId);
    // asking again returns the same rollback, ended: 200 with the result
    const again = await api.post(rollbackUrl(operationId));
    expect(again.status).toBe(200);
    expect(again.body).toEqual(rb.body);
  });

  test('eight concurrent rollback requests: all 2xx, one job, one rollback', async () => {
    const skus = [P(), P(), P()];
    const res = await importCsv({
      content: csv(skus.map((sku) => ({ sku, title: 'Concurrent', price: 1 }))),
      createIfNotExists: true,
    });
    const operationId = res.body.operationId as string;
    const answers = await Promise.all(Array.from({ length: 8 }, () => api.post(rollbackUrl(operationId))));
    for (const a of answers) expect([200, 202]).toContain(a.status);
    expect(new Set(answers.map((a) => a.body.jobId)).size).toBe(1);
    expect(new Set(answers.map((a) => a.body.rollbackOperationId)).size).toBe(1);
    const rb = await rollbackEnded(operationId);
    expect(rb.body).toMatchObject({
      status: 'completed',
      success: true,
      deleted: 3,
      restored: 0,
      failed: [],
      rollbackOperationId: answers[0].body.rollbackOperationId,
    });
    const tenantDb = new TenantDb(deps.db, tenantId);
    expect(
      await tenantDb.collection(jobs).countDocuments({ type: ROLLBACK_JOB_TYPE, idempotencyKey: operationId }),
    ).toBe(1);
    expect(await tenantDb.collection(bulkOperations).countDocuments({ rollbackOf: operationId })).toBe(1);
    for (const sku of skus) expect(await bySku(sku)).toBeNull();
  });

  test('after a direct edit, canRollback is false and rollback is 400 rollback-failed naming the SKU', async () => {
    const sku = P();
    const res = await importCsv({ content: csv([{ sku, title: 'Imported', price: 1 }]), createIfNotExists: true });
    const product = await bySku(sku);
    await api.put(`/products/${product.id}`, { sku, title: { value: 'Edited by hand' }, price: 1 });
    const op = (await api.get(`/products/bulk/operations/${res.body.operationId}`)).body;
    expect(op.canRollback).toBe(false);
    const rb = await api.post(rollbackUrl(res.body.operationId));
    expectError(rb, 400, 'rollback-failed');
    expect(rb.body.message).toContain(sku);
    expect(rb.body.details.blockedSkus).toEqual([sku]);
    expect((await bySku(sku)).title.value).toBe('Edited by hand');
    // refused before starting: no job to poll
    expectError(await api.get(rollbackUrl(res.body.operationId)), 404, 'not-found');
  });

  test('a refusal the rollback finds itself ends the job failed, visible when polling', async () => {
    const sku = P();
    const res = await importCsv({ content: csv([{ sku, title: 'Imported', price: 1 }]), createIfNotExists: true });
    const operationId = res.body.operationId as string;
    const product = await bySku(sku);
    await api.put(`/products/${product.id}`, { sku, title: { value: 'Edited meanwhile' }, price: 1 });
    // the edit lands after the request's check: the job is started as the request starts it, past the check
    const tenantDb = new TenantDb(deps.db, tenantId);
    const rollbackOperationId = newId('bop');
    await new Jobs(deps.temporal, deps.config.taskQueue).start(tenantDb, {
      type: ROLLBACK_JOB_TYPE,
      prefix: 'rbk',
      workflow: rollback,
      idempotencyKey: operationId,
      input: { operationId, rollbackOperationId },
      workflowInput: (jobId) => ({ tenantId, operationId, rollbackId: rollbackOperationId, actor: 'test', jobId }),
    });
    const rb = await rollbackEnded(operationId);
    expect(rb.body).toMatchObject({
      status: 'failed',
      success: false,
      operationId,
      rollbackOperationId,
      error: { code: 'rollback-failed', details: { blockedSkus: [sku] } },
    });
    expect(rb.body.error.message).toContain(sku);
    const recorded = (await api.get(`/products/bulk/operations/${rollbackOperationId}`)).body;
    expect(recorded).toMatchObject({ status: 'failed', error: { code: 'rollback-failed' } });
    // asking again is refused as before, with the SKUs
    const again = await api.post(rollbackUrl(operationId));
    expectError(again, 400, 'rollback-failed');
    expect(again.body.details.blockedSkus).toEqual([sku]);
    expect((await bySku(sku)).title.value).toBe('Edited meanwhile');
  });

  test('a later import of the same products blocks the earlier one', async () => {
    const sku = P();
    const first = await importCsv({ content: csv([{ sku, title: 'One', price: 1 }]), createIfNotExists: true });
    await importCsv({ content: csv([{ sku, title: 'Two', price: 1 }]) });
    expectError(await api.post(rollbackUrl(first.body.operationId)), 400, 'rollback-failed');
  });

  test("another tenant's operation is 404; list and detail need products:read and products:update", async () => {
    const sku = P();
    const res = await importCsv({ content: csv([{ sku, title: 'Mine', price: 1 }]), createIfNotExists: true });
    const other = api.as((await deps.tenantWithKey()).key);
    expectError(await other.get(`/products/bulk/operations/${res.body.operationId}`), 404, 'not-found');
    expectError(await other.post(rollbackUrl(res.body.operationId)), 404, 'not-found');
    expectError(await other.get(rollbackUrl(res.body.operationId)), 404, 'not-found');
    const readOnly = api.as((await deps.tenantWithKey(['products:read'])).key);
    expectError(await readOnly.get('/products/bulk/operations'), 403, 'auth:permission_denied');
  });
});

describe('a rollback stopped between its steps finishes exactly', () => {
  test('whatever each product was left at, a rerun undoes every product once, none counted as changed', async () => {
    const kept = P();
    await importCsv({ content: csv([{ sku: kept, title: 'Original', price: 1 }]), createIfNotExists: true });
    const original = await bySku(kept);
    const [intentOnly, deleted, halfDeleted] = [P(), P(), P()];
    const res = await importCsv({
      content: csv([
        { sku: kept, title: 'Changed', price: 2 },
        ...[intentOnly, deleted, halfDeleted].map((sku) => ({ sku, title: 'New', price: 3 })),
      ]),
      createIfNotExists: true,
    });
    const operationId = res.body.operationId as string;
    const tenantDb = new TenantDb(deps.db, tenantId);
    const ops = new BulkOperations(tenantDb);
    const catalog = new Catalog(tenantDb);
    const items = new Map((await ops.itemsOf(operationId)).map((i) => [i.sku, i]));
    const rollbackId = newId('bop');
    await ops.start({ id: rollbackId, type: 'rollback', rollbackOf: operationId, actor: 'test' });
    const intend = async (sku: string) => {
      const item = items.get(sku)!;
      await ops.recordIntents(rollbackId, [
        {
          productId: item.productId,
          sku,
          action: item.action === 'created' ? 'deleted' : 'restored',
          before: await catalog.get(item.productId),
          afterVersion: null,
        },
      ]);
      return item;
    };
    // killed after recording the intent, before the step
    await intend(intentOnly);
    // killed after the step, before recording it done
    const d = await intend(deleted);
    expect(await catalog.deleteAt(d.productId, d.afterVersion!)).toBe(true);
    const k = await intend(kept);
    expect(await catalog.restore(beforeImage(k, await catalog.get(k.productId))!, k.afterVersion!)).toBe(true);
    // killed inside the delete: the product gone, its SKU still claimed
    const h = await intend(halfDeleted);
    await tenantDb.collection(products).deleteOne({ _id: (await catalog.get(h.productId))!._id });

    const result = await rollbackOperation(tenantDb, { operationId, rollbackId, actor: 'test' });
    expect(result).toEqual({ operationId, rollbackOperationId: rollbackId, deleted: 3, restored: 1, failed: [] });
    for (const sku of [intentOnly, deleted, halfDeleted]) {
      expect(await bySku(sku)).toBeNull();
      expect(await tenantDb.collection(productSkus).countDocuments({ sku })).toBe(0);
    }
    expect({ ...(await bySku(kept)), updatedAt: original.updatedAt }).toEqual(original);
    expect(await ops.get(operationId)).toMatchObject({ status: 'rolled_back', rolledBackBy: rollbackId });
    expect(await ops.get(rollbackId)).toMatchObject({
      status: 'completed',
      counts: { totalProcessed: 4, updated: 1, failed: 0 },
    });
    const recorded = await ops.itemsOf(rollbackId);
    expect(recorded.map((i) => [i.sku, i.action, i.pending ?? false]).sort()).toEqual(
      [
        [deleted, 'deleted', false],
        [halfDeleted, 'deleted', false],
        [intentOnly, 'deleted', false],
        [kept, 'restored', false],
      ].sort(),
    );
    // and once more, as a retry after the end: the same result, nothing touched
    expect(await rollbackOperation(tenantDb, { operationId, rollbackId, actor: 'test' })).toEqual(result);
  });
});

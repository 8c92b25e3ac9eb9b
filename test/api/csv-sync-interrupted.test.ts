import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { BulkOperations, bulkOperations } from '../../shared/bulk/operations';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';
import { CsvSync } from '../../shared/csv/sync-service';
import { products } from '../../shared/products/collections';

/**
 * A bulk operation run inside a request (a sync CSV import, a category assignment) whose process
 * died before it finished the operation: nothing else ends it, so reading it does, once its lease
 * is over, from what it recorded. The kill is simulated in this process; the lease running out by
 * moving it into the past in the database.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantDb: TenantDb;
beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey();
  api = new ApiClient(t.key);
  tenantDb = new TenantDb(deps.db, t.tenantId);
});
afterAll(() => deps.close());
afterEach(() => jest.restoreAllMocks());

const tag = () => `INT${Date.now().toString(36).toUpperCase()}${Math.floor(Math.random() * 1e4)}`;

function csv(rows: { sku: string; price: string }[]): string {
  return toCsvText(
    nativeLayout.columns,
    rows.map(({ sku, price }) => ({ sku, title: `Product ${sku}`, price })),
  );
}

/** The lease of a request's operation runs out (the request that held it is long gone). */
async function leaseOver(operationId: string) {
  await tenantDb
    .collection(bulkOperations)
    .updateOne({ _id: operationId }, { $set: { leaseUntil: new Date(Date.now() - 1000) } });
}

test('a sync import killed before it finished its operation ends completed with what it changed, rollback allowed', async () => {
  const sku = tag();
  expect(
    (
      await api.post('/products/bulk/csv/import', {
        content: csv([{ sku: `${sku}-OLD`, price: '5' }]),
        createIfNotExists: true,
      })
    ).status,
  ).toBe(200);
  const actor = `killed-${sku}`;
  jest.spyOn(BulkOperations.prototype, 'finish').mockRejectedValueOnce(new Error('process killed'));
  await expect(
    new CsvSync(tenantDb).importContent({
      content: csv([
        { sku: `${sku}-OLD`, price: '9' },
        { sku: `${sku}-NEW`, price: '3' },
      ]),
      createIfNotExists: true,
      skipErrorRows: true,
      batchSize: 100,
      actor,
    }),
  ).rejects.toThrow('process killed');
  const { _id: id } = (await tenantDb.collection(bulkOperations).findOne({ actor }))!;

  // still within its lease: it may be running
  expect((await api.get(`/products/bulk/operations/${id}`)).body).toMatchObject({ status: 'processing' });

  await leaseOver(id);
  const res = await api.get(`/products/bulk/operations/${id}`);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    status: 'completed',
    counts: { created: 1, updated: 1, failed: 0 },
    error: { code: 'interrupted' },
    canRollback: true,
  });
  expect(res.body).not.toHaveProperty('leaseUntil');
  expect(res.body.products.map((p: { sku: string }) => p.sku).sort()).toEqual([`${sku}-NEW`, `${sku}-OLD`]);
  const listed = await api.get('/products/bulk/operations?type=csv-import&limit=200');
  expect(listed.body.operations.find((o: { id: string }) => o.id === id)).toMatchObject({ status: 'completed' });
});

test('a category assignment killed before its write ends failed, without the record of the write it never made', async () => {
  const sku = tag();
  expect(
    (await api.post('/products/bulk/csv/import', { content: csv([{ sku, price: '5' }]), createIfNotExists: true }))
      .status,
  ).toBe(200);
  const product = (await tenantDb.collection(products).findOne({ sku }))!;
  // what assignCategory leaves when it dies between recording its change and writing it
  const ops = new BulkOperations(tenantDb);
  const id = await ops.start({ type: 'marketplace-category', actor: 'killed', source: { channelId: 'c1' } });
  await ops.recordMany(id, [
    {
      productId: product._id.toHexString(),
      sku,
      action: 'updated',
      before: null,
      beforeFields: { set: {}, unset: ['metafields'], version: product.version },
      afterVersion: product.version + 1,
    },
  ]);
  await leaseOver(id);

  const res = await api.get(`/products/bulk/operations/${id}`);
  expect(res.body).toMatchObject({
    status: 'failed',
    error: { code: 'interrupted' },
    canRollback: false,
    products: [],
  });
  expect(res.body.finishedAt).toEqual(expect.any(String));
});

test('an operation a request left processing before leases were recorded ends once it is old enough; a job’s never does', async () => {
  const ops = new BulkOperations(tenantDb);
  const old = new Date(Date.now() - 24 * 3600_000);
  const byRequest = await ops.start({ type: 'csv-import', actor: 'old', source: { mode: 'sync' } });
  const byJob = await ops.start({
    id: `bop_csvimp_${tag()}`,
    type: 'csv-import',
    actor: 'old',
    source: { mode: 'async', jobId: 'x' },
  });
  const col = tenantDb.collection(bulkOperations);
  await col.updateOne({ _id: byRequest }, { $set: { createdAt: old }, $unset: { leaseUntil: '' } });
  await col.updateOne({ _id: byJob }, { $set: { createdAt: old } });

  expect((await api.get(`/products/bulk/operations/${byRequest}`)).body).toMatchObject({
    status: 'failed',
    error: { code: 'interrupted' },
  });
  expect((await api.get(`/products/bulk/operations/${byJob}`)).body).toMatchObject({ status: 'processing' });
});

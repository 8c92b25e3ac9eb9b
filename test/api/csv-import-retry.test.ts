import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { BulkOperations, bulkOperations } from '../../shared/bulk/operations';
import { applyImport, planImport } from '../../shared/csv/import';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';
import { readProducts } from '../../shared/csv/read';
import { derivedObjectId } from '../../shared/ids';
import { Catalog } from '../../shared/products/catalog';

/**
 * An async import's chunk cut short by a killed worker and run again (as Temporal retries it):
 * the crash is simulated by making one lower-level call throw where the process would have died.
 * What the retried chunk counts, what its operation records, and what its rollback puts back are
 * read as a user reads them.
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

const tag = () => `RT${Date.now().toString(36).toUpperCase()}${Math.floor(Math.random() * 1e4)}`;

/** One product with one variant, as native CSV rows. */
function csv(sku: string, variantSku: string, price: string, title = `Product ${sku}`): string {
  return toCsvText(nativeLayout.columns, [
    {
      sku,
      title,
      price,
      'variant.sku': variantSku,
      'variant.title': 'V',
      'variant.price': price,
      'variant.position': '0',
    },
  ]);
}

/** What importChunk (activities/csv) does for one chunk of job `jobId`, whose operation is bop_<jobId>. */
async function importChunk(jobId: string, text: string) {
  const operationId = `bop_${jobId}`;
  const started = await tenantDb.collection(bulkOperations).findOne({ _id: operationId });
  const config = { createIfNotExists: true };
  const plans = await planImport(tenantDb, readProducts(text, nativeLayout).parsed, {
    ...config,
    idOf: (i) => derivedObjectId(`${jobId}:${i}`),
    createdBy: { operationId, since: started?.createdAt ?? new Date(0) },
  });
  return applyImport(tenantDb, plans, {
    ...config,
    skipErrorRows: true,
    batchSize: 500,
    actor: 'test',
    source: { mode: 'async', jobId },
    operationId,
    finish: false,
  });
}

/** The worker dies right after `method`'s write landed (`after`) or right before it is made. */
function killAt<T extends object>(proto: T, method: keyof T & string, when: 'before' | 'after') {
  const original = (proto as Record<string, (...a: unknown[]) => Promise<unknown>>)[method];
  jest
    .spyOn(proto as Record<string, (...a: unknown[]) => Promise<unknown>>, method)
    .mockImplementationOnce(async function (this: unknown, ...args: unknown[]) {
      if (when === 'after') await original.apply(this, args);
      throw new Error('worker killed');
    });
}

async function finish(jobId: string, counts: Awaited<ReturnType<typeof importChunk>>['counts']) {
  await new BulkOperations(tenantDb).finish(`bop_${jobId}`, 'completed', counts);
}

async function productBySku(sku: string) {
  const { productId } = (await api.get(`/products/sku/${sku}/exists`)).body;
  return productId ? ((await api.get(`/products/${productId}`)).body as Record<string, any>) : null;
}

async function rollBack(operationId: string) {
  const url = `/products/bulk/operations/${operationId}/rollback`;
  expect([200, 202]).toContain((await api.post(url)).status);
  for (let i = 0; i < 300; i++) {
    const res = await api.get(url);
    if (['completed', 'failed'].includes(res.body.status)) return res.body;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${url} never ended`);
}

test('a SKU-changing update killed right after its write is counted, recorded and rolled back by the retried chunk', async () => {
  const sku = tag();
  const seeded = await api.post('/products/bulk/csv/import', {
    content: csv(sku, `${sku}-A`, '5'),
    createIfNotExists: true,
  });
  expect(seeded.status).toBe(200);
  const jobId = `csvimp_${sku.toLowerCase()}`;
  const file = csv(sku, `${sku}-B`, '9'); // renames the variant: a write that changes SKUs

  killAt(Catalog.prototype, 'write', 'after');
  await expect(importChunk(jobId, file)).rejects.toThrow('worker killed');
  const retried = await importChunk(jobId, file);
  expect(retried.counts).toMatchObject({ updated: 1, skipped: 0, failed: 0 });
  await finish(jobId, retried.counts);

  const op = await api.get(`/products/bulk/operations/bop_${jobId}`);
  expect(op.body).toMatchObject({ status: 'completed', canRollback: true });
  expect(op.body.products).toEqual([expect.objectContaining({ sku, action: 'updated' })]);
  expect(await rollBack(`bop_${jobId}`)).toMatchObject({ status: 'completed', restored: 1 });
  const after = await productBySku(sku);
  expect(after).toMatchObject({ price: 5, variants: [expect.objectContaining({ sku: `${sku}-A` })] });
});

test('a create killed right after its write is counted as created by the retried chunk, not as a duplicate', async () => {
  const sku = tag();
  const jobId = `csvimp_${sku.toLowerCase()}`;
  const file = csv(sku, `${sku}-A`, '5');

  killAt(Catalog.prototype, 'insertMany', 'after');
  await expect(importChunk(jobId, file)).rejects.toThrow('worker killed');
  const retried = await importChunk(jobId, file);
  expect(retried.errors).toEqual([]);
  expect(retried.counts).toMatchObject({ created: 1, failed: 0, skipped: 0 });
  await finish(jobId, retried.counts);

  expect(await rollBack(`bop_${jobId}`)).toMatchObject({ status: 'completed', deleted: 1 });
  expect(await productBySku(sku)).toBeNull();
});

/** A direct edit of the product's price, as a user makes it between the kill and the retry. */
async function editPrice(sku: string, price: number) {
  const p = await productBySku(sku);
  const { id, createdAt: _c, updatedAt: _u, version: _v, tenantId: _t, ...body } = p!;
  const res = await api.put(`/products/${id}`, { ...body, price });
  expect(res.status).toBe(200);
}

test.each([
  ['a write that keeps SKUs', (sku: string) => csv(sku, `${sku}-A`, '9', 'Renamed'), 'recordMany'],
  ['a SKU-changing write', (sku: string) => csv(sku, `${sku}-B`, '9', 'Renamed'), 'record'],
] as const)(
  '%s recorded, killed before it was made, then edited by a user: the rollback puts back the user’s edit',
  async (_name, fileOf, recorder) => {
    const sku = tag();
    const seeded = await api.post('/products/bulk/csv/import', {
      content: csv(sku, `${sku}-A`, '5'),
      createIfNotExists: true,
    });
    expect(seeded.status).toBe(200);
    const jobId = `csvimp_${sku.toLowerCase()}`;
    const file = fileOf(sku);

    // dies once the change is recorded, before the product is written
    killAt(BulkOperations.prototype, recorder, 'after');
    await expect(importChunk(jobId, file)).rejects.toThrow('worker killed');
    jest.restoreAllMocks();
    await editPrice(sku, 7);
    const retried = await importChunk(jobId, file);
    expect(retried.counts).toMatchObject({ updated: 1, failed: 0 });
    await finish(jobId, retried.counts);
    expect(await productBySku(sku)).toMatchObject({ price: 9, title: { value: 'Renamed' } });

    expect(await rollBack(`bop_${jobId}`)).toMatchObject({ status: 'completed', restored: 1 });
    // what the import wrote over: the user's price, not the price before the user's edit
    expect(await productBySku(sku)).toMatchObject({ price: 7, title: { value: `Product ${sku}` } });
  },
);

test('a create killed after its write, edited by a user, then written again by the retry stays a create its rollback deletes', async () => {
  const sku = tag();
  const jobId = `csvimp_${sku.toLowerCase()}`;
  const file = csv(sku, `${sku}-A`, '5');

  killAt(Catalog.prototype, 'insertMany', 'after');
  await expect(importChunk(jobId, file)).rejects.toThrow('worker killed');
  jest.restoreAllMocks();
  await editPrice(sku, 7);
  const retried = await importChunk(jobId, file); // puts the file's price back
  await finish(jobId, retried.counts);

  const op = await api.get(`/products/bulk/operations/bop_${jobId}`);
  expect(op.body.products).toEqual([expect.objectContaining({ sku, action: 'created' })]);
  expect(await rollBack(`bop_${jobId}`)).toMatchObject({ status: 'completed', deleted: 1 });
  expect(await productBySku(sku)).toBeNull();
});

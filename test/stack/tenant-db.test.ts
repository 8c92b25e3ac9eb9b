import { TenantDb } from '../../shared/db/tenant-db';
import { defineCollection } from '../../shared/db/collection';
import { allCollections } from '../../shared/collections';
import { TestDeps } from '../helpers/stack';

/** The tenant-scoped layer, against the real database: every operation sees only its tenant. */
interface Item {
  tenantId: string;
  _id: string;
  sku: string;
  qty: number;
}
const items = defineCollection<Item>({
  name: 'test_items',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, sku: 1 }, options: { unique: true } }],
});

let deps: TestDeps;
let a: TenantDb;
let b: TenantDb;

beforeAll(async () => {
  deps = await TestDeps.open();
  await deps.db.collection(items.name).createIndex({ tenantId: 1, sku: 1 }, { unique: true });
  a = new TenantDb(deps.db, 'ten_A_' + Date.now());
  b = new TenantDb(deps.db, 'ten_B_' + Date.now());
  await a.collection(items).insertMany([
    { _id: 'a1', sku: 'X', qty: 1 },
    { _id: 'a2', sku: 'Y', qty: 2 },
  ]);
  await b.collection(items).insertOne({ _id: 'b1', sku: 'X', qty: 10 });
});
afterAll(() => deps.close());

test('inserts are stamped with the tenant; reads see only their tenant, even when a filter names another', async () => {
  expect(await deps.db.collection(items.name).findOne({ _id: 'a1' as never })).toMatchObject({ tenantId: a.tenantId });
  expect(await a.collection(items).countDocuments()).toBe(2);
  expect(await b.collection(items).findOne({ _id: 'a1' })).toBeNull();
  expect(
    await b
      .collection(items)
      .find({ tenantId: a.tenantId } as never)
      .toArray(),
  ).toEqual([expect.objectContaining({ _id: 'b1' })]);
  expect((await b.collection(items).distinct('sku')).sort()).toEqual(['X']);
  const agg = await a
    .collection(items)
    .aggregate([{ $group: { _id: null, total: { $sum: '$qty' } } }])
    .toArray();
  expect(agg[0].total).toBe(3);
});

test("updates, deletes and bulk writes cannot reach another tenant's documents", async () => {
  expect((await b.collection(items).updateOne({ _id: 'a1' }, { $set: { qty: 99 } })).matchedCount).toBe(0);
  expect((await b.collection(items).deleteMany({ sku: 'Y' })).deletedCount).toBe(0);
  expect(await b.collection(items).findOneAndUpdate({ _id: 'a2' }, { $inc: { qty: 1 } })).toBeNull();
  const res = await b
    .collection(items)
    .bulkWrite([
      { updateOne: { filter: { _id: 'a1' }, update: { $set: { qty: 50 } } } },
      { deleteOne: { filter: { _id: 'a2' } } },
      { updateOne: { filter: { sku: 'Z' }, update: { $set: { qty: 7 } }, upsert: true } },
    ]);
  expect(res.matchedCount + res.deletedCount).toBe(0);
  expect(await deps.db.collection(items.name).findOne({ _id: 'a1' as never })).toMatchObject({ qty: 1 });
  // the upsert landed in b, stamped with b's tenant
  expect(await b.collection(items).findOne({ sku: 'Z' })).toMatchObject({ tenantId: b.tenantId, qty: 7 });
});

test('an update that would move a document to another tenant is refused', async () => {
  expect(() => a.collection(items).updateOne({ _id: 'a1' }, { $set: { tenantId: b.tenantId } })).toThrow(/tenantId/);
});

test('unique indexes are per tenant', async () => {
  await expect(a.collection(items).insertOne({ _id: 'a3', sku: 'X', qty: 0 })).rejects.toMatchObject({ code: 11000 });
});

test('every declared index of a tenant collection starts with tenantId; system collections are not reachable through TenantDb', () => {
  for (const def of allCollections.filter((d) => d.scope === 'tenant')) {
    for (const index of def.indexes) expect(Object.keys(index.key)[0]).toBe('tenantId');
  }
  expect(() => defineCollection({ name: 'bad', scope: 'tenant', indexes: [{ key: { sku: 1 } }] })).toThrow(
    /must start with tenantId/,
  );
  const system = allCollections.find((d) => d.scope === 'system')!;
  expect(() => a.collection(system)).toThrow(/not a tenant-scoped/);
});

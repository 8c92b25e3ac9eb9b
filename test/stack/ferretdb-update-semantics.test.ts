import { Int32, type Collection, type Document } from 'mongodb';
import { TestDeps } from '../helpers/stack';

/**
 * Update operators on the embedded FerretDB, held to MongoDB's documented semantics where
 * FerretDB 1.24 differed and the server build patches it (FERRETDB_PATCHES in
 * scripts/stack/servers.ts; docs/servers.md).
 */
let deps: TestDeps;
let col: Collection<Document>;

beforeAll(async () => {
  deps = await TestDeps.open();
  col = deps.db.collection(`review_ferret_update_${Date.now().toString(36)}`);
});
afterAll(async () => {
  await col.drop().catch(() => undefined);
  await deps.close();
});

test('$inc of an int32 field past 2^31-1 promotes to a 64-bit integer (MongoDB), never wraps to a negative', async () => {
  // the driver sends whole JS numbers in int32 range as int32: both operands are int32
  await col.insertOne({ _id: 'inc1' as never, onHand: 2_000_000_000 });
  await col.updateOne({ _id: 'inc1' as never }, { $inc: { onHand: 500_000_000 } });
  const doc = await col.findOne({ _id: 'inc1' as never });
  expect(Number(doc!.onHand)).toBe(2_500_000_000);
});

test('$inc below -2^31 promotes too', async () => {
  await col.insertOne({ _id: 'inc2' as never, onHand: -2_000_000_000 });
  await col.updateOne({ _id: 'inc2' as never }, { $inc: { onHand: new Int32(-500_000_000) } });
  const doc = await col.findOne({ _id: 'inc2' as never });
  expect(Number(doc!.onHand)).toBe(-2_500_000_000);
});

test('$setOnInsert stores a null value on insert (MongoDB sets every field it names)', async () => {
  await col.updateOne(
    { _id: 'soi1' as never },
    { $setOnInsert: { managedBy: null, finishedAt: null, status: 'processing' } },
    { upsert: true },
  );
  const doc = await col.findOne({ _id: 'soi1' as never });
  expect(doc).toEqual({ _id: 'soi1', managedBy: null, finishedAt: null, status: 'processing' });
});

test('$setOnInsert stores an empty array on insert', async () => {
  await col.updateOne({ _id: 'soi2' as never }, { $setOnInsert: { items: [], n: 1 } }, { upsert: true });
  const doc = await col.findOne({ _id: 'soi2' as never });
  expect(doc).toEqual({ _id: 'soi2', items: [], n: 1 });
});

test('$set of a document with the same values under other keys replaces it', async () => {
  await col.insertOne({ _id: 'set1' as never, fit: { ' ': {} }, dims: { length: 30 } });
  await col.updateOne({ _id: 'set1' as never }, { $set: { fit: { '  ': {} }, dims: { width: 30 } } });
  const doc = await col.findOne({ _id: 'set1' as never });
  expect(doc).toEqual({ _id: 'set1', fit: { '  ': {} }, dims: { width: 30 } });
});

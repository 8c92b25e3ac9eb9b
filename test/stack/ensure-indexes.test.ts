import { defineCollection } from '../../shared/db/collection';
import { ensureIndexes } from '../../shared/db/mongo';
import { TestDeps } from '../helpers/stack';

/** Start-up creates the declared indexes and drops the retired ones, and can run again. */
let deps: TestDeps;
beforeAll(async () => {
  deps = await TestDeps.open();
});
afterAll(() => deps.close());

test('a retired index is dropped where it exists; the declared ones are made; a second run changes nothing', async () => {
  const name = `test_ensure_${Date.now()}`;
  const col = deps.db.collection(name);
  await col.createIndex({ tenantId: 1, brand: 1 });
  await col.insertOne({ tenantId: 't1', brand: 'Acme', status: 'active' });
  const def = defineCollection({
    name,
    scope: 'tenant',
    indexes: [{ key: { tenantId: 1, brand: 1, status: 1 } }],
    retiredIndexes: [
      { tenantId: 1, brand: 1 },
      { tenantId: 1, never: 1 },
    ],
  });
  const names = async () => (await col.listIndexes().toArray()).map((i) => i.name).sort();

  await ensureIndexes(deps.db, [def]);
  expect(await names()).toEqual(['_id_', 'tenantId_1_brand_1_status_1']);
  await ensureIndexes(deps.db, [def]);
  expect(await names()).toEqual(['_id_', 'tenantId_1_brand_1_status_1']);
  expect(await col.countDocuments({ tenantId: 't1', brand: 'Acme' })).toBe(1);

  // a collection that does not exist yet gets its indexes, and nothing to drop
  const fresh = defineCollection({ ...def, name: `${name}_fresh` });
  await ensureIndexes(deps.db, [fresh]);
  expect((await deps.db.collection(fresh.name).listIndexes().toArray()).map((i) => i.name).sort()).toEqual([
    '_id_',
    'tenantId_1_brand_1_status_1',
  ]);
});

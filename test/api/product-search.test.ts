import { ObjectId } from 'mongodb';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { products } from '../../shared/products/collections';
import { backfillProductSearch, dataUpgrades } from '../../shared/products/search-backfill';

/**
 * Product search (`q`) matches the SKU, the variant SKUs, the title, the brand and the tags, case
 * insensitive, every word. It reads a stored, lower-cased `search` field that every write keeps
 * current (products/search.ts): the API's own writes, bulk flows and their rollback, and the
 * one-off backfill of products stored before the field. The field is never shown.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantDb: TenantDb;
const P = `SR${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  api = new ApiClient(tenant.key);
  tenantDb = new TenantDb(deps.db, tenant.tenantId);
});
afterAll(() => deps.close());

async function skusFor(q: string): Promise<string[]> {
  const res = await api.get(`/products?q=${encodeURIComponent(q)}&limit=200`);
  expect(res.status).toBe(200);
  const count = await api.get(`/products/count?q=${encodeURIComponent(q)}`);
  expect(count.body.count).toBe(res.body.length);
  return res.body.map((p: { sku: string }) => p.sku).sort();
}

async function waitFor<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await read();
    if (done(v)) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('timed out');
}

test('every field searched, case insensitive, every word; the stored field never shown', async () => {
  const created = await api.post('/products', {
    sku: `${P}-shirt`,
    title: { value: 'Linen Shirt' },
    description: { value: 'Woven from flaxquill.' },
    price: 30,
    brand: 'Northpeak',
    tags: ['Summer'],
    options: [{ id: 'size', name: 'Size', values: ['S'] }],
    variants: [
      {
        sku: `${P}-shirt-s`,
        title: { value: 'Small' },
        price: 30,
        position: 0,
        options: [{ id: 'size', name: 'Size', value: 'S' }],
      },
    ],
  });
  expect(created.status).toBe(201);
  expect(created.body).not.toHaveProperty('search');
  expect((await api.get(`/products/${created.body.id}`)).body).not.toHaveProperty('search');
  expect((await api.get(`/products?q=${P}&extend=all`)).body[0]).not.toHaveProperty('search');

  const sku = `${P}-SHIRT`;
  for (const q of [`${P}-shirt-s`, 'LINEN', 'nen shi', 'northPEAK', 'summer', `${P.toLowerCase()} linen summer`])
    expect([q, await skusFor(q)]).toEqual([q, [sku]]);
  for (const q of ['flaxquill', `${P} wool`, 'linen-shirt']) expect([q, await skusFor(q)]).toEqual([q, []]);

  // a full update moves the search with it
  const { id: _id, tenantId: _t, createdAt: _c, updatedAt: _u, ...body } = created.body;
  const put = await api.put(`/products/${created.body.id}`, { ...body, title: { value: 'Wool coat' } });
  expect([put.status, put.body.message]).toEqual([200, undefined]);
  expect(await skusFor(`${P} linen`)).toEqual([]);
  expect(await skusFor(`${P} wool`)).toEqual([sku]);
});

test('a bulk flow and its rollback keep the search current', async () => {
  for (const i of [1, 2])
    expect((await api.post('/products', { sku: `${P}-MUG${i}`, title: { value: `Mug ${i}` }, price: 8 })).status).toBe(
      201,
    );
  const preview = await api.post('/products/bulk/flow/preview', {
    selection: { skus: [`${P}-MUG1`, `${P}-MUG2`] },
    rules: [{ actions: [{ type: 'add', field: 'tags', values: ['Zephyr'] }] }],
  });
  expect(preview.status).toBe(200);
  const applied = await api.post('/products/bulk/flow/execute', { previewId: preview.body.previewId });
  expect(applied.status).toBe(200);
  expect(await skusFor(`${P} zephyr`)).toEqual([`${P}-MUG1`, `${P}-MUG2`]);

  const rollback = await api.post(`/products/bulk/operations/${applied.body.operationId}/rollback`);
  expect(rollback.status).toBe(202);
  const done = await waitFor(
    async () => (await api.get(`/products/bulk/operations/${applied.body.operationId}/rollback`)).body,
    (b) => b.status === 'completed' || b.status === 'failed',
  );
  expect(done).toMatchObject({ status: 'completed', restored: 2 });
  expect(await skusFor(`${P} zephyr`)).toEqual([]);
  expect(await skusFor(`${P} mug`)).toEqual([`${P}-MUG1`, `${P}-MUG2`]);
});

test('products stored before the search field are given it once, by the backfill', async () => {
  const col = tenantDb.collection(products);
  const made = await api.post('/products', {
    sku: `${P}-OLD`,
    title: { value: 'Vintage Lantern' },
    price: 12,
    tags: ['attic'],
  });
  expect(made.status).toBe(201);
  const legacy = { _id: new ObjectId(made.body.id) };
  // as a product stored before the field was
  await col.updateOne(legacy, { $unset: { search: '' } });
  expect(await skusFor(`${P} lantern`)).toEqual([]);

  // the worker did it at its start: this database's mark is there, so a start does nothing
  expect(await deps.db.collection(dataUpgrades.name).findOne({ _id: 'products-search-field' as never })).not.toBeNull();
  expect(await backfillProductSearch(deps.db)).toBeNull();
  expect(await skusFor(`${P} lantern`)).toEqual([]);

  await deps.db.collection(dataUpgrades.name).deleteOne({ _id: 'products-search-field' as never });
  expect(await backfillProductSearch(deps.db)).toBeGreaterThanOrEqual(1);
  expect(await skusFor(`${P} lantern`)).toEqual([`${P}-OLD`]);
  expect(await skusFor(`${P} attic`)).toEqual([`${P}-OLD`]);
  const stored = await col.findOne({ _id: legacy._id });
  expect(stored?.search).toBe(`${P.toLowerCase()}-old\nvintage lantern\nattic`);
  expect(await backfillProductSearch(deps.db)).toBeNull();
});

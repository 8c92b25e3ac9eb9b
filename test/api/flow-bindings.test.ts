import { ObjectId } from 'mongodb';
import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { bulkOperationItems } from '../../shared/bulk/operations';
import { TenantDb } from '../../shared/db/tenant-db';
import { products } from '../../shared/products/collections';

/**
 * A bulk edit never changes a product's bindings (docs/bulk-edits.md): they are the channels'
 * record of the product. A rule flow that changes prices leaves the product's and its variants'
 * bindings exactly as stored (a publication's, and bindings stored without ids, as publications
 * once wrote them), and reports and records only the fields it changed.
 */
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let tenantDb: TenantDb;
let server: ChannelServer;
const P = `FB${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey();
  api = new ApiClient(t.key);
  tenantDb = new TenantDb(deps.db, t.tenantId);
  server = await new ChannelServer(SECRET).start();
});
afterAll(async () => {
  await server.close();
  await deps.close();
});

async function channel(name: string): Promise<string> {
  const res = await api.post('/channels', {
    name,
    type: 'custom',
    settings: { endpointUrl: server.url },
    secret: SECRET,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

const fieldsOf = (run: { body: { fields: { field: string }[] } }) => run.body.fields.map((f) => f.field);

test('a price-only flow on a published product leaves its bindings as the publication wrote them, now pending', async () => {
  const channelId = await channel('Shop');
  const sku = `${P}-1`;
  const created = await api.post('/products', {
    sku,
    title: { value: 'Mug' },
    price: 10,
    status: 'active',
    brand: 'Acme',
    category: { name: 'Tools', path: 'Home > Tools' },
    media: [{ src: 'https://img.example.com/1.jpg', name: 'front', alt: { value: 'front' }, position: 0 }],
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const pub = await api.post('/products/export', { channelId, mode: 'selected', productIds: [id] });
  expect(pub.body.results).toEqual([{ sku, success: true }]);
  const before = (await api.get(`/products/${id}`)).body;
  expect(before.bindings).toHaveLength(1);

  const run = await api.post('/products/bulk/flow/execute', {
    selection: { skus: [sku] },
    rules: [{ actions: [{ type: 'set', field: 'price', value: 12 }] }],
  });
  expect(run.status).toBe(200);
  expect(fieldsOf(run)).toEqual(['price']);
  const after = (await api.get(`/products/${id}`)).body;
  expect(after.price).toBe(12);
  // as written, except that the channel now holds an older copy (it was sent price 10)
  expect(after.bindings).toEqual([{ ...before.bindings[0], syncStatus: 'pending' }]);
});

test('bindings stored without ids stay as stored when a flow changes the product and its variants', async () => {
  const channelId = await channel('Legacy');
  const sku = `${P}-2`;
  const created = await api.post('/products', {
    sku,
    title: { value: 'Shirt' },
    price: 10,
    bindings: [{ channelId, handle: 'shirt', type: 'custom' }],
    variants: [
      {
        sku: `${sku}-S`,
        title: { value: 'Small' },
        price: 10,
        position: 0,
        bindings: [{ channelId, handle: 'shirt-s' }],
      },
    ],
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  // as a publication wrote them before bindings carried ids
  const stored = await tenantDb.collection(products).findOne({ _id: new ObjectId(id) });
  const noId = <T extends { id?: string }>(item: T): T => {
    const copy = { ...item };
    delete copy.id;
    return copy;
  };
  await tenantDb.collection(products).updateOne(
    { _id: new ObjectId(id) },
    {
      $set: {
        bindings: stored!.bindings.map(noId),
        variants: stored!.variants.map((v) => ({ ...v, bindings: v.bindings.map(noId) })),
      },
    },
  );
  const before = (await api.get(`/products/${id}`)).body;
  expect(before.bindings.map((b: { id?: string }) => b.id)).toEqual([undefined]);

  const flow = {
    selection: { skus: [sku] },
    rules: [
      {
        actions: [
          { type: 'set', field: 'price', value: 14 },
          { type: 'set', field: 'variants.price', value: 14 },
        ],
      },
    ],
  };
  const preview = await api.post('/products/bulk/flow/preview', flow);
  expect(preview.status).toBe(200);
  expect(fieldsOf(preview)).toEqual(['price', 'variants']);
  const run = await api.post('/products/bulk/flow/execute', { previewId: preview.body.previewId });
  expect(run.status).toBe(200);
  expect(run.body.counts).toMatchObject({ changed: 1 });

  const after = (await api.get(`/products/${id}`)).body;
  expect({ price: after.price, variantPrice: after.variants[0].price }).toEqual({ price: 14, variantPrice: 14 });
  expect(after.bindings).toEqual(before.bindings);
  expect(after.variants[0].bindings).toEqual(before.variants[0].bindings);
  // the operation records (and a rollback would restore) only the fields the flow changed
  const item = await tenantDb.collection(bulkOperationItems).findOne({ operationId: run.body.operationId });
  expect(Object.keys(item!.beforeFields!.set).sort()).toEqual(['price', 'variants']);
});

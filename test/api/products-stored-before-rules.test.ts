import { ObjectId } from 'mongodb';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * Input rules added later (a blank title, repeated variant/media ids, a bundle naming one SKU
 * twice, an impossible date) refuse a write for what it brings, not for what the product already
 * holds: a product stored before them still takes any other change (here a flow setting its
 * price). An error the stored product has too, same field and message, is left alone.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `RGLE${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'review legacy edits')).key);
});
afterAll(() => deps.close());

/** Puts a product in the state a53ee5d now refuses, as it could be stored before that commit. */
const legacy = (id: string, set: Record<string, unknown>) =>
  deps.db.collection('products').updateOne({ _id: new ObjectId(id) }, { $set: set });

test('a flow that only sets the price reaches products stored before the new input rules', async () => {
  expect((await api.post('/products', { sku: `${P}-X`, title: { value: 'part' }, price: 1 })).status).toBe(201);
  const blank = await api.post('/products', { sku: `${P}-BLANK`, title: { value: 'was blank' }, price: 1 });
  expect(blank.status).toBe(201);
  const kit = await api.post('/products', {
    sku: `${P}-KIT`,
    productType: 'bundle',
    title: { value: 'kit' },
    price: 5,
    bundleConfig: { components: [{ productSku: `${P}-X`, quantity: 1 }] },
  });
  expect(kit.status).toBe(201);
  // as stored before a53ee5d (POST answered 201 for both)
  await legacy(blank.body.id, { 'title.value': '   ' });
  await legacy(kit.body.id, {
    'bundleConfig.components': [...kit.body.bundleConfig.components, ...kit.body.bundleConfig.components],
  });

  const run = await api.post('/products/bulk/flow/execute', {
    selection: { skus: [`${P}-BLANK`, `${P}-KIT`] },
    rules: [{ actions: [{ type: 'set', field: 'price', value: 9 }] }],
  });
  const prices = [
    (await api.get(`/products/${blank.body.id}`)).body.price,
    (await api.get(`/products/${kit.body.id}`)).body.price,
  ];
  // now: 207, counts.invalid 2 (title.value "must not be blank"; bundleConfig.components.1.productSku
  // "names … again"), and neither price changes
  const refused = (run.body.errors ?? []).map((e: any) => e.fieldErrors?.map((f: any) => f.field).join(','));
  expect({ status: run.status, counts: run.body.counts, prices, refused }).toEqual({
    status: 200,
    refused: [],
    counts: expect.objectContaining({ changed: 2, invalid: 0 }),
    prices: [9, 9],
  });
});

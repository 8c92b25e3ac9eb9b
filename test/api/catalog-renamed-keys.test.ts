import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A write that moves a value to another key is stored as sent. Before, the embedded FerretDB's
 * $set judged a document unchanged when its values matched in order, keys aside: a PUT that
 * renamed a fitmentConfig key, or moved a dimension or an SEO text to another field, answered 200
 * and kept the old key (a fuzz run found it with fitmentConfig {"  ": {}} over {" ": {}}). The
 * server build patches that test to compare keys (scripts/stack/servers.ts).
 */
let deps: TestDeps;
let api: ApiClient;
const P = `CRK${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'catalog renamed keys');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

test.each([
  ['fitmentConfig', { fitmentConfig: { roofRack: { maxKg: 40 } } }, { fitmentConfig: { roofBox: { maxKg: 40 } } }],
  ['fitmentConfig (keys of spaces)', { fitmentConfig: { ' ': {} } }, { fitmentConfig: { '  ': {} } }],
  ['shipping.dimensions', { shipping: { dimensions: { length: 30 } } }, { shipping: { dimensions: { width: 30 } } }],
  ['seo', { seo: { metaTitle: 'Linen shirt' } }, { seo: { metaDescription: 'Linen shirt' } }],
  [
    'a json metafield',
    { metafields: [{ key: 'fit', type: 'json', value: { slim: true } }] },
    { metafields: [{ key: 'fit', type: 'json', value: { loose: true } }] },
  ],
])('PUT moving a value to another key in %s stores the new key only', async (name, before, after) => {
  const sku = `${P}-${name.replace(/\W/g, '').toUpperCase()}`;
  const base = { sku, title: { value: 'Linen shirt' }, price: 10 };
  const created = await api.post('/products', { ...base, ...before });
  expect(created.status).toBe(201);
  const put = await api.put(`/products/${created.body.id}`, { ...base, ...after });
  expect(put.status).toBe(200);
  const field = Object.keys(after)[0] as keyof typeof after;
  expect(put.body[field]).toEqual(after[field]);
  // a second request sees it too
  const read = await api.get(`/products/${created.body.id}`);
  expect(read.body[field]).toEqual(after[field]);
});

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * Free-form product fields (fitmentConfig, a json metafield's value) take any JSON, but not a
 * number too large for a double (1e309 parses to Infinity, which the store refuses): 400
 * validation-error naming the field, nothing stored.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
const P = `CINF${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'catalog infinity');
  tenantId = t.tenantId;
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

const json = { 'content-type': 'application/json' };

test.each([
  ['fitmentConfig', '"fitmentConfig":{"maxLoadKg":1e309}'],
  ['metafields.0.value', '"metafields":[{"key":"weight","type":"json","value":1e309}]'],
])('POST /products with 1e309 in %s is a 400 validation-error, not a 500', async (field, fragment) => {
  const sku = `${P}-${field.replace(/\W/g, '')}`;
  const res = await api.post('/products', undefined, {
    raw: `{"sku":"${sku}","title":{"value":"Roof rack"},"price":10,${fragment}}`,
    headers: json,
  });
  expect({ status: res.status, code: res.body?.code }).toEqual({ status: 400, code: 'validation-error' });
  expect(JSON.stringify(res.body.fieldErrors ?? [])).toContain(field.split('.')[0]);
  // nothing stored, the SKU free
  expect(await deps.db.collection('products').countDocuments({ tenantId, sku })).toBe(0);
  expect((await api.get(`/products/sku/${sku}/exists`)).body.exists).toBe(false);
});

test('PUT /products/{id} with 1e309 in fitmentConfig is a 400 and leaves the product as it was', async () => {
  const sku = `${P}-PUT`;
  const created = await api.post('/products', { sku, title: { value: 'Rack' }, price: 10, fitmentConfig: { a: 1 } });
  expect(created.status).toBe(201);
  const res = await api.put(`/products/${created.body.id}`, undefined, {
    raw: `{"sku":"${sku}","title":{"value":"Rack"},"price":10,"fitmentConfig":{"a":1e309}}`,
    headers: json,
  });
  expect({ status: res.status, code: res.body?.code }).toEqual({ status: 400, code: 'validation-error' });
  expect((await api.get(`/products/${created.body.id}`)).body.fitmentConfig).toEqual({ a: 1 });
});

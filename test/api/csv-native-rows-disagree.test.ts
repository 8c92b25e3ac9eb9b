import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * In `native`, the rows of one product share its `sku` and its product columns are read from its
 * first row. A later row giving a product column another value fails the product's rows together
 * (207, an error naming the row, nothing written); rows that agree, as an export with variants
 * writes them, import as before. Before, the second row's cells were dropped while the answer
 * counted it written (`updated: 2`, `errors: []`, the price of the first row kept).
 */
let deps: TestDeps;
let api: ApiClient;
let n = 0;
const P = () => `DUP${Date.now().toString(36).toUpperCase()}${++n}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'csv native rows disagree')).key);
});
afterAll(() => deps.close());

test('a second product row giving another price fails the product, not reported applied', async () => {
  const sku = P();
  const made = await api.post('/products', { sku, title: { value: 'Lamp' }, price: 5, status: 'active' });
  expect(made.status).toBe(201);

  const res = await api.post('/products/bulk/csv/import', { content: `sku,price\r\n${sku},7\r\n${sku},8\r\n` });
  // the product's rows fail together, naming the row that disagrees; nothing is written
  expect(res.status).toBe(207);
  expect(res.body).toMatchObject({ totalProcessed: 2, updated: 0 });
  expect(JSON.stringify(res.body.errors)).toContain('row 3 gives product');
  expect((await api.get(`/products/${made.body.id}`)).body.price).toBe(5);
  // rows repeating the same values (an exported product with variants) still agree
  const same = await api.post('/products/bulk/csv/import', { content: `sku,price\r\n${sku},7\r\n${sku},7\r\n` });
  expect(same.status).toBe(200);
  expect((await api.get(`/products/${made.body.id}`)).body.price).toBe(7);
});

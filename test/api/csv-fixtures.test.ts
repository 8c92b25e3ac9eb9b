import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * The real platform files of ../shared/fixtures/csv, through the HTTP import: each imports with
 * zero failed rows into the products it describes; exported in the same layout and imported
 * again, nothing changes.
 */
const FIXTURES = join(__dirname, '..', '..', '..', 'shared', 'fixtures', 'csv');
let deps: TestDeps;

beforeAll(async () => {
  deps = await TestDeps.open();
});
afterAll(() => deps.close());

test.each([
  ['shopify_export_packt_product_data.csv', 'shopify', 20, 21],
  ['shopify_product_template_legacy_2019.csv', 'shopify', 1, 3],
  ['shopify_template_2024_headers_shelfshift.csv', 'shopify', 3, 16],
  ['woocommerce_sample_products.csv', 'woocommerce', 18, 25],
  ['woocommerce_experimental_fashion_sample_9_products.csv', 'woocommerce', 9, 9],
])('%s (%s): %i products, zero failed rows, round-trip changes nothing', async (file, format, productCount, rows) => {
  const api = new ApiClient((await deps.tenantWithKey()).key);
  const content = readFileSync(join(FIXTURES, file), 'utf8');
  const first = await api.post('/products/bulk/csv/import', { content, format, createIfNotExists: true });
  expect({ status: first.status, errors: first.body.errors }).toEqual({ status: 200, errors: [] });
  expect(first.body).toMatchObject({ totalProcessed: rows, created: rows, updated: 0, skipped: 0 });
  expect((await api.get('/products/count')).body.count).toBe(productCount);

  const before = (await api.get('/products?extend=all&limit=200&sort=sku')).body;
  const exported = await api.post('/products/export-csv', { format, selection: 'all' });
  expect(exported.status).toBe(200);
  const again = await api.post('/products/bulk/csv/import', { content: exported.text, format });
  expect({
    status: again.status,
    errors: again.body.errors,
    created: again.body.created,
    updated: again.body.updated,
  }).toEqual({ status: 200, errors: [], created: 0, updated: 0 });
  expect(again.body.skipped).toBe(again.body.totalProcessed);
  expect((await api.get('/products?extend=all&limit=200&sort=sku')).body).toEqual(before);
});

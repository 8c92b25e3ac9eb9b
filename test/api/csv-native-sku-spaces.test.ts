import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A native `sku` cell with a trailing space (as spreadsheets often leave) names the
 * product whose SKU it holds.
 *
 * Spec, Product: "sku ... Unique per (tenantId, sku); converted to UPPERCASE on save" — a
 * lower-case cell finds its product. The native layout itself groups rows by the trimmed SKU and
 * reports that trimmed SKU as the row's `sku` (shared/csv/layouts/native.ts parse), and the
 * shopify/woocommerce layouts trim SKU cells (values.ts toSku). But the lookup uses the untrimmed
 * cell (shared/csv/import.ts planImport), so the row is answered 200 "skipped" with no error and
 * the product is not updated; with createIfNotExists it becomes a row error
 * `sku must match pattern`. Spec: "Clients must inspect errors[] even on 2xx" — here there is
 * nothing to inspect.
 */
let deps: TestDeps;
let api: ApiClient;
beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'native sku spaces')).key);
});
afterAll(() => deps.close());

test('"SKU " updates the product SKU, as "sku" (lower case) does', async () => {
  const sku = `SP${Date.now().toString(36).toUpperCase()}`;
  const made = await api.post('/products', { sku, title: { value: 'X' }, price: 3 });
  expect(made.status).toBe(201);

  const lower = await api.post('/products/bulk/csv/import', { content: `sku,price\n${sku.toLowerCase()},5\n` });
  expect(lower.body).toMatchObject({ updated: 1, skipped: 0, errors: [] });

  const spaced = await api.post('/products/bulk/csv/import', { content: `sku,price\n${sku} ,6\n` });
  expect(spaced.body).toMatchObject({ updated: 1, skipped: 0, errors: [] });
  expect((await api.get(`/products/${made.body.id}`)).body.price).toBe(6);
});

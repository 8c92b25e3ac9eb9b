import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/** Exports that import again unchanged (docs/csv.md: "exporting and importing again in the same layout changes nothing"). */

let deps: TestDeps;
beforeAll(async () => {
  deps = await TestDeps.open();
});
afterAll(() => deps.close());

let n = 0;
const P = () => `RE${Date.now().toString(36).toUpperCase()}${++n}`;

/**
 * Two products: A has seo.slug "blue-shirt-<x>", B has no slug and the SKU "BLUE-SHIRT-<X>".
 * The Shopify export writes both under the Handle "blue-shirt-<x>" (a slug, and a SKU in handle
 * form); the import tells them apart by the Product SKU column the export writes on each
 * product's first row, so importing the file again changes nothing.
 */
test('shopify: a slug equal to another product SKU in handle form does not merge two products', async () => {
  const api = new ApiClient((await deps.tenantWithKey(undefined, 'csv2 handle collision')).key);
  const x = P();
  const a = await api.post('/products', {
    sku: `${x}-A`,
    title: { value: 'Shirt A' },
    price: 10,
    status: 'active',
    seo: { slug: `blue-shirt-${x.toLowerCase()}` },
  });
  expect(a.status).toBe(201);
  const b = await api.post('/products', {
    sku: `BLUE-SHIRT-${x}`,
    title: { value: 'Shirt B' },
    price: 12,
    status: 'active',
  });
  expect(b.status).toBe(201);
  const exported = await api.post('/products/export-csv', { format: 'shopify', selection: 'all' });
  expect(exported.status).toBe(200);
  const res = await api.post('/products/bulk/csv/import', { content: exported.text, format: 'shopify' });
  expect(res.body).toMatchObject({ created: 0, updated: 0, skipped: 2, errors: [] });
});

/**
 * A physical product that does not need shipping (shipping.requiresShipping false: picked up in
 * store), exported as WooCommerce ("simple, virtual") and imported again: it stays physical and
 * nothing changes.
 */
test('woocommerce: a physical product without shipping stays physical through export and import', async () => {
  const api = new ApiClient((await deps.tenantWithKey(undefined, 'csv2 woo pickup')).key);
  const sku = P();
  const made = await api.post('/products', {
    sku,
    title: { value: 'Sofa (pickup only)' },
    price: 500,
    status: 'active',
    productType: 'physical',
    shipping: { requiresShipping: false },
  });
  expect(made.status).toBe(201);
  const before = (await api.get(`/products/${made.body.id}`)).body;
  const exported = await api.post('/products/export-csv', { format: 'woocommerce', selection: 'all' });
  const res = await api.post('/products/bulk/csv/import', { content: exported.text, format: 'woocommerce' });
  const after = (await api.get(`/products/${made.body.id}`)).body;
  expect(after.productType).toBe(before.productType);
  expect(res.body).toMatchObject({ created: 0, updated: 0, skipped: 1, errors: [] });
});

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * Exporting a product in a layout and importing the file again must change nothing (docs/csv.md:
 * "a product the file leaves unchanged is `skipped`, so exporting and importing again in the same
 * layout changes nothing").
 */
let deps: TestDeps;
beforeAll(async () => {
  deps = await TestDeps.open();
});
afterAll(() => deps.close());

let n = 0;
const P = () => `RR${Date.now().toString(36).toUpperCase()}${++n}`;

const withoutUpdatedAt = ({ updatedAt: _u, ...rest }: Record<string, unknown>) => rest;

async function roundTrip(format: string, body: Record<string, unknown>) {
  const api = new ApiClient((await deps.tenantWithKey(undefined, `csv2 rt ${format}`)).key);
  const made = await api.post('/products', body);
  if (made.status !== 201) throw new Error(made.text);
  const before = (await api.get(`/products/${made.body.id}`)).body;
  const exported = await api.post('/products/export-csv', { format, selection: 'all' });
  expect(exported.status).toBe(200);
  const res = await api.post('/products/bulk/csv/import', { content: exported.text, format });
  const after = (await api.get(`/products/${made.body.id}`)).body;
  return { res, before, after };
}

/**
 * A 'service' product exported as Shopify (every row "Variant Requires Shipping" FALSE) and
 * imported again: skipped, productType stays 'service' (FALSE is what the export writes for it).
 */
test('shopify: a service product survives export and import (productType kept)', async () => {
  const sku = P();
  const { res, before, after } = await roundTrip('shopify', {
    sku,
    title: { value: 'Consultation' },
    price: 50,
    status: 'active',
    productType: 'service',
  });
  expect(after.productType).toBe(before.productType);
  expect(res.body).toMatchObject({ created: 0, updated: 0, skipped: 1, errors: [] });
});

/**
 * A variable product whose variant is a 'service' variant, exported as WooCommerce (Type
 * "variation", no flag) and imported again: skipped, the variant's productType kept.
 */
test('woocommerce: a service variant survives export and import (variant productType kept)', async () => {
  const sku = P();
  const { res, before, after } = await roundTrip('woocommerce', {
    sku,
    title: { value: 'Repair' },
    price: 30,
    status: 'active',
    options: [{ id: 'option1', name: 'Level', values: ['Basic', 'Full'] }],
    variants: [
      {
        sku: `${sku}-B`,
        title: { value: 'Basic' },
        price: 30,
        position: 0,
        productType: 'service',
        options: [{ id: 'option1', name: 'Level', value: 'Basic' }],
      },
      {
        sku: `${sku}-F`,
        title: { value: 'Full' },
        price: 60,
        position: 1,
        options: [{ id: 'option1', name: 'Level', value: 'Full' }],
      },
    ],
  });
  expect(after.variants).toEqual(before.variants);
  expect(res.body).toMatchObject({ created: 0, updated: 0, skipped: 3, errors: [] });
});

/**
 * Variants stored with positions 1 and 2 (the schema allows any integer ≥ 0), exported as Shopify
 * and imported again: skipped, positions kept (the order the export wrote is unchanged).
 */
test('shopify: variant positions that do not start at 0 survive export and import', async () => {
  const sku = P();
  const { res, before, after } = await roundTrip('shopify', {
    sku,
    title: { value: 'Shirt' },
    price: 20,
    status: 'active',
    options: [{ id: 'option1', name: 'Size', values: ['S', 'M'] }],
    variants: [
      {
        sku: `${sku}-S`,
        title: { value: 'S' },
        price: 20,
        position: 1,
        options: [{ id: 'option1', name: 'Size', value: 'S' }],
      },
      {
        sku: `${sku}-M`,
        title: { value: 'M' },
        price: 20,
        position: 2,
        options: [{ id: 'option1', name: 'Size', value: 'M' }],
      },
    ],
  });
  expect(withoutUpdatedAt(after)).toEqual(withoutUpdatedAt(before));
  expect(res.body).toMatchObject({ created: 0, updated: 0, errors: [] });
});

/**
 * An HTML description with Windows line ends (CRLF), exported as WooCommerce (each as a literal
 * \n, read back as LF) and imported again: skipped, description unchanged.
 */
test('woocommerce: a description with CRLF line ends survives export and import', async () => {
  const sku = P();
  const { res, before, after } = await roundTrip('woocommerce', {
    sku,
    title: { value: 'Mug' },
    price: 20,
    status: 'active',
    htmlDescription: { value: '<p>One</p>\r\n<p>Two</p>' },
  });
  expect(after.htmlDescription).toEqual(before.htmlDescription);
  expect(res.body).toMatchObject({ created: 0, updated: 0, skipped: 1, errors: [] });
});

import { parseCsvText, toCsvText } from '../../shared/csv/parse';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * One bad row fails that row and deletes no stored data: a variation/variant row the import
 * refuses is reported as a failed row, and the product it belongs to, written without it, keeps
 * the stored variant of that SKU. (spec "CSV import (products)": 207 "partial success",
 * errors[] of {row, sku, message}; docs/csv.md: "A variant matched by SKU keeps every stored
 * field the file has no column for" — a refused row carries nothing, so nothing of it may go.)
 */
let deps: TestDeps;
beforeAll(async () => {
  deps = await TestDeps.open();
});
afterAll(() => deps.close());

let n = 0;
const P = () => `RB${Date.now().toString(36).toUpperCase()}${++n}`;

function shirt(sku: string) {
  return {
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
        position: 0,
        options: [{ id: 'option1', name: 'Size', value: 'S' }],
      },
      {
        sku: `${sku}-M`,
        title: { value: 'M' },
        price: 22,
        position: 1,
        options: [{ id: 'option1', name: 'Size', value: 'M' }],
      },
    ],
  };
}

async function setup(format: string) {
  const api = new ApiClient((await deps.tenantWithKey(undefined, `csv2 bad row ${format}`)).key);
  const sku = P();
  const made = await api.post('/products', shirt(sku));
  if (made.status !== 201) throw new Error(made.text);
  const exported = await api.post('/products/export-csv', { format, selection: 'all' });
  expect(exported.status).toBe(200);
  return { api, sku, id: made.body.id as string, csv: exported.text as string };
}

function edited(csv: string, edit: (values: Record<string, string>) => void): string {
  const { columns, records } = parseCsvText(csv);
  const rows = records.map((r) => ({ ...r.values }));
  rows.forEach(edit);
  return toCsvText(columns, rows);
}

/**
 * A WooCommerce file changes the S variation's price and has a typo in the M variation's Type
 * ("varation"): M's row fails and the stored M variant stays.
 */
test('woocommerce: a variation row with a bad Type does not delete the stored variant', async () => {
  const { api, sku, id, csv } = await setup('woocommerce');
  const content = edited(csv, (r) => {
    if (r.SKU === `${sku}-S`) r['Regular price'] = '21';
    if (r.SKU === `${sku}-M`) r.Type = 'varation';
  });
  const res = await api.post('/products/bulk/csv/import', { content, format: 'woocommerce' });
  expect(res.body.errors).toHaveLength(1);
  expect(res.body.errors[0]).toMatchObject({ sku: `${sku}-M` });
  const after = (await api.get(`/products/${id}`)).body;
  expect(after.variants.map((v: { sku: string }) => v.sku)).toEqual([`${sku}-S`, `${sku}-M`]);
});

/**
 * A Shopify file changes the S variant's price; the M variant's row lost its Handle (a hand edit):
 * that row fails ("Handle: required") and the stored M variant stays.
 */
test('shopify: a variant row without a handle does not delete the stored variant', async () => {
  const { api, sku, id, csv } = await setup('shopify');
  const content = edited(csv, (r) => {
    if (r['Variant SKU'] === `${sku}-S`) r['Variant Price'] = '21';
    if (r['Variant SKU'] === `${sku}-M`) r.Handle = '';
  });
  const res = await api.post('/products/bulk/csv/import', { content, format: 'shopify' });
  expect(res.body.errors).toHaveLength(1);
  const after = (await api.get(`/products/${id}`)).body;
  expect(after.variants.map((v: { sku: string }) => v.sku)).toEqual([`${sku}-S`, `${sku}-M`]);
});

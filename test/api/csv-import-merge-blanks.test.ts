import { parseCsvText, toCsvText } from '../../shared/csv/parse';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * How an import merges (docs/csv.md): a blank among a product's commerce cells clears the stored
 * value in the platform layouts, a short native record hides no column of the header, and the
 * platform layouts write every attribute and every variant of a product so that exporting and
 * importing again changes nothing.
 */

let deps: TestDeps;
beforeAll(async () => {
  deps = await TestDeps.open();
});
afterAll(() => deps.close());

let n = 0;
const P = () => `RV${Date.now().toString(36).toUpperCase()}${++n}`;

async function apiFor(name: string) {
  return new ApiClient((await deps.tenantWithKey(undefined, name)).key);
}

async function make(api: ApiClient, body: Record<string, unknown>) {
  const made = await api.post('/products', body);
  if (made.status !== 201) throw new Error(made.text);
  return (await api.get(`/products/${made.body.id}`)).body;
}

async function exported(api: ApiClient, format: string) {
  const res = await api.post('/products/export-csv', { format, selection: 'all' });
  expect(res.status).toBe(200);
  return res.text as string;
}

function edited(csv: string, edit: (values: Record<string, string>) => void): string {
  const { columns, records } = parseCsvText(csv);
  const rows = records.map((r) => ({ ...r.values }));
  rows.forEach(edit);
  return toCsvText(columns, rows);
}

const withoutUpdatedAt = ({ updatedAt: _u, ...rest }: Record<string, unknown>) => rest;

/**
 * Ending a sale in a WooCommerce file: the user blanks "Sale price" and keeps "Regular price":
 * price 20, no compare-at price (the stored one is not kept beside the new price). docs/csv.md "How an import merges": "a blank cell ...
 * in one part of a field the file gives, clears the stored value ... A price column carries the
 * compare-at price with it ... so the two are decided together."
 */
test('woocommerce: blanking Sale price of a simple product ends the sale (compare-at price cleared)', async () => {
  const api = await apiFor('csv2 woo sale end');
  const sku = P();
  const before = await make(api, { sku, title: { value: 'Mug' }, price: 15, compareAtPrice: 20, status: 'active' });
  const csv = edited(await exported(api, 'woocommerce'), (r) => {
    if (r.SKU === sku) r['Sale price'] = '';
  });
  const res = await api.post('/products/bulk/csv/import', { content: csv, format: 'woocommerce' });
  expect(res.body).toMatchObject({ updated: 1, errors: [] });
  const after = (await api.get(`/products/${before.id}`)).body;
  expect(after.price).toBe(20);
  expect(after.compareAtPrice).toBeUndefined();
});

/**
 * A Shopify file that blanks "Variant Compare At Price" and "Variant Barcode" of a product
 * without variants (its one "Default Title" row carries the product's commerce fields): both are
 * cleared, as for a variant: docs/csv.md "In shopify and woocommerce a blank cell
 * among a variant's ... columns ... clears the stored value (their exports write a blank for
 * "none": no compare-at price, no barcode)".
 */
test('shopify: blank compare-at price and barcode on a product without variants clear them', async () => {
  const api = await apiFor('csv2 shopify simple blanks');
  const sku = P();
  const before = await make(api, {
    sku,
    title: { value: 'Mug' },
    price: 15,
    compareAtPrice: 20,
    barcode: '750100000001',
    status: 'active',
  });
  const csv = edited(await exported(api, 'shopify'), (r) => {
    if (r['Variant SKU'] === sku) {
      r['Variant Compare At Price'] = '';
      r['Variant Barcode'] = '';
    }
  });
  const res = await api.post('/products/bulk/csv/import', { content: csv, format: 'shopify' });
  expect(res.body).toMatchObject({ updated: 1, errors: [] });
  const after = (await api.get(`/products/${before.id}`)).body;
  expect(after.compareAtPrice).toBeUndefined();
  expect(after.barcode).toBeUndefined();
});

/**
 * A native file whose first record is short (a product without variants, written by a tool
 * that drops trailing empty cells; the parser tolerates ragged rows): the next product's
 * variant.price change is applied (docs/csv.md: "the fields the file carries replace the stored
 * ones"; the header carries variant.price), whatever columns the first record has.
 */
test('native: a short first record does not stop a later row from updating its variant price', async () => {
  const api = await apiFor('csv2 native short first');
  const a = P();
  const b = P();
  await make(api, { sku: a, title: { value: 'Hat' }, price: 5 });
  const shirt = await make(api, {
    sku: b,
    title: { value: 'Shirt' },
    price: 10,
    variants: [{ sku: `${b}-S`, title: { value: 'Shirt S' }, price: 10, position: 0 }],
  });
  const content = `sku,title,variant.sku,variant.price\r\n${a},Hat\r\n${b},Shirt,${b}-S,15\r\n`;
  const res = await api.post('/products/bulk/csv/import', { content });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ updated: 1, skipped: 1, errors: [] });
  const after = (await api.get(`/products/${shirt.id}`)).body;
  expect(after.variants[0].price).toBe(15);
});

/**
 * A product with four attributes (Material, Color, Fit, Origin) exported in the woocommerce
 * layout (Attribute 1..4) and imported again: nothing changes (docs/csv.md: "exporting and importing again in the same layout changes
 * nothing").
 */
test('woocommerce: export then import of a product with four attributes keeps all four', async () => {
  const api = await apiFor('csv2 woo four attributes');
  const sku = P();
  const before = await make(api, {
    sku,
    title: { value: 'Shirt' },
    price: 20,
    status: 'active',
    attributes: [
      { name: 'Material', value: 'Cotton' },
      { name: 'Color', value: 'Red' },
      { name: 'Fit', value: 'Slim' },
      { name: 'Origin', value: 'MX' },
    ],
  });
  const csv = await exported(api, 'woocommerce');
  const res = await api.post('/products/bulk/csv/import', { content: csv, format: 'woocommerce' });
  expect(res.body).toMatchObject({ created: 0, updated: 0, skipped: 1, errors: [] });
  const after = (await api.get(`/products/${before.id}`)).body;
  expect(after.attributes).toEqual(before.attributes);
});

/**
 * A product with one variant and no options (allowed by the product rules), exported in the
 * shopify layout and imported again: the one option-less variant row, whose Variant SKU is not
 * the Product SKU, is read as that variant (not as a product without variants, which would write
 * the variant's cost and barcode over the product's), so nothing changes (docs/csv.md:
 * "exporting and importing again in the same layout changes nothing"). The product's price is
 * its variant's: Shopify's product price is its lowest variant price, as decided (docs/csv.md).
 */
test('shopify: export then import of a product with one option-less variant changes nothing', async () => {
  const api = await apiFor('csv2 shopify one variant');
  const sku = P();
  const before = await make(api, {
    sku,
    title: { value: 'Lamp' },
    price: 12,
    status: 'active',
    variants: [
      { sku: `${sku}-A`, title: { value: 'Lamp A' }, price: 12, cost: 4, barcode: '750100000009', position: 0 },
    ],
  });
  const csv = await exported(api, 'shopify');
  const res = await api.post('/products/bulk/csv/import', { content: csv, format: 'shopify' });
  expect(res.body).toMatchObject({ created: 0, updated: 0, errors: [] });
  const after = (await api.get(`/products/${before.id}`)).body;
  expect(withoutUpdatedAt(after)).toEqual(withoutUpdatedAt(before));
});

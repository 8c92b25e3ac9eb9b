import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { Layout, ParsedProduct } from '../../shared/csv/layout';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { shopifyLayout } from '../../shared/csv/layouts/shopify';
import { woocommerceLayout } from '../../shared/csv/layouts/woocommerce';
import { parseCsvText, toCsvText } from '../../shared/csv/parse';
import { readProducts } from '../../shared/csv/read';
import { streamProducts, type StreamedFile } from '../../shared/csv/stage';

/**
 * The two-pass reader the async import stages with (shared/csv/stage.ts) must give exactly the
 * products a whole-file parse gives: same grouping, order, bodies, derived SKUs and errors, for
 * every fixture as it is, reversed (children before parents) and shuffled (rows of one product
 * far apart), and with mappings.
 */

const FIXTURES = join(__dirname, '../../../shared/fixtures/csv');
const LIMITS = { maxRows: 100_000, maxVariantsPerProduct: 500 };

async function streamed(
  text: string,
  layout: Layout,
  mappings?: Record<string, string>,
  limits = LIMITS,
  batchSize = 3,
) {
  const got: ParsedProduct[] = [];
  const indexes: number[] = [];
  const opens = { count: 0 };
  const file: StreamedFile = await streamProducts(
    async () => (opens.count++, Readable.from([Buffer.from(text)])),
    layout,
    mappings,
    limits,
    async (batch, first) => {
      indexes.push(first);
      got.push(...batch);
    },
    batchSize,
  );
  return { file, got, indexes, opens: opens.count };
}

/** The same records in another order, renumbered as the new file's rows. */
function reorder(text: string, order: (n: number) => number[]): string {
  const { columns, records } = parseCsvText(text);
  return toCsvText(
    columns,
    order(records.length).map((i) => records[i].values),
  );
}

/** A deterministic shuffle. */
function shuffled(n: number): number[] {
  const out = Array.from({ length: n }, (_, i) => i);
  let seed = 7;
  for (let i = n - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const j = seed % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

const cases: [string, Layout][] = [
  ['shopify_export_packt_product_data.csv', shopifyLayout],
  ['shopify_product_template_legacy_2019.csv', shopifyLayout],
  ['shopify_template_2024_headers_shelfshift.csv', shopifyLayout],
  ['woocommerce_sample_products.csv', woocommerceLayout],
  ['woocommerce_experimental_fashion_sample_9_products.csv', woocommerceLayout],
];

describe.each(cases)('%s', (name, layout) => {
  const text = readFileSync(join(FIXTURES, name), 'utf8');
  const variants: [string, string][] = [
    ['as it is', text],
    ['reversed', reorder(text, (n) => Array.from({ length: n }, (_, i) => n - 1 - i))],
    ['shuffled', reorder(text, shuffled)],
  ];
  test.each(variants)('%s: the same products as a whole-file parse', async (_, file) => {
    const whole = readProducts(file, layout);
    const { file: info, got, indexes, opens } = await streamed(file, layout);
    expect(got).toEqual(whole.parsed);
    expect(info).toEqual({
      rows: whole.rows,
      productRows: whole.parsed.reduce((n, p) => n + p.rows.length, 0),
      products: whole.parsed.length,
      exceedsRowCap: false,
      exceedsVariantCap: false,
    });
    expect(indexes).toEqual(Array.from({ length: Math.ceil(got.length / 3) }, (_, i) => i * 3));
    expect(opens).toBe(2);
  });
});

test('native: rows of one product apart, a row without SKU, blank records, mappings', async () => {
  const rows: Record<string, string>[] = [
    { SKU: 'A1', title: 'A', price: '5', 'variant.sku': 'A1-S', 'variant.title': 'S' },
    { SKU: '', title: 'no sku', price: '1', 'variant.sku': '', 'variant.title': '' },
    { SKU: 'B1', title: 'B', price: '-3', 'variant.sku': '', 'variant.title': '' },
    { SKU: '', title: '', price: '', 'variant.sku': '', 'variant.title': '' },
    { SKU: 'A1', title: 'A', price: '5', 'variant.sku': 'A1-L', 'variant.title': 'L' },
  ];
  const text = toCsvText(['SKU', 'title', 'price', 'variant.sku', 'variant.title'], rows);
  const mappings = { SKU: 'sku' };
  const whole = readProducts(text, nativeLayout, mappings);
  const { got, file } = await streamed(text, nativeLayout, mappings);
  expect(got).toEqual(whole.parsed);
  expect(got.map((p) => p.rows)).toEqual([[2, 6], [3], [4]]); // row 5, all empty, is no product
  expect(file.rows).toBe(5);
  expect(file.productRows).toBe(4); // the blank record is counted nowhere
});

test('Shopify: derived SKUs avoid SKUs given later in the file, as in a whole-file parse', async () => {
  const text = [
    'Handle,Title,Variant SKU,Option1 Name,Option1 Value,Variant Price',
    'mug,Mug,,Color,Red,5',
    'cup,Cup,MUG,,,4',
    'mug,,,,Blue,5',
    ',,,,,',
  ].join('\n');
  const whole = readProducts(text, shopifyLayout);
  const { got } = await streamed(text, shopifyLayout);
  expect(got).toEqual(whole.parsed);
  expect(got.map((p) => p.sku)).toEqual(whole.parsed.map((p) => p.sku));
});

test('WooCommerce: a variation before its parent by id:N, an orphan, a bad type', async () => {
  const text = [
    'ID,Type,SKU,Name,Parent,Regular price,Attribute 1 name,Attribute 1 value(s)',
    '10,variation,,Mug - Red,id:7,9,Color,Red',
    '11,variation,,Lost,id:99,9,Color,Blue',
    '12,gadget,X,Odd,,3,,',
    '7,variable,,Mug,,,Color,"Red, Blue"',
    '13,variation,,Mug - Blue,id:7,9,Color,Blue',
  ].join('\n');
  const whole = readProducts(text, woocommerceLayout);
  const { got } = await streamed(text, woocommerceLayout);
  expect(got).toEqual(whole.parsed);
  expect(got.map((p) => p.rows)).toEqual([[3], [4], [2, 5, 6]]); // a product sits at its parent's row
});

test('over the row cap: counted, nothing handed on; over the variant cap likewise', async () => {
  const text = toCsvText(
    ['sku', 'title', 'price', 'variant.sku'],
    [1, 2, 3, 4].map((v) => ({ sku: 'P', title: 'P', price: '1', 'variant.sku': `P-${v}` })),
  );
  const rowCap = await streamed(text, nativeLayout, undefined, { maxRows: 3, maxVariantsPerProduct: 500 });
  expect(rowCap.file).toEqual({
    rows: 4,
    productRows: 4,
    products: 0,
    exceedsRowCap: true,
    exceedsVariantCap: false,
  });
  expect(rowCap.got).toEqual([]);
  expect(rowCap.opens).toBe(1);
  const variantCap = await streamed(text, nativeLayout, undefined, { maxRows: 10, maxVariantsPerProduct: 3 });
  expect(variantCap.file).toEqual({
    rows: 4,
    productRows: 4,
    products: 0,
    exceedsRowCap: false,
    exceedsVariantCap: true,
  });
  expect(variantCap.got).toEqual([]);
});

test('a malformed file is a 400 invalid-import-file', async () => {
  await expect(streamed('sku,title\n"A,B\n', nativeLayout)).rejects.toMatchObject({
    status: 400,
    code: 'bad-request/invalid-import-file',
  });
});

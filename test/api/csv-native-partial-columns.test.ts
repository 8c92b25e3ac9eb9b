import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A native file that carries only some columns of a product updates those columns only: in the
 * native layout `title` and `title.translations`, `seo.metaTitle`, `seo.metaDescription` and
 * `seo.slug` are separate columns, and so are a variant's; a column the file leaves out keeps its
 * stored value (docs/csv.md: "the fields the file carries replace the stored ones, the rest stay").
 */
let deps: TestDeps;
let api: ApiClient;
beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'native partial columns')).key);
});
afterAll(() => deps.close());

let n = 0;
const P = () => `NP${Date.now().toString(36).toUpperCase()}${++n}`;

async function make(sku: string) {
  const res = await api.post('/products', {
    sku,
    title: { value: 'Shirt', translations: [{ locale: 'es', value: 'Camisa' }] },
    price: 10,
    seo: { metaTitle: 'Old title', metaDescription: 'Old description', slug: `shirt-${sku.toLowerCase()}` },
  });
  expect(res.status).toBe(201);
  return res.body;
}

test('a file with only sku,title keeps the title translations', async () => {
  const sku = P();
  const p = await make(sku);
  const res = await api.post('/products/bulk/csv/import', { content: `sku,title\n${sku},Shirt 2\n` });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ updated: 1, errors: [] });
  const after = (await api.get(`/products/${p.id}`)).body;
  expect(after.title).toEqual({ value: 'Shirt 2', translations: [{ locale: 'es', value: 'Camisa' }] });
});

test('a file with only sku,seo.metaTitle keeps seo.slug and seo.metaDescription', async () => {
  const sku = P();
  const p = await make(sku);
  const res = await api.post('/products/bulk/csv/import', { content: `sku,seo.metaTitle\n${sku},New title\n` });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ updated: 1, errors: [] });
  const after = (await api.get(`/products/${p.id}`)).body;
  expect(after.seo).toEqual({
    metaTitle: 'New title',
    metaDescription: 'Old description',
    slug: `shirt-${sku.toLowerCase()}`,
  });
});

test('a file with only sku,variant.sku,variant.price keeps what else the variant holds', async () => {
  const sku = P();
  const made = await api.post('/products', {
    sku,
    title: { value: 'Shirt' },
    price: 10,
    variants: [
      {
        sku: `${sku}-S`,
        title: { value: 'Shirt S', translations: [{ locale: 'es', value: 'Camisa S' }] },
        price: 10,
        position: 0,
        countryOfOrigin: 'MX',
        barcode: '750100000001',
        barcodeType: 'ean13',
      },
    ],
  });
  if (made.status !== 201) throw new Error(made.text);
  const res = await api.post('/products/bulk/csv/import', {
    content: `sku,variant.sku,variant.price\n${sku},${sku}-S,12\n`,
  });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ updated: 1, errors: [] });
  const [v] = (await api.get(`/products/${made.body.id}`)).body.variants;
  expect(v).toMatchObject({
    sku: `${sku}-S`,
    price: 12,
    title: { value: 'Shirt S', translations: [{ locale: 'es', value: 'Camisa S' }] },
    countryOfOrigin: 'MX',
    barcode: '750100000001',
    barcodeType: 'ean13',
    id: made.body.variants[0].id,
  });
});

test('a native row of empty cells is no product and no error', async () => {
  const sku = P();
  await make(sku);
  const res = await api.post('/products/bulk/csv/import', { content: `sku,price\n,\n${sku},11\n,\n` });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ updated: 1, errors: [] });
});

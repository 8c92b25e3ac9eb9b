import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * `mappings` rename CSV columns to the layout's columns (spec: "CSV column to product field"), all
 * at once: a mapping whose target is the name of another column of the file that is itself mapped
 * elsewhere still reads each file column once, and two columns may swap names. Before, the pairs
 * were applied one after the other over the already renamed record, so the second read the value
 * the first wrote: the file's "title" column (here a brand) was lost and the product got the
 * "Name" column as its brand, with no title at all (207, nothing created).
 */
let deps: TestDeps;
let api: ApiClient;
let n = 0;
const P = () => `MAP${Date.now().toString(36).toUpperCase()}${++n}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'csv mappings at once')).key);
});
afterAll(() => deps.close());

async function bySku(sku: string) {
  const exists = (await api.get(`/products/sku/${sku}/exists`)).body;
  return exists.exists ? (await api.get(`/products/${exists.productId}`)).body : null;
}

test('a mapping onto a column name the file also maps elsewhere reads each file column once', async () => {
  const sku = P();
  // the file's "title" column holds the brand; its "Name" column holds the title
  const content = `Name,title,sku,price\r\nMy Title,Acme,${sku},5\r\n`;
  const res = await api.post('/products/bulk/csv/import', {
    content,
    createIfNotExists: true,
    mappings: { Name: 'title', title: 'brand' },
  });
  expect({ status: res.status, errors: res.body.errors, created: res.body.created }).toEqual({
    status: 200,
    errors: [],
    created: 1,
  });
  const product = await bySku(sku);
  expect({ title: product?.title?.value, brand: product?.brand }).toEqual({ title: 'My Title', brand: 'Acme' });
});

test('two columns swapped by mappings are both read', async () => {
  const sku = P();
  // a file whose "brand" and "model" headers are the wrong way round
  const content = `sku,title,price,brand,model\r\n${sku},Lamp,5,X-100,Globex\r\n`;
  const res = await api.post('/products/bulk/csv/import', {
    content,
    createIfNotExists: true,
    mappings: { brand: 'model', model: 'brand' },
  });
  expect(res.status).toBe(200);
  const product = await bySku(sku);
  expect({ brand: product?.brand, model: product?.model }).toEqual({ brand: 'Globex', model: 'X-100' });
});

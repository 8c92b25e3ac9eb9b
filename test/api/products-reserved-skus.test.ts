import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * `/products/{sku}/bom` with the SKU MATERIALS is the path of `/products/materials/{sku}` for the
 * material BOM: a product could have its BOM read, or a supply deleted, by the other route. So the
 * words that other routes put in a product SKU's place (MATERIALS, SUPPLIES, EXPORT, BY-VARIANT)
 * are no product's or variant's SKU (400 validation-error naming the field), and each word's own
 * route answers its paths: a supply called BOM, a variant called BOM.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `RSK${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'reserved skus')).key);
});
afterAll(() => deps.close());

test.each(['MATERIALS', 'supplies', 'Export', 'by-variant'])(
  'a product or variant SKU %s is 400, nothing stored',
  async (word) => {
    const own = await api.post('/products', { sku: word, title: { value: 'p' }, price: 10 });
    expect([own.status, own.body.code]).toEqual([400, 'validation-error']);
    expect(JSON.stringify(own.body)).toContain('another route');
    const variant = await api.post('/products', {
      sku: `${P}-${word}`,
      title: { value: 'p' },
      price: 10,
      variants: [{ sku: word, title: { value: 'v' }, position: 0, price: 10 }],
    });
    expect([variant.status, variant.body.code, variant.body.field]).toEqual([
      400,
      'validation-error',
      'variants.0.sku',
    ]);
    expect((await api.get('/products/count', { query: { q: word } })).body.count).toBe(0);
  },
);

test("the words' own routes answer their paths: the supply BOM, then a variant BOM", async () => {
  const supply = await api.post('/products/supplies', { sku: 'BOM', title: 'a box called BOM' });
  expect([supply.status, supply.status === 201 ? '' : supply.text]).toEqual([201, '']);
  expect((await api.get('/products/supplies/BOM')).body.sku).toBe('BOM');
  expect((await api.delete('/products/supplies/BOM')).status).toBe(200);
  // the variant is stored upper-case; its product is found by it, not taken for the BOM of a product BY-VARIANT
  const made = await api.post('/products', {
    sku: `${P}-BOX`,
    title: { value: 'Boxes' },
    price: 3,
    variants: [{ sku: 'bom', title: { value: 'v' }, position: 0, price: 3 }],
  });
  expect([made.status, made.status === 201 ? '' : made.text]).toEqual([201, '']);
  const byVariant = await api.get('/products/by-variant/BOM');
  expect([byVariant.status, byVariant.body.id ?? byVariant.body._id ?? byVariant.body.product?.id]).toEqual([
    200,
    made.body.id,
  ]);
});

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * docs/catalog.md: "A title (the product's, a variant's) has a visible character". Before, the
 * check was `text.trim() === ''`, and trim() only drops white space, so a title made only of
 * invisible format or control characters (zero-width space, soft hyphen, word joiner, U+0001) was
 * stored and listed as an empty-looking product.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `CIT${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'cat invisible title');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

const INVISIBLE = ['\u200b', '\u00ad\u2060', '\u0001', ' \u200b '];

// 400 validation-error on title.value, nothing stored
test.each(INVISIBLE.map((t, i) => [JSON.stringify(t), t, i]))(
  'a product title of only invisible characters (%s) is refused and nothing is stored',
  async (_name, title, i) => {
    const sku = `${P}-P${i}`;
    const res = await api.post('/products', { sku, title: { value: title }, price: 1 });
    const exists = await api.get(`/products/sku/${sku}/exists`);
    expect([res.status, res.body?.fieldErrors?.[0]?.field, exists.body.exists]).toEqual([400, 'title.value', false]);
  },
);

// same rule for a variant's title
test.each(INVISIBLE.map((t, i) => [JSON.stringify(t), t, i]))(
  'a variant title of only invisible characters (%s) is refused',
  async (_name, title, i) => {
    const res = await api.post('/products', {
      sku: `${P}-V${i}`,
      title: { value: 'Visible' },
      price: 1,
      variants: [{ sku: `${P}-V${i}-A`, title: { value: title }, price: 1, position: 0 }],
    });
    expect([res.status, res.body?.fieldErrors?.[0]?.field]).toEqual([400, 'variants.0.title.value']);
  },
);

// a PUT is held to the same rule (it replaced the visible title with an invisible one)
test('a PUT cannot replace a visible title with a zero-width space', async () => {
  const sku = `${P}-PUT`;
  const created = await api.post('/products', { sku, title: { value: 'Visible' }, price: 1 });
  expect(created.status).toBe(201);
  const res = await api.put(`/products/${created.body.id}`, { sku, title: { value: '\u200b' }, price: 1 });
  const after = await api.get(`/products/${created.body.id}`);
  expect([res.status, after.body.title.value]).toEqual([400, 'Visible']);
});

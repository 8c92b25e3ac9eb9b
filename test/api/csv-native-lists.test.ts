import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * The native layout carries list columns (tags, bullets) as items joined with " | "; items that
 * form cannot carry (a "|" inside, edge spaces) go as a JSON array, so exporting and importing
 * again changes nothing. A hand-written cell is still split on "|".
 */
let deps: TestDeps;
let api: ApiClient;
const P = `NLR${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'native lists');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

test('native export then import of a product whose tags/bullets hold "|" changes nothing', async () => {
  const created = await api.post('/products', {
    sku: `${P}-1`,
    title: { value: 'Cable' },
    price: 7,
    tags: ['USB-C | Lightning', 'sale', ' padded '],
    bullets: ['Length: 1 m | 3 ft'],
  });
  expect(created.status).toBe(201);
  expect(created.body.tags).toEqual(['USB-C | Lightning', 'sale', ' padded ']);

  const exported = await api.post('/products/export-csv', { format: 'native', selection: 'all' });
  expect(exported.status).toBe(200);
  const again = await api.post('/products/bulk/csv/import', { content: exported.text, format: 'native' });
  const after = await api.get(`/products/${created.body.id}`);

  expect({
    status: again.status,
    updated: again.body.updated,
    skipped: again.body.skipped,
    tags: after.body.tags,
    bullets: after.body.bullets,
  }).toEqual({
    status: 200,
    updated: 0,
    skipped: 1,
    tags: ['USB-C | Lightning', 'sale', ' padded '],
    bullets: ['Length: 1 m | 3 ft'],
  });
});

test('a hand-written list cell is split on "|", even one that starts with "["', async () => {
  const sku = `${P}-2`;
  const csv = `sku,title,price,tags\n${sku},Mug,5,[new] arrivals | sale\n`;
  const res = await api.post('/products/bulk/csv/import', { content: csv, format: 'native', createIfNotExists: true });
  expect(res.status).toBe(200);
  const id = (await api.get(`/products/sku/${sku}/exists`)).body.productId;
  expect((await api.get(`/products/${id}`)).body.tags).toEqual(['[new] arrivals', 'sale']);
});

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/** A catalog search applies every word of q: a product missing any one of them is not answered nor counted. */
let deps: TestDeps;
let api: ApiClient;
const P = `CRD${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'products search every word');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

async function create(body: Record<string, unknown>) {
  const res = await api.post('/products', { title: { value: 'x' }, price: 1, ...body });
  if (res.status !== 201) throw new Error(`create → ${res.status} ${res.text}`);
  return res.body;
}

/*
 * docs/catalog.md, Search: "each whitespace-separated word (at most 10) must be found, case
 * insensitive, in the SKU, a variant SKU, the title, the brand or a tag".
 * An 11th word is silently dropped (shared/products/query.ts searchClause `.slice(0, 10)`), so a
 * product that lacks that word is answered (and counted) as a match. Either refuse the 11th word
 * (400) or apply it; never answer a product that does not hold every word.
 */
test('a search of 11 words never answers a product missing the 11th word', async () => {
  const p = await create({ sku: `${P}-ELEVEN`, title: { value: 'one two three four five six seven eight nine' } });
  const q = `${P} one two three four five six seven eight nine zzqqxx`;
  expect(q.split(' ')).toHaveLength(11);
  const list = await api.get('/products', { query: { q } });
  const count = await api.get('/products/count', { query: { q } });
  const search = await api.get('/products/search', { query: { q } });
  const found = {
    list: list.status === 200 && list.body.some((x: { id: string }) => x.id === p.id),
    count: count.status === 200 && count.body.count > 0,
    search: search.status === 200 && search.body.total > 0,
  };
  expect(found).toEqual({ list: false, count: false, search: false });
});

/*
 * spec "Catalog reads": GET /products filters include brands; GET /products/brands lists the
 * catalog's brands. A brand is free text (schema brand: string ≤ 200), so it may hold a comma.
 * The query-string form splits every value on commas (shared/products/query.ts commaList), even an
 * encoded %2C, so a brand the catalog itself lists can never be filtered on: the list is empty.
 */

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/** Location search: "words that must each appear (any case) in the name or the address" means every word. */
let deps: TestDeps;
let api: ApiClient;
beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'search every word')).key);
});
afterAll(() => deps.close());

const WORDS = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet';

beforeAll(async () => {
  const res = await api.post('/locations', { name: WORDS, type: 'location', address: { city: 'Springfield' } });
  expect(res.status).toBe(201);
});

test('place search: an 11th word that appears nowhere excludes the location', async () => {
  const res = await api.get('/locations/places/search', { query: { q: `${WORDS} kilo` } });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ locations: [], totalCount: 0 });
});

test('list and count: an 11th word that appears nowhere excludes the location', async () => {
  const list = await api.get('/locations', { query: { q: `${WORDS} kilo` } });
  expect(list.status).toBe(200);
  expect(list.body.totalCount).toBe(0);
  expect(list.body.locations).toEqual([]);
  const count = await api.get('/locations/count', { query: { q: `${WORDS} kilo` } });
  expect(count.body).toEqual({ count: 0 });
});

test('control: the ten words, in another order and case, find it', async () => {
  const q = WORDS.split(' ').reverse().join(' ').toUpperCase();
  expect((await api.get('/locations/count', { query: { q } })).body).toEqual({ count: 1 });
  expect((await api.get('/locations/places/search', { query: { q } })).body.totalCount).toBe(1);
});

import { ApiClient } from '../helpers/client';
import { ChannelServer } from '../helpers/channel-server';
import { TestDeps } from '../helpers/stack';

/**
 * A filter body (publication validate and exports) takes its lists as JSON arrays whose values
 * stand as they are: a brand holding a comma or a backslash selects that brand (only the
 * query-string form splits on commas and takes a backslash as an escape).
 */
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let server: ChannelServer;
let channelId: string;
const P = `RVFB${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'filter bodies');
  api = new ApiClient(t.key);
  server = await new ChannelServer(SECRET).start();
  const ch = await api.post('/channels', {
    name: 'Review',
    type: 'custom',
    settings: { endpointUrl: server.url },
    secret: SECRET,
  });
  expect(ch.status).toBe(201);
  channelId = ch.body.id;
});
afterAll(async () => {
  await server.close();
  await deps.close();
});

async function product(sku: string, brand: string) {
  const res = await api.post('/products', { sku, title: { value: sku }, price: 10, status: 'active', brand });
  expect(res.status).toBe(201);
}

const validate = (brands: string[]) =>
  api.post('/products/export/validate', { channelId, selectionMode: 'filtered', filters: { brands } });

// User sees: a filtered publication validate with body filters {brands: ["Smith, Sons"]} selects
// nothing (the JSON array element is split on its comma into "Smith" and "Sons"), although
test('a body filter brand holding a comma selects that brand', async () => {
  await product(`${P}-PLAIN`, 'Plain Brand');
  expect((await validate(['Plain Brand'])).body.total).toBe(1); // the filter itself works
  await product(`${P}-SMITH`, 'Smith, Sons');
  const res = await validate(['Smith, Sons']);
  expect(res.status).toBe(200);
  expect(res.body.total).toBe(1);
});

// backslash is taken as an escape in a JSON array element and the brand looked for is "ACDC".
// Should see the product (bodies need no escaping, per docs/catalog.md).
test('a body filter brand holding a backslash selects that brand', async () => {
  await product(`${P}-ACDC`, 'AC\\DC');
  const res = await validate(['AC\\DC']);
  expect(res.status).toBe(200);
  expect(res.body.total).toBe(1);
});

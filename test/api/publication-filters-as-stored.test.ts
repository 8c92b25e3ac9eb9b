import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * docs/catalog.md: "Filter bodies (`POST /products/query`, exports, publication) take JSON arrays
 * and need no escaping", and a brand is compared as stored ("Acme " with its space is not "Acme";
 * test/api/product-filters-as-stored.test.ts holds this for POST /products/query). Before, a
 * publication's filters went through `commaList` (shared/products/query.ts), which trimmed each
 * array value, so brands ["Acme "] selected the products of "Acme" and not those of "Acme ".
 */
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let server: ChannelServer;
const P = `CFB${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'cat filter body blanks');
  api = new ApiClient(t.key);
  server = await new ChannelServer(SECRET).start();
});
afterAll(async () => {
  await server.close();
  await deps.close();
});

async function create(body: Record<string, unknown>) {
  const res = await api.post('/products', { title: { value: 'x' }, price: 1, ...body });
  if (res.status !== 201) throw new Error(`create → ${res.status} ${res.text}`);
  return res.body;
}

const skusOf = (body: Record<string, { sku: string }[]>) =>
  ['published', 'ready', 'needs_review', 'rejected'].flatMap((k) => (body[k] ?? []).map((p) => p.sku)).sort();

// the publication's filtered selection is the one POST /products/query gives for the same filters
// (the validation answered [PLAIN] where the query answered [SPACED])
test('a brand with a trailing space selects the same products in a publication body as in POST /products/query', async () => {
  const spaced = await create({ sku: `${P}-SPACED`, brand: `${P} Acme ` });
  const plain = await create({ sku: `${P}-PLAIN`, brand: `${P} Acme` });
  const ch = await api.post('/channels', {
    name: `Channel ${P}`,
    type: 'custom',
    settings: { endpointUrl: server.url },
    secret: SECRET,
  });
  expect(ch.status).toBe(201);
  const filters = { brands: [`${P} Acme `] };
  const query = await api.post('/products/query', { filters });
  expect(query.body.products.map((p: { sku: string }) => p.sku)).toEqual([spaced.sku]);
  const validate = await api.post('/products/export/validate', {
    channelId: ch.body.id,
    selectionMode: 'filtered',
    filters,
  });
  expect(validate.status).toBe(200);
  expect(skusOf(validate.body)).toEqual([spaced.sku]);
  expect(skusOf(validate.body)).not.toContain(plain.sku);
});

import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A marketplace payload names the same site as the category key it was categorized under: the
 * channel's settings.siteId trimmed, a blank one the type's default (mercadolibre MLM).
 */
const SECRET = 'review-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let server: ChannelServer;
const P = `RMS${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'marketplace site id');
  api = new ApiClient(t.key);
  server = await new ChannelServer(SECRET).start();
});
afterAll(async () => {
  await server.close();
  await deps.close();
});

test.each([
  [' MLA ', 'MLA'],
  ['   ', 'MLM'],
])('siteId %j: the payload carries the same site as the category key (%s)', async (siteId, site) => {
  const ch = await api.post('/channels', {
    name: 'Meli',
    type: 'mercadolibre',
    settings: { endpointUrl: server.url, siteId },
    secret: SECRET,
  });
  expect(ch.status).toBe(201);
  const sku = `${P}-${site}`;
  expect(
    (await api.post('/products', { sku, title: { value: sku }, price: 10, status: 'active', brand: 'Acme' })).status,
  ).toBe(201);
  const cat = await api.post('/products/marketplace-categories', {
    skus: [sku],
    channelId: ch.body.id,
    category: { id: `${site}1234`, name: 'Tools', path: ['Home', 'Tools'] },
  });
  expect(cat.status).toBe(200);
  const pub = await api.post('/products/export', { channelId: ch.body.id, mode: 'single', productIds: [sku] });
  expect(pub.status).toBe(201);
  const sent = server.received.find((r) => r.sku === sku)!;
  expect(sent.body.category_id).toBe(`${site}1234`); // the category of key mercadolibre:<site> was found
  expect(sent.body.site_id).toBe(site);
});

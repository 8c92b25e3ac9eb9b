import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * The channel's rate limit holds for the channel, however its id is spelled in the query, and
 * across processes: the API's suggestions and the worker's publication sends share it.
 *
 * docs/publication.md (Marketplace categories): "Suggestions ask the channel's own predictor,
 * signed and held to the channel's rate limit and time-out"; the route's description
 * (api/categories/routes.ts): "both signed like the connector's other calls and held to the
 * channel's rate limit and timeout". The channel lookup accepts a 24-hex id in any case
 * (shared/channels/channels.ts parseChannelId), so an upper-case id names the same channel.
 */
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let server: ChannelServer;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'category suggest rate')).key);
  server = await new ChannelServer(SECRET).start();
  server.predictor = () => [
    { categoryId: 'MLM1', categoryName: 'Taladros', domainId: 'MLM-D', domainName: 'Taladros' },
  ];
});
afterAll(async () => {
  await server.close();
  await deps.close();
});

test('rateLimitPerSecond 2: the same channel asked with its id in lower, upper and mixed case is still spaced 500 ms apart', async () => {
  const created = await api.post('/channels', {
    name: `Rate ${Date.now()}`,
    type: 'mercadolibre',
    settings: { endpointUrl: server.url, rateLimitPerSecond: 2 },
    secret: SECRET,
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const spellings = [id.toLowerCase(), id.toUpperCase(), id.slice(0, 12).toUpperCase() + id.slice(12).toLowerCase()];
  const answers = await Promise.all(
    spellings.map((channelId) => api.get('/products/categories/suggest', { query: { channelId, title: 'Taladro' } })),
  );
  expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
  const at = server.predictions.map((x) => x.at).sort((a, b) => a - b);
  expect(at).toHaveLength(3);
  // 2 per second is one every 500 ms (a little jitter allowed)
  expect(at[1] - at[0]).toBeGreaterThanOrEqual(400);
  expect(at[2] - at[1]).toBeGreaterThanOrEqual(400);
});

/**
 * docs/publication.md: "Suggestions ask the channel's own predictor, signed and held to the
 * channel's rate limit"; shared/categories/categorize.ts: "The channel's rate limit, shared with
 * the sends". A publication sending at the channel's rate while someone asks for suggestions on
 * the same channel must not take the channel above its rate: every call to the channel counts.
 */
test('rateLimitPerSecond 1: suggestions asked while a publication sends to the same channel keep the channel at 1 call per second', async () => {
  const created = await api.post('/channels', {
    name: `Rate pub ${Date.now()}`,
    type: 'mercadolibre',
    settings: { endpointUrl: server.url, rateLimitPerSecond: 1 },
    secret: SECRET,
  });
  expect(created.status).toBe(201);
  const ch = created.body.id as string;
  const P = `CRP${Date.now().toString(36).toUpperCase()}`;
  const skus: string[] = [];
  for (let i = 1; i <= 4; i++) {
    const sku = `${P}-${i}`;
    const res = await api.post('/products', {
      sku,
      title: { value: `Taladro ${i}` },
      price: 10,
      status: 'active',
      brand: 'Acme',
      media: [{ src: `https://img.example.com/${i}.jpg`, name: 'front', alt: { value: 'front' }, position: 0 }],
    });
    expect(res.status).toBe(201);
    skus.push(sku);
  }
  // categories assigned up front: the publication itself asks the predictor nothing
  expect(
    (await api.post('/products/marketplace-categories', { skus, channelId: ch, category: { id: 'MLM1' } })).status,
  ).toBe(200);
  const predictionsBefore = server.predictions.length;
  const receivedBefore = server.received.length;
  let done = false;
  const publication = api
    .post('/products/export', { channelId: ch, mode: 'selected', productIds: skus })
    .finally(() => {
      done = true;
    });
  while (!done) {
    const r = await api.get('/products/categories/suggest', { query: { channelId: ch, title: 'Taladro' } });
    expect(r.status).toBe(200);
  }
  const pub = await publication;
  expect(pub.status).toBe(201);
  const calls = [
    ...server.predictions.slice(predictionsBefore).map((p) => ({ what: 'suggest', at: p.at })),
    ...server.received.slice(receivedBefore).map((r) => ({ what: `PUT ${r.sku}`, at: r.at })),
  ].sort((a, b) => a.at - b.at);
  const tooClose = calls
    .slice(1)
    .flatMap((c, i) => (c.at - calls[i].at < 800 ? [`${calls[i].what} → ${c.what}: ${c.at - calls[i].at} ms`] : []));
  expect(tooClose).toEqual([]);
});

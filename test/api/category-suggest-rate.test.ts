import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * The channel's rate limit holds for the channel, however its id is spelled in the query.
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

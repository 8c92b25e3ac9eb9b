import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';

/**
 * A throttled predictor's Retry-After is passed on to the caller as the channel said it.
 *
 * docs/publication.md (Marketplace categories): "a channel still answering 429 after 5 s of waiting
 * is 503 PREDICTOR_THROTTLED with its Retry-After"; the route's description: "503
 * PREDICTOR_THROTTLED (with Retry-After) when the channel keeps answering 429"; spec, Retry rules:
 * "429 With backoff" — a client honouring a shortened Retry-After comes back before the marketplace
 * lets it in, and is throttled again.
 */
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let server: ChannelServer;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'cat suggest throttle')).key);
});
afterAll(() => deps.close());
beforeEach(async () => {
  server = await new ChannelServer(SECRET).start();
  server.predictor = () => [
    { categoryId: 'MLM1', categoryName: 'Taladros', domainId: 'MLM-D', domainName: 'Taladros' },
  ];
});
afterEach(() => server.close());

async function channel() {
  const res = await api.post('/channels', {
    name: `Throttle ${Date.now()} ${++n}`,
    type: 'mercadolibre',
    settings: { endpointUrl: server.url },
    secret: SECRET,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

test('Mercado Libre answering 429 with Retry-After 120: 503 PREDICTOR_THROTTLED with retry-after 120 (not cut to 60)', async () => {
  server.predictorThrottleNext = 1;
  server.predictorRetryAfter = '120';
  const res = await api.get('/products/categories/suggest', {
    query: { channelId: await channel(), title: 'Taladro' },
  });
  expectError(res, 503, 'PREDICTOR_THROTTLED');
  expect(res.headers.get('retry-after')).toBe('120');
});

test('Retry-After as an HTTP date 5 minutes ahead: the 503 says about 300 seconds', async () => {
  server.predictorThrottleNext = 1;
  server.predictorRetryAfter = new Date(Date.now() + 300_000).toUTCString();
  const res = await api.get('/products/categories/suggest', {
    query: { channelId: await channel(), title: 'Taladro' },
  });
  expectError(res, 503, 'PREDICTOR_THROTTLED');
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(290);
});

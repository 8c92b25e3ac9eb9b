import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';

/**
 * Publication input: a binding naming its channel's id in upper-case hex is that channel's binding
 * (stored lower-case: no second binding, its inactive status respected); a cancel's reason that is
 * not text is 400 bad-request, as every publication route refuses input.
 */
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let server: ChannelServer;
const P = `LPI${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'publication input');
  api = new ApiClient(t.key);
  server = await new ChannelServer(SECRET).start();
});
afterAll(async () => {
  await server.close();
  await deps.close();
});

async function channel() {
  const res = await api.post('/channels', {
    name: `Channel ${++n}`,
    type: 'custom',
    settings: { endpointUrl: server.url },
    secret: SECRET,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

const media = () => [
  { src: `https://img.example.com/${P}-${n}.jpg`, name: 'front', alt: { value: 'front' }, position: 0 },
];

test('a binding naming the channel in upper-case hex is that channel’s binding: no second binding, inactive respected', async () => {
  const ch = await channel();
  expect((await api.get(`/channels/${ch.toUpperCase()}`)).status).toBe(200); // the same channel
  const sku = `${P}-${++n}`;
  const created = await api.post('/products', {
    sku,
    title: { value: 'Bound' },
    price: 10,
    status: 'active',
    media: media(),
  });
  expect(created.status).toBe(201);
  const put = await api.put(`/products/${created.body.id}`, {
    sku,
    title: { value: 'Bound' },
    price: 10,
    media: media(),
    bindings: [{ channelId: ch.toUpperCase(), handle: 'h', type: 'custom', status: 'inactive' }],
  });
  expect(put.status).toBe(200);
  const before = server.received.length;
  const res = await api.post('/products/export', { channelId: ch, mode: 'single', productIds: [sku] });
  expect(res.status).toBe(201);
  expect(res.body.results).toEqual([{ sku, success: false, error: 'CHANNEL_INACTIVE' }]);
  expect(server.received.length).toBe(before);
  const read = await api.get(`/products/${created.body.id}`);
  const toChannel = (read.body.bindings as { channelId: string }[]).filter(
    (b) => b.channelId.toLowerCase() === ch.toLowerCase(),
  );
  expect(toChannel).toHaveLength(1);
});

test.each([[{ reason: 5 }], [{ reason: null }], [{ reason: ['x'] }]])(
  'cancel with reason %j: 400 bad-request, as every publication route refuses input',
  async (body) => {
    expectError(await api.post('/products/export/exp_NOPE/cancel', body), 400, 'bad-request');
  },
);

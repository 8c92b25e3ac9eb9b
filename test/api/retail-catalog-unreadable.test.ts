import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';

/**
 * Retail-group catalog read: a retail-group API answering something that is not a list of products
 * (JSON null, a list holding null) is the integration failing: 500 t1-api-error, never an
 * internal error.
 */
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let server: ChannelServer;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'retail catalog unreadable');
  api = new ApiClient(t.key);
  server = await new ChannelServer(SECRET).start();
});
afterAll(async () => {
  await server.close();
  await deps.close();
});

async function t1Channel(endpointUrl = server.url) {
  const res = await api.post('/channels', {
    name: `Retail ${++n}`,
    type: 't1',
    settings: { endpointUrl },
    secret: SECRET,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

test('a catalog list holding a null element is the integration failing: 500 t1-api-error, not internal-error', async () => {
  const ch = await t1Channel();
  server.catalog = [null as unknown as Record<string, unknown>, { id: 'theirs-1', title: 'theirs' }];
  try {
    expectError(await api.get(`/products/channel/${ch}/catalog`), 500, 't1-api-error');
  } finally {
    server.catalog = [];
  }
});

test('a catalog answer of JSON null is the integration failing: 500 t1-api-error, not internal-error', async () => {
  const odd: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('null');
  });
  await new Promise<void>((r) => odd.listen(0, '127.0.0.1', r));
  try {
    const ch = await t1Channel(`http://127.0.0.1:${(odd.address() as AddressInfo).port}`);
    expectError(await api.get(`/products/channel/${ch}/catalog`), 500, 't1-api-error');
  } finally {
    await new Promise((r) => odd.close(r));
  }
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A channel endpoint is checked against WEBHOOK_TARGETS when it is written, and the connector
 * does not follow redirects: an allowed endpoint answering 302 to a refused address (here 0.0.0.0,
 * which on Linux reaches the local host; in production 169.254.169.254 or a 10/8 service) gets
 * that 302 as its answer. Before, fetch followed it and the retail-group catalog read answered
 * what the internal address served.
 */
let deps: TestDeps;
let api: ApiClient;
let internal: Server;
let front: Server;

const listen = (s: Server) =>
  new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'review channel redirect')).key);
  // what must stay unreachable: a service on the host's own network
  internal = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify([{ id: 'leak', sku: 'INTERNAL-SECRET', title: 'credentials: hunter2' }]));
  });
  const internalPort = await listen(internal);
  // an endpoint the policy accepts, which redirects to the refused address
  front = createServer((req, res) => {
    res.writeHead(302, { location: `http://0.0.0.0:${internalPort}${req.url}` });
    res.end();
  });
  await listen(front);
});
afterAll(async () => {
  internal.close();
  front.close();
  await deps.close();
});

test('an endpoint redirecting to a refused address does not get that address called', async () => {
  const internalPort = (internal.address() as AddressInfo).port;
  // control: the refused address itself is 400 at create
  const direct = await api.post('/channels', {
    name: 'Direct',
    type: 't1',
    settings: { endpointUrl: `http://0.0.0.0:${internalPort}` },
  });
  expect([direct.status, direct.body.field]).toEqual([400, 'settings.endpointUrl']);

  const made = await api.post('/channels', {
    name: 'Redirecting',
    type: 't1',
    settings: { endpointUrl: `http://127.0.0.1:${(front.address() as AddressInfo).port}` },
  });
  expect(made.status).toBe(201);
  const read = await api.get(`/products/channel/${made.body.id}/catalog`);
  // now: 200 with products [{id: 'leak', sku: 'INTERNAL-SECRET', ...}], the internal service's answer
  expect(JSON.stringify(read.body)).not.toContain('INTERNAL-SECRET');
  expect(read.status).not.toBe(200);
});

import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';

/**
 * A predictor that fails while sending its answer's body (too slow, or the connection dropped) is a
 * predictor that is down, not one that answered something unreadable.
 *
 * docs/publication.md (Marketplace categories) and the route's own description
 * (api/categories/routes.ts): "502 PREDICTOR_UNAVAILABLE (unreachable, too slow, 5xx), ...
 * PREDICTOR_BAD_RESPONSE (an answer we cannot read)"; docs/publication.md: "A predictor that is
 * down or throttled is the channel being down (the batch is retried); an unreadable answer fails
 * the product with CATEGORIZATION_FAILED". Spec, Retry rules: 5xx "With backoff".
 */
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'cat predictor body')).key);
});
afterAll(() => deps.close());

/** A Mercado Libre-like server that sends 200 and the start of a JSON list, then does `then` with the rest. */
async function halfAnswer(then: (res: ServerResponse) => void) {
  const srv: Server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('[{"domain_id":"MLM-DRILLS","domain_name":"Taladros","category_id":"MLM300",');
    then(res);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  const close = () => {
    srv.closeAllConnections();
    return new Promise<void>((r) => srv.close(() => r()));
  };
  return { url, close };
}

async function channel(endpointUrl: string, settings: Record<string, unknown> = {}) {
  const res = await api.post('/channels', {
    name: `Cat body ${Date.now()} ${++n}`,
    type: 'mercadolibre',
    settings: { endpointUrl, ...settings },
    secret: SECRET,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

test('a predictor whose body stalls past the channel timeoutMs → 502 PREDICTOR_UNAVAILABLE (too slow), not PREDICTOR_BAD_RESPONSE', async () => {
  const srv = await halfAnswer(() => undefined); // the rest of the body never comes
  try {
    const ch = await channel(srv.url, { timeoutMs: 500 });
    const started = Date.now();
    const res = await api.get('/products/categories/suggest', { query: { channelId: ch, title: 'Taladro 18V' } });
    expect(Date.now() - started).toBeLessThan(5000);
    expectError(res, 502, 'PREDICTOR_UNAVAILABLE');
  } finally {
    await srv.close();
  }
});

test('a predictor that drops the connection in the middle of its body → 502 PREDICTOR_UNAVAILABLE, not PREDICTOR_BAD_RESPONSE', async () => {
  const srv = await halfAnswer((res) => setTimeout(() => res.socket?.destroy(), 50));
  try {
    const ch = await channel(srv.url);
    const res = await api.get('/products/categories/suggest', { query: { channelId: ch, title: 'Taladro 18V' } });
    expectError(res, 502, 'PREDICTOR_UNAVAILABLE');
  } finally {
    await srv.close();
  }
});

/**
 * The same during a publication: docs/publication.md "A predictor that is down or throttled is the
 * channel being down (the batch is retried); an unreadable answer fails the product with
 * CATEGORIZATION_FAILED". A connection dropped once mid-answer is the channel being down for a
 * moment: the batch is retried and the product published, not failed for good.
 */
test('publication: a predictor connection dropped mid-body once is retried, not a CATEGORIZATION_FAILED product', async () => {
  let asked = 0;
  const puts: string[] = [];
  const srv: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.includes('/domain_discovery/search')) {
      req.resume();
      asked++;
      res.writeHead(200, { 'content-type': 'application/json' });
      if (asked === 1) {
        res.write('[{"domain_id":"MLM-DRILLS","domain_name":"Taladros","category_id":"MLM300",');
        setTimeout(() => res.socket?.destroy(), 50);
        return;
      }
      res.end(
        JSON.stringify([
          { domain_id: 'MLM-DRILLS', domain_name: 'Taladros', category_id: 'MLM300', category_name: 'Taladros' },
        ]),
      );
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      puts.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `H-${puts.length}` }));
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  try {
    const ch = await channel(url);
    const sku = `CPB${Date.now().toString(36).toUpperCase()}-1`;
    const created = await api.post('/products', {
      sku,
      title: { value: 'Taladro inalambrico 18V' },
      price: 10,
      status: 'active',
      brand: 'Acme',
      media: [{ src: 'https://img.example.com/1.jpg', name: 'front', alt: { value: 'front' }, position: 0 }],
    });
    expect(created.status).toBe(201);
    const res = await api.post('/products/export', { channelId: ch, mode: 'single', productIds: [sku] });
    expect({ status: res.status, results: res.body.results ?? res.body.details?.results }).toEqual({
      status: 201,
      results: [{ sku, success: true }],
    });
    expect(asked).toBe(2);
  } finally {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  }
});

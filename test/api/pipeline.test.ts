import { AREAS, probeRoutes } from '../helpers/probe-routes';
import { expectError } from '../helpers/expect-error';
import { http, TestDeps } from '../helpers/stack';
import { allRoutes } from '../../api/routes';

/** Body parsing, content types, unknown routes and validation: 4xx in the area's envelope, never 500, nothing written. */
let deps: TestDeps;
let app: { url: string; close: () => Promise<void> };
let tenant: { tenantId: string; key: string };

beforeAll(async () => {
  deps = await TestDeps.open();
  app = await deps.serveApp([...allRoutes, ...probeRoutes]);
  tenant = await deps.tenantWithKey();
});

afterAll(async () => {
  await app.close();
  await deps.close();
});

async function stored(id: string): Promise<number> {
  return deps.db.collection('test_probes').countDocuments({ tenantId: tenant.tenantId, _id: id as never });
}

describe.each(AREAS)('$area area', ({ area, prefix }) => {
  const invalidInput = {
    orders: 'validation:invalid_input',
    products: 'validation-error',
    inventory: 'bad-request',
    locations: 'bad-request',
  }[area];
  // the spec's code for an empty body in inventory and locations
  const missingBody = {
    orders: 'validation:invalid_input',
    products: 'validation-error',
    inventory: 'bad-request/missing-body',
    locations: 'bad-request/missing-body',
  }[area];
  const invalidJson = {
    orders: 'validation:invalid_input',
    products: 'validation-error',
    inventory: 'bad-request/invalid-json',
    locations: 'bad-request/invalid-json',
  }[area];

  test('malformed JSON → 400', async () => {
    const res = await http(app.url, 'POST', `${prefix}/probe`, {
      key: tenant.key,
      raw: '{"id": "mj", "name": ',
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, 400, invalidJson, area);
    expect(await stored('mj')).toBe(0);
  });

  test('a JSON scalar where an object is expected → 400', async () => {
    const res = await http(app.url, 'POST', `${prefix}/probe`, {
      key: tenant.key,
      raw: '"just a string"',
      headers: { 'content-type': 'application/json' },
    });
    // valid JSON, so the answer says what is wrong with it rather than calling it invalid
    expectError(res, 400, invalidJson, area);
    expect(res.body.message ?? res.body.error?.message).toBe(
      'Request body must be a JSON object (or array), not a single value',
    );
  });

  test('body over the size limit → 413', async () => {
    const name = 'x'.repeat(deps.config.bodyLimitBytes + 10);
    const res = await http(app.url, 'POST', `${prefix}/probe`, { key: tenant.key, body: { id: 'big', name } });
    expectError(res, 413, area === 'orders' ? 'validation:payload_too_large' : 'payload-too-large', area);
    expect(await stored('big')).toBe(0);
  });

  test('wrong content type → 415', async () => {
    const res = await http(app.url, 'POST', `${prefix}/probe`, {
      key: tenant.key,
      raw: 'id=ct&name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectError(res, 415, area === 'orders' ? 'validation:unsupported_media_type' : 'unsupported-media-type', area);
    expect(await stored('ct')).toBe(0);
  });

  test('missing body → 400 naming it', async () => {
    expectError(await http(app.url, 'POST', `${prefix}/probe`, { key: tenant.key }), 400, missingBody, area);
  });

  test('schema violations → 400 naming every field; nothing written', async () => {
    const res = await http(app.url, 'POST', `${prefix}/probe`, {
      key: tenant.key,
      body: { id: 'sv', name: 42, extra: true },
    });
    expectError(res, 400, invalidInput, area);
    const message = area === 'orders' ? res.body.error.message : res.body.message;
    expect(message).toContain('name');
    expect(message).toContain('extra');
    if (area !== 'orders') {
      expect(res.body.fieldErrors).toEqual(
        expect.arrayContaining([
          { field: 'extra', message: 'is not a known field' },
          { field: 'name', message: 'must be string' },
        ]),
      );
    }
    expect(await stored('sv')).toBe(0);
  });

  test('a gzip body that does not decompress → 400', async () => {
    const res = await http(app.url, 'POST', `${prefix}/probe`, {
      key: tenant.key,
      raw: Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef, 0x00, 0x03, 0x01, 0x02, 0x03]),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expectError(res, 400, invalidInput, area);
    const brotli = await http(app.url, 'POST', `${prefix}/probe`, {
      key: tenant.key,
      raw: Buffer.from('not brotli at all'),
      headers: { 'content-type': 'application/json', 'content-encoding': 'br' },
    });
    expectError(brotli, 400, invalidInput, area);
    const unknownEncoding = await http(app.url, 'POST', `${prefix}/probe`, {
      key: tenant.key,
      raw: '{}',
      headers: { 'content-type': 'application/json', 'content-encoding': 'compress' },
    });
    expectError(
      unknownEncoding,
      415,
      area === 'orders' ? 'validation:unsupported_media_type' : 'unsupported-media-type',
      area,
    );
  });

  test('an upper-case path is the same area (the router ignores case): its envelope and codes', async () => {
    const unauthenticated =
      area === 'inventory' || area === 'locations' ? 'bad-request/missing-tenant' : 'auth:invalid_token';
    expectError(await http(app.url, 'GET', `${prefix.toUpperCase()}/probe/x`), 401, unauthenticated, area);
    expectError(await http(app.url, 'GET', `/V1${prefix.toUpperCase()}/probe/x`), 401, unauthenticated, area);
  });

  test('unknown route → 404 in the area envelope, at the root and under /v1', async () => {
    expectError(
      await http(app.url, 'GET', `${prefix}/no/such/route`, { key: tenant.key }),
      404,
      area === 'orders' ? 'route:not_found' : 'not-found',
      area,
    );
    expectError(
      await http(app.url, 'GET', `/v1${prefix}/no/such/route`, { key: tenant.key }),
      404,
      area === 'orders' ? 'route:not_found' : 'not-found',
      area,
    );
  });

  test('a valid write under /v1 is the same API', async () => {
    const res = await http(app.url, 'POST', `/v1${prefix}/probe`, {
      key: tenant.key,
      body: { id: `v1${area}`, name: 'ok' },
    });
    expect(res.status).toBe(201);
    expect((await http(app.url, 'GET', `${prefix}/probe/v1${area}`, { key: tenant.key })).body).toEqual({
      id: `v1${area}`,
      name: 'ok',
    });
  });
});

describe('request pipeline', () => {
  test.each([
    '/orders',
    '/products',
    '/inventory/adjustments',
    '/inventory/lots',
    '/locations',
    '/products/bulk/operations',
    '/channels',
  ])('a page past any real one on %s → 400, not a database error', async (path) => {
    for (const page of ['100000000000000000000', '1000001']) {
      const res = await http(app.url, 'GET', `${path}?page=${page}`, { key: tenant.key });
      expect(res.status).toBe(400);
    }
    expect((await http(app.url, 'GET', `${path}?page=1000000`, { key: tenant.key })).status).toBe(200);
  });

  test('a request id is echoed (the client one when sane, a new one otherwise)', async () => {
    const given = await http(app.url, 'GET', '/health', { headers: { 'x-request-id': 'client-req-1' } });
    expect(given.headers.get('x-request-id')).toBe('client-req-1');
    const made = await http(app.url, 'GET', '/health', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('wrong method on a known path → 405 with Allow', async () => {
    const res = await http(app.url, 'DELETE', '/health');
    expectError(res, 405, 'method-not-allowed', 'other');
    expect(res.headers.get('allow')).toContain('GET');
  });
});

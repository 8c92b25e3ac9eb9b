import { readFileSync } from 'node:fs';
import { expectError } from '../helpers/expect-error';
import { http, TestDeps, testStack } from '../helpers/stack';

/** Against the real API process the suite started (not an in-process app). */
const { apiUrl } = testStack();
let deps: TestDeps;

beforeAll(async () => {
  deps = await TestDeps.open();
});
afterAll(() => deps.close());

test('/health reports every dependency, with no credentials', async () => {
  const res = await http(apiUrl, 'GET', '/health');
  expect(res.status).toBe(200);
  expect(res.body.status).toBe('ok');
  for (const name of ['mongodb', 'temporal', 'worker', 'objectStore']) expect(res.body.checks[name].ok).toBe(true);
  expect(res.body.checks.worker.pollers).toBeGreaterThanOrEqual(1);
});

test('/openapi.json is public and lists the routes with their security', async () => {
  const res = await http(apiUrl, 'GET', '/openapi.json');
  expect(res.status).toBe(200);
  expect(res.body.openapi).toBe('3.1.0');
  expect(res.body.paths['/health'].get.security).toEqual([]);
  expect(res.body.paths['/auth/token'].post.security).toEqual([{ bearer: [] }]);
  expect(
    res.body.paths['/auth/refresh'].post.requestBody.content['application/json'].schema.properties.refreshToken,
  ).toBeDefined();
  expect((await http(apiUrl, 'GET', '/v1/openapi.json')).status).toBe(200);
  // the spec's answers for a resource path: 404 for a missing one, 409 where a move is refused
  expect(Object.keys(res.body.paths['/orders/{orderId}'].put.responses)).toEqual(
    expect.arrayContaining(['200', '400', '401', '403', '404', '409']),
  );
  expect(Object.keys(res.body.paths['/orders/{orderId}/status'].put.responses)).toEqual(
    expect.arrayContaining(['404', '409']),
  );
  expect(Object.keys(res.body.paths['/orders/{orderId}/transition'].post.responses)).toEqual(
    expect.arrayContaining(['404', '409']),
  );
  expect(res.body.paths['/products/{id}'].get.responses['404']).toBeDefined();
  expect(res.body.paths['/health'].get.responses['404']).toBeUndefined();
});

describe('access and refresh tokens', () => {
  test('a key buys a token pair; the access token works as a Bearer credential with the same tenant and scopes', async () => {
    const t = await deps.tenantWithKey(['products:read']);
    const res = await http(apiUrl, 'POST', '/auth/token', { key: t.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      tokenType: 'Bearer',
      expiresIn: deps.config.accessTokenTtlSeconds,
      tenantId: t.tenantId,
      scopes: ['products:read'],
    });
    expect(res.body.accessToken).toMatch(/^boat_/);
    expect(res.body.refreshToken).toMatch(/^bort_/);
    // the token is as good as the key, and no better
    const again = await http(apiUrl, 'POST', '/auth/token', { key: res.body.accessToken });
    expectError(again, 401, 'auth:invalid_token');
    expect(await deps.tenancy.authenticate(res.body.accessToken)).toMatchObject({ tenantId: t.tenantId, via: 'token' });
  });

  test('refresh is single-use, by Bearer or body, and returns a working pair', async () => {
    const t = await deps.tenantWithKey(['products:read']);
    const first = (await http(apiUrl, 'POST', '/auth/token', { key: t.key })).body;
    const byBearer = await http(apiUrl, 'POST', '/auth/refresh', { key: first.refreshToken });
    expect(byBearer.status).toBe(200);
    expect(byBearer.body.accessToken).not.toBe(first.accessToken);
    expectError(await http(apiUrl, 'POST', '/auth/refresh', { key: first.refreshToken }), 401, 'auth:invalid_token');
    const byBody = await http(apiUrl, 'POST', '/auth/refresh', { body: { refreshToken: byBearer.body.refreshToken } });
    expect(byBody.status).toBe(200);
    expectError(
      await http(apiUrl, 'POST', '/auth/refresh', { body: { refreshToken: 'bort_neverIssuedxxxxxxxxxxxxxxxxxxx' } }),
      401,
      'auth:invalid_token',
    );
    expectError(await http(apiUrl, 'POST', '/auth/refresh'), 401, 'auth:invalid_token');
  });

  test("a revoked key's refresh tokens stop working; a suspended tenant's refresh is 403 and spends nothing", async () => {
    const t = await deps.tenantWithKey(['products:read']);
    const pair = (await http(apiUrl, 'POST', '/auth/token', { key: t.key })).body;
    await deps.tenancy.setTenantStatus(t.tenantId, 'suspended');
    expectError(await http(apiUrl, 'POST', '/auth/token', { key: t.key }), 403, 'auth:permission_denied');
    expectError(await http(apiUrl, 'POST', '/auth/refresh', { key: pair.refreshToken }), 403, 'auth:permission_denied');
    await deps.tenancy.setTenantStatus(t.tenantId, 'active');
    // the refused refresh did not spend the token: it works once the tenant is resumed, once
    const renewed = await http(apiUrl, 'POST', '/auth/refresh', { key: pair.refreshToken });
    expect(renewed.status).toBe(200);
    expectError(await http(apiUrl, 'POST', '/auth/refresh', { key: pair.refreshToken }), 401, 'auth:invalid_token');
    const pair2 = (await http(apiUrl, 'POST', '/auth/token', { key: t.key })).body;
    await deps.tenancy.revokeKey(t.keyId);
    expectError(await http(apiUrl, 'POST', '/auth/refresh', { key: pair.refreshToken }), 401, 'auth:invalid_token');
    expectError(await http(apiUrl, 'POST', '/auth/refresh', { key: pair2.refreshToken }), 401, 'auth:invalid_token');
  });

  test('an expired access token is refused', async () => {
    const t = await deps.tenantWithKey(['products:read']);
    const principal = await deps.tenancy.authenticate(t.key);
    if (typeof principal !== 'object') throw new Error('key did not authenticate');
    const pair = await deps.tenancy.issueTokens(principal, { accessSeconds: -1, refreshSeconds: -1 });
    expectError(await http(apiUrl, 'POST', '/auth/token', { key: pair.accessToken }), 401, 'auth:invalid_token');
    expectError(await http(apiUrl, 'POST', '/auth/refresh', { key: pair.refreshToken }), 401, 'auth:invalid_token');
    expect(await deps.tenancy.sweepExpiredTokens()).toBeGreaterThanOrEqual(1);
  });
});

test('keys are stored only as hashes', async () => {
  const t = await deps.tenantWithKey(['products:read']);
  const stored = await deps.db.collection('api_keys').findOne({ _id: t.keyId as never });
  expect(JSON.stringify(stored)).not.toContain(t.key);
  expect(stored?.hash).toMatch(/^[0-9a-f]{64}$/);
});

test('each request leaves one log line with request id, tenant, route, status and duration', async () => {
  const t = await deps.tenantWithKey(['products:read']);
  const requestId = `log-check-${Date.now()}`;
  await http(apiUrl, 'POST', '/auth/token', { key: t.key, headers: { 'x-request-id': requestId } });
  const logFile = `${testStack().dataDir}/logs/api.log`;
  let lines: any[] = [];
  for (let i = 0; i < 20 && lines.length === 0; i++) {
    lines = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes(requestId))
      .map((l) => JSON.parse(l));
    if (!lines.length) await new Promise((r) => setTimeout(r, 100));
  }
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({
    msg: 'request',
    requestId,
    tenantId: t.tenantId,
    method: 'POST',
    route: '/auth/token',
    status: 200,
  });
  expect(typeof lines[0].durationMs).toBe('number');
});

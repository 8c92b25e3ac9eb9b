import { ApiClient, type HttpResult } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * Every status the API answers is one GET /openapi.json declares for the operation: beside each
 * route's own responses, the document adds 401/403 (authenticated), 400 (a body or a query), 404
 * (path parameters), 409 idempotency-key-reused (an Idempotency-Key) and 413/415 (a body).
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let doc: any;
let sysId: string;
const P = `OUS${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'openapi declared statuses');
  tenantId = t.tenantId;
  api = new ApiClient(t.key);
  const res = await api.get('/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
  const list = await api.get('/locations');
  sysId = list.body.locations.find((l: { isSystem: boolean }) => l.isSystem).id;
  expect(
    (await api.post('/products', { sku: `${P}-A`, title: { value: 'A' }, price: 10, status: 'active' })).status,
  ).toBe(201);
});
afterAll(async () => {
  await deps.close();
});

/** The statuses /openapi.json declares for `method template`. */
function declared(method: string, template: string): string[] {
  const op = doc.paths[template]?.[method.toLowerCase()];
  if (!op) throw new Error(`${method} ${template} is not in /openapi.json`);
  return Object.keys(op.responses);
}

/** The answer's status must be one the document declares for the operation. */
function expectDeclared(method: string, template: string, res: HttpResult) {
  expect({ route: `${method} ${template}`, status: res.status, declared: declared(method, template) }).toEqual({
    route: `${method} ${template}`,
    status: res.status,
    declared: expect.arrayContaining([String(res.status)]),
  });
}

// ---------------------------------------------------------------------------------------------
// 409 idempotency-key-reused
// ---------------------------------------------------------------------------------------------

const reuses: [string, string, () => string, () => unknown, () => unknown][] = [
  [
    'POST',
    '/locations',
    () => '/locations',
    () => ({ name: 'L1', type: 'location' }),
    () => ({ name: 'L2', type: 'location' }),
  ],
  [
    'POST',
    '/channels',
    () => '/channels',
    () => ({ name: 'C1', type: 'custom', settings: { endpointUrl: 'http://127.0.0.1:9/a' } }),
    () => ({ name: 'C2', type: 'custom', settings: { endpointUrl: 'http://127.0.0.1:9/a' } }),
  ],
  [
    'POST',
    '/webhooks',
    () => '/webhooks',
    () => ({ url: 'http://127.0.0.1:9/a', eventTypes: ['*'] }),
    () => ({ url: 'http://127.0.0.1:9/b', eventTypes: ['*'] }),
  ],
  [
    'POST',
    '/inventory/handlers',
    () => '/inventory/handlers',
    () => ({ name: 'E1', type: 'erp' }),
    () => ({ name: 'E2', type: 'erp' }),
  ],
  [
    'POST',
    '/inventory/counts',
    () => '/inventory/counts',
    () => ({ name: 'N1', locationId: sysId, countType: 'cycle' }),
    () => ({ name: 'N2', locationId: sysId, countType: 'cycle' }),
  ],
  [
    'POST',
    '/products/supplies',
    () => '/products/supplies',
    () => ({ sku: `${P}-S1`, title: 'S1' }),
    () => ({ sku: `${P}-S2`, title: 'S2' }),
  ],
  [
    'POST',
    '/products/materials',
    () => '/products/materials',
    () => ({ sku: `${P}-M1`, title: 'M1', baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 } }),
    () => ({ sku: `${P}-M2`, title: 'M2', baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 } }),
  ],
  [
    'POST',
    '/locations/{id}/zones',
    () => `/locations/${sysId}/zones`,
    () => ({ code: 'Z1', name: 'Z', type: 'zone' }),
    () => ({ code: 'Z2', name: 'Z', type: 'zone' }),
  ],
  [
    'POST',
    '/products/bulk/csv/export',
    () => '/products/bulk/csv/export',
    () => ({ format: 'native', selection: 'all' }),
    () => ({ format: 'native', selection: 'selected', productIds: [`${P}-A`] }),
  ],
];

test.each(reuses)(
  '%s %s: an Idempotency-Key reused with another body is 409, a status the operation declares',
  async (method, template, path, first, second) => {
    const key = `oas-${template}-${Date.now()}`;
    const a = await api.request(method, path(), { body: first(), headers: { 'Idempotency-Key': key } });
    expect(a.status).toBeLessThan(300);
    const b = await api.request(method, path(), { body: second(), headers: { 'Idempotency-Key': key } });
    expect(b.status).toBe(409);
    expect(b.body.code).toBe('idempotency-key-reused');
    expectDeclared(method, template, b);
  },
);

test('POST /orders/{orderId}/comments: a key reused for another comment is 409, a status the operation declares', async () => {
  const o = await api.post('/orders', {
    externalId: `${P}-O1`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: `${P}-A`, quantity: 1 }],
  });
  expect(o.status).toBe(201);
  const path = `/orders/${o.body.data._id}/comments`;
  const key = `oas-comment-${Date.now()}`;
  expect((await api.post(path, { comment: 'one' }, { headers: { 'Idempotency-Key': key } })).status).toBe(200);
  const again = await api.post(path, { comment: 'two' }, { headers: { 'Idempotency-Key': key } });
  expect(again.status).toBe(409);
  expectDeclared('POST', '/orders/{orderId}/comments', again);
});

// ---------------------------------------------------------------------------------------------
// 429 rate-limited on async CSV jobs
// ---------------------------------------------------------------------------------------------

test('POST /products/bulk/csv/export: the 429 rate-limited answer is a status the operation declares', async () => {
  const answers = await Promise.all(
    Array.from({ length: 8 }, () => api.post('/products/bulk/csv/export', { format: 'native', selection: 'all' })),
  );
  const limited = answers.find((r) => r.status === 429);
  expect(limited).toBeDefined();
  expect(limited!.body.code).toBe('rate-limited');
  expect(limited!.headers.get('retry-after')).toBeTruthy();
  expectDeclared('POST', '/products/bulk/csv/export', limited!);
});

// ---------------------------------------------------------------------------------------------
// 404 not-found/s3-object
// ---------------------------------------------------------------------------------------------

test.each([
  ['/products/bulk/csv/import', (key: string) => ({ s3Key: key })],
  ['/products/bulk/csv/validate', (key: string) => ({ s3Key: key })],
])('POST %s: an absent uploaded object is 404, a status the operation declares', async (template, body) => {
  const res = await api.post(template, body(`uploads/${tenantId}/${P}-absent.csv`));
  expect(res.status).toBe(404);
  expect(res.body.code).toBe('not-found/s3-object');
  expectDeclared('POST', template, res);
});

// ---------------------------------------------------------------------------------------------
// 404 on GET /products/categories/suggest
// ---------------------------------------------------------------------------------------------

test('GET /products/categories/suggest: an unknown channel is 404, a status the operation declares', async () => {
  const res = await api.get('/products/categories/suggest', {
    query: { channelId: '000000000000000000000000', title: 'Linen shirt' },
  });
  expect(res.status).toBe(404);
  expect(res.body.code).toBe('CHANNEL_NOT_FOUND');
  expectDeclared('GET', '/products/categories/suggest', res);
});

// ---------------------------------------------------------------------------------------------
// 400 on POST /locations/{id}/set-default
// ---------------------------------------------------------------------------------------------

test('POST /locations/{id}/set-default: an inactive location is 400, a status the operation declares', async () => {
  const loc = await api.post('/locations', { name: `${P} closed`, type: 'location', status: 'inactive' });
  expect(loc.status).toBe(201);
  const res = await api.post(`/locations/${loc.body.id}/set-default`);
  expect(res.status).toBe(400);
  expect(res.body.code).toBe("bad-request/can't-update");
  expectDeclared('POST', '/locations/{id}/set-default', res);
});

// ---------------------------------------------------------------------------------------------
// 415 unsupported-media-type
// ---------------------------------------------------------------------------------------------

test.each([
  ['POST', '/locations', () => '/locations'],
  ['POST', '/customers', () => '/customers'],
  ['POST', '/orders', () => '/orders'],
  ['POST', '/webhooks', () => '/webhooks'],
])('%s %s: a text/plain body is 415, a status the operation declares', async (method, template, path) => {
  const res = await api.request(method, path(), { raw: 'name=x', headers: { 'content-type': 'text/plain' } });
  expect(res.status).toBe(415);
  expectDeclared(method, template, res);
});

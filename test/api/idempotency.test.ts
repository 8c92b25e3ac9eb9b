import { randomUUID } from 'node:crypto';
import { ApiClient, type HttpResult } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { http, TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { idempotencyKeys } from '../../shared/idempotency/keys';

/**
 * Idempotency-Key on every creating call. From the OpenAPI document: every POST that answers 201
 * or 202 documents the header. For each route that keeps answers (`stored`): a retry with the key
 * answers the first answer again without creating anything, the key with another body is 409,
 * concurrent retries create once, a refusal is not remembered, and /v1 is the same request.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `IK${Date.now().toString(36).toUpperCase()}`;
let n = 0;
let storeId: string;
let productSku: string;
let tenantId: string;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey();
  tenantId = t.tenantId;
  api = new ApiClient(t.key);
  productSku = `${P}-BASE`;
  expect((await api.post('/products', { sku: productSku, title: { value: 'Base' }, price: 5 })).status).toBe(201);
  const loc = await api.post('/locations', location());
  expect(loc.status).toBe(201);
  storeId = loc.body.id;
});
afterAll(() => deps.close());

function location() {
  const code = `L${++n}`;
  return {
    name: `Store ${code}`,
    type: 'location',
    code: `${P.slice(-6)}${code}`,
    address: { street: 'Calle 1', city: 'CDMX', postalCode: '06700', country: 'MX' },
  };
}

/** Each route that keeps answers, with a fresh valid body for it each time it is asked. */
const STORED: { path: () => string; body: () => Record<string, unknown> }[] = [
  { path: () => '/products', body: () => ({ sku: `${P}-${++n}`, title: { value: 'Kept' }, price: 2 }) },
  { path: () => '/locations', body: location },
  { path: () => `/locations/${storeId}/zones`, body: () => ({ code: `Z${++n}`, name: 'Zone', type: 'zone' }) },
  {
    path: () => '/channels',
    body: () => ({
      name: `Channel ${++n}`,
      type: 'custom',
      settings: { endpointUrl: 'https://channel.example.com' },
      secret: 'idempotency-secret-0123456789',
    }),
  },
  {
    path: () => '/orders',
    body: () => ({
      externalId: `${P}-ext-${++n}`,
      customerInfo: { name: `Buyer ${n}` },
      items: [{ sku: productSku, quantity: 1 }],
    }),
  },
  {
    path: () => '/customers',
    body: () => ({ name: `Customer ${++n}`, email: `c${n}.${P.toLowerCase()}@example.com` }),
  },
  { path: () => '/webhooks', body: () => ({ url: `http://127.0.0.1:9/hooks/${++n}`, eventTypes: ['*'] }) },
  { path: () => '/inventory/handlers', body: () => ({ name: `ERP ${++n}`, type: 'erp' }) },
  {
    path: () => '/inventory/counts',
    body: () => ({ name: `Count ${++n}`, locationId: storeId, countType: 'cycle' }),
  },
  {
    path: () => '/products/materials',
    body: () => ({ sku: `${P}-M${++n}`, title: 'Flour', baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 } }),
  },
  {
    path: () => '/products/supplies',
    body: () => ({ sku: `${P}-S${++n}`, title: 'Box', supplyCategory: 'packaging' }),
  },
];

const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });
/** What identifies what a create made: its id, or its SKU. */
const madeBy = (res: HttpResult) => JSON.stringify(res.body.data?.id ?? res.body.id ?? res.body.sku ?? res.body);

test('every POST that creates or starts something documents Idempotency-Key', async () => {
  const doc = (await http(api.base, 'GET', '/openapi.json')).body as {
    paths: Record<
      string,
      Record<string, { responses: Record<string, unknown>; parameters: { name: string; in: string }[] }>
    >;
  };
  const missing: string[] = [];
  let creating = 0;
  for (const [path, ops] of Object.entries(doc.paths)) {
    const op = ops.post;
    if (!op || !('201' in op.responses || '202' in op.responses)) continue;
    creating++;
    if (!op.parameters.some((p) => p.in === 'header' && p.name === 'Idempotency-Key')) missing.push(path);
  }
  expect(creating).toBeGreaterThanOrEqual(19);
  expect(missing).toEqual([]);
});

describe.each(STORED.map((r) => [r.path(), r]))('POST %s keeps its first answer', (_name, route) => {
  test('a retry with the key answers the same, creates nothing more; a new key creates again', async () => {
    const key = randomUUID();
    const body = route.body();
    const first = await api.post(route.path(), body, withKey(key));
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await api.post(route.path(), body, withKey(key));
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // the same request under /v1 is the same request
    const v1 = await api.post(`/v1${route.path()}`, body, withKey(key));
    expect(v1.status).toBe(201);
    expect(v1.body).toEqual(first.body);
    // another request under that key: 409, and it is not made
    const other = route.body();
    const area = route.path().startsWith('/orders') ? 'orders' : 'products';
    expectError(await api.post(route.path(), other, withKey(key)), 409, 'idempotency-key-reused', area);
    const made = await api.post(route.path(), other, withKey(randomUUID()));
    expect(made.status).toBe(201);
    expect(madeBy(made)).not.toEqual(madeBy(first));
  });

  test('a retry after the first request died between its write and keeping its answer finds what it made', async () => {
    const key = randomUUID();
    const body = route.body();
    const first = await api.post(route.path(), body, withKey(key));
    expect(first.status).toBe(201);
    // as the process that died left the key: running, no answer, its lease run out
    await new TenantDb(deps.db, tenantId)
      .collection(idempotencyKeys)
      .updateOne(
        { _id: `${tenantId}:${key}` },
        { $set: { state: 'running', response: null, leaseUntil: new Date(Date.now() - 1000) } },
      );
    const retry = await api.post(route.path(), body, withKey(key));
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(madeBy(retry)).toEqual(madeBy(first));
    expect(retry.body).toEqual(first.body);
    // and its answer is kept now
    const again = await api.post(route.path(), body, withKey(key));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  test('five concurrent requests with one key run once', async () => {
    const key = randomUUID();
    const body = route.body();
    const answers = await Promise.all(Array.from({ length: 5 }, () => api.post(route.path(), body, withKey(key))));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(answers.map(madeBy)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
  });
});

test('a refused request is not remembered: fixed, its retry with the same key is judged afresh', async () => {
  const key = randomUUID();
  const sku = `${P}-LATER`;
  const taken = await api.post('/products', { sku, title: { value: 'Holder' }, price: 1 });
  expect(taken.status).toBe(201);
  const body = { sku, title: { value: 'Wanted' }, price: 3 };
  expect((await api.post('/products', body, withKey(key))).status).toBe(409);
  expect((await api.delete(`/products/${taken.body.id}`)).status).toBeLessThan(300);
  const retried = await api.post('/products', body, withKey(key));
  expect(retried.status).toBe(201);
  expect(retried.body.title.value).toBe('Wanted');
});

test('the key must be 1 to 255 visible ASCII characters; the same key in another tenant is another key', async () => {
  const body = () => ({ sku: `${P}-${++n}`, title: { value: 'K' }, price: 1 });
  expectError(await api.post('/products', body(), withKey('x'.repeat(256))), 400, 'validation-error');
  expectError(await api.post('/products', body(), withKey('with space')), 400, 'validation-error');
  // the same rule where the use case keeps the key (a comment, a receipt) or binds it (a job)
  const order = await api.post('/orders', {
    externalId: `${P}-key-${++n}`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: productSku, quantity: 1 }],
  });
  expect(order.status).toBe(201);
  const comments = `/orders/${order.body.data._id}/comments`;
  const long = withKey('x'.repeat(256));
  expectError(await api.post(comments, { comment: 'hi' }, long), 400, 'validation:invalid_input', 'orders');
  expect((await api.get(`/orders/${order.body.data._id}/activity-log`)).body.data).toHaveLength(1);
  expectError(
    await api.post('/products/bulk/csv/export', { format: 'native', selection: 'all' }, withKey('with space')),
    400,
    'validation-error',
  );
  const key = randomUUID();
  const sku = `${P}-SHARED`;
  expect((await api.post('/products', { sku, title: { value: 'Mine' }, price: 1 }, withKey(key))).status).toBe(201);
  const other = new ApiClient((await deps.tenantWithKey()).key);
  const theirs = await other.post('/products', { sku, title: { value: 'Theirs' }, price: 1 }, withKey(key));
  expect(theirs.status).toBe(201);
  expect(theirs.body.title.value).toBe('Theirs');
});

import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { Ledger } from '../../shared/inventory/ledger';
import { systemLocationId } from '../../shared/locations/locations';

/** Stock through HTTP on the real API: balances, manual sets, bulk updates, handlers; the ledger under concurrency. */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let loc: string;
const P = `S${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-A`;
const VAR = `${P}-A-L`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key);
  loc = systemLocationId(tenantId);
  const body = {
    sku: SKU,
    title: { value: 'Stocked' },
    price: 10,
    variants: [{ sku: VAR, title: { value: 'L' }, price: 10, position: 0 }],
  };
  expect((await api.post('/products', body)).status).toBe(201);
});
afterAll(() => deps.close());

const stockPath = (sku = SKU, location = loc) => `/inventory/location/${location}/product/${sku}`;
const ledger = () => new Ledger(new TenantDb(deps.db, tenantId));

test('PUT sets a balance through the ledger; GET reads it; the SKU is found in any case', async () => {
  const put = await api.put(stockPath(VAR.toLowerCase()), { stock: 7 });
  expect(put.status).toBe(200);
  expect(put.body).toMatchObject({ sku: VAR, locationId: loc, onHand: 7 });
  expect((await api.get(stockPath(VAR))).body).toMatchObject({ sku: VAR, onHand: 7 });
  const movements = await deps.db.collection('stock_movements').find({ tenantId, sku: VAR }).toArray();
  expect(movements).toEqual([
    expect.objectContaining({ delta: 7, status: 'applied', balanceAfter: 7, reason: 'manual' }),
  ]);
  const item = await api.get(`/inventory/items/${VAR}`);
  expect(item.body).toMatchObject({
    sku: VAR,
    kind: 'variant',
    total: 7,
    byLocation: [{ locationId: loc, onHand: 7 }],
  });
  const list = await api.get(`/inventory?sku=${VAR}`);
  expect(list.body).toMatchObject({ totalCount: 1, page: 1, items: [{ sku: VAR, onHand: 7 }] });
  const atLoc = await api.get(`/inventory/location?locationId=${loc}`);
  expect(atLoc.body.items).toEqual(expect.arrayContaining([expect.objectContaining({ sku: VAR, onHand: 7 })]));
  expect((await api.get('/inventory/items')).body.items).toEqual(
    expect.arrayContaining([expect.objectContaining({ sku: VAR, total: 7 })]),
  );
});

test('a retried PUT with the same Idempotency-Key records one movement', async () => {
  const headers = { 'idempotency-key': `${P}-put-1` };
  const a = await api.put(stockPath(), { stock: 3 }, { headers });
  const b = await api.put(stockPath(), { stock: 3 }, { headers });
  expect([a.status, b.status]).toEqual([200, 200]);
  expect(b.body).toEqual(a.body);
  expect(await deps.db.collection('stock_movements').countDocuments({ tenantId, sku: SKU })).toBe(1);
  // the same key on another balance is another movement, not the first one's answer
  const other = await api.put(stockPath(VAR), { stock: 6 }, { headers });
  expect(other.body).toMatchObject({ sku: VAR, onHand: 6 });
  expect(await ledger().onHand(VAR, loc)).toBe(6);
});

test.each([
  ['no body', undefined, 400, 'bad-request/missing-body'],
  ['stock not a number', { stock: 'ten' }, 400, 'bad-request/invalid-stock'],
  ['negative stock (a clear 400, not the deployed 500)', { stock: -1 }, 400, 'bad-request/invalid-stock'],
  ['fractional stock', { stock: 1.5 }, 400, 'bad-request/invalid-stock'],
  ['stock beyond 1,000,000,000 (sums of balances must stay exact)', { stock: 1e300 }, 400, 'bad-request/invalid-stock'],
  ['unknown field', { stock: 1, qty: 2 }, 400, 'bad-request'],
])('PUT with %s: a 4xx, nothing written', async (_what, body, status, code) => {
  const before = await deps.db.collection('stock_movements').countDocuments({ tenantId });
  const res = await api.put(stockPath(), body);
  expectError(res, status, code);
  if (code === 'bad-request/invalid-stock' && (body as { stock: number }).stock === -1)
    expect(res.body.message).toBe('Stock cannot be negative');
  expect(await deps.db.collection('stock_movements').countDocuments({ tenantId })).toBe(before);
});

test('an unknown location is 404 not-found/location; an unknown SKU 404 not-found; invalid JSON 400', async () => {
  expectError(await api.put(stockPath(SKU, 'loc_nope'), { stock: 1 }), 404, 'not-found/location');
  expectError(await api.put(stockPath(`${P}-NOPE`), { stock: 1 }), 404, 'not-found');
  expectError(await api.get(stockPath(`${P}-NOPE`)), 404, 'not-found');
  expectError(await api.get(`/inventory/items/${P}-NOPE`), 404, 'not-found');
  expectError(await api.get('/inventory/location'), 400, 'bad-request/missing-location');
  expectError(
    await api.put(stockPath(), undefined, { raw: '{"stock":', headers: { 'content-type': 'application/json' } }),
    400,
    'bad-request/invalid-json',
  );
});

test('bulk-update: a result per item, 207 when some fail; invalid or empty items 400', async () => {
  const res = await api.post('/inventory/bulk-update', {
    items: [
      { sku: SKU, stock: 4 },
      { sku: `${P}-NOPE`, stock: 1 },
      { sku: VAR, stock: 2, locationId: 'loc_nowhere' },
    ],
  });
  expect(res.status).toBe(207);
  expect(res.body).toMatchObject({ succeeded: 1, failed: 2 });
  expect(res.body.results.map((r: { success: boolean; error?: { code: string } }) => r.error?.code ?? 'ok')).toEqual([
    'ok',
    'not-found',
    'not-found/location',
  ]);
  // a malformed item refuses the whole request: nothing written
  const before = await ledger().onHand(SKU, loc);
  for (const [items, code, field] of [
    [
      [
        { sku: SKU, stock: 9 },
        { sku: VAR, stock: -2 },
      ],
      'bad-request/invalid-stock',
      'items.1.stock',
    ],
    [
      [
        { sku: SKU, stock: 9 },
        { sku: VAR, stock: '3' },
      ],
      'bad-request/invalid-stock',
      'items.1.stock',
    ],
    [[{ sku: SKU, stock: 9 }, { stock: 1 }], 'bad-request/invalid-items', 'items.1.sku'],
    [[{ sku: SKU, stock: 9, locationId: 7 }], 'bad-request/invalid-items', 'items.0.locationId'],
  ] as const) {
    const refused = await api.post('/inventory/bulk-update', { items });
    expectError(refused, 400, code);
    expect(refused.body.field).toBe(field);
  }
  expect(await ledger().onHand(SKU, loc)).toBe(before);
  expect(await ledger().onHand(SKU, loc)).toBe(4);
  // the result names the SKU as stored: trimmed and upper-case
  const ok = await api.post('/inventory/bulk-update', {
    items: [{ sku: ` ${SKU.toLowerCase()} `, stock: 5, locationId: loc }],
  });
  expect(ok.status).toBe(200);
  expect(ok.body.results).toEqual([{ sku: SKU, locationId: loc, success: true, onHand: 5 }]);
  expectError(await api.post('/inventory/bulk-update', { items: [] }), 400, 'bad-request/invalid-items');
  expectError(await api.post('/inventory/bulk-update', { items: 'x' }), 400, 'bad-request/invalid-items');
  expectError(await api.post('/inventory/bulk-update'), 400, 'bad-request/missing-body');
});

test('bulk-update without locationId sets the default location, also after another location became the default', async () => {
  const store = await api.post('/locations', { name: `Store ${P}`, type: 'location' });
  expect(store.status).toBe(201);
  const storeId = store.body.id ?? store.body._id;
  expect((await api.post(`/locations/${storeId}/set-default`)).status).toBe(200);
  try {
    const res = await api.post('/inventory/bulk-update', {
      items: [
        { sku: VAR, stock: 11 },
        { sku: VAR, stock: 11, locationId: null },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.results[0]).toMatchObject({ locationId: storeId, onHand: 11 });
    expect(res.body.results[1]).toMatchObject({ locationId: storeId, onHand: 11 });
    expect(await ledger().onHand(VAR, storeId)).toBe(11);
  } finally {
    expect((await api.post(`/locations/${loc}/set-default`)).status).toBe(200);
  }
});

test('50 concurrent decrements of 1 on a stock of 10: exactly 10 succeed and the stock ends at 0', async () => {
  const sku = `${P}-HOT`;
  expect((await api.post('/products', { sku, title: { value: 'Hot' }, price: 1 })).status).toBe(201);
  await ledger().apply({ sku, locationId: loc, delta: 10, reason: 'restock', actor: 'test' });
  const results = await Promise.allSettled(
    Array.from({ length: 50 }, () =>
      ledger().apply({ sku, locationId: loc, delta: -1, reason: 'sale', actor: 'test' }),
    ),
  );
  expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
  const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  expect(refused.every((r) => r.reason.code === 'conflict/insufficient-stock')).toBe(true);
  expect(await ledger().onHand(sku, loc)).toBe(0);
  expect(await deps.db.collection('stock_movements').countDocuments({ tenantId, sku, status: 'applied' })).toBe(11);
});

test('a movement applied twice with one key (a retry) changes the balance once', async () => {
  const sku = `${P}-RETRY`;
  expect((await api.post('/products', { sku, title: { value: 'Retry' }, price: 1 })).status).toBe(201);
  const m = { sku, locationId: loc, delta: 5, reason: 'restock', actor: 'test', idempotencyKey: `${P}-k1` };
  const all = await Promise.all(Array.from({ length: 10 }, () => ledger().apply(m)));
  expect(new Set(all.map((x) => x.balanceAfter))).toEqual(new Set([5]));
  expect(await ledger().onHand(sku, loc)).toBe(5);
});

test.each([
  ['named by its key, as balances name it now', (key: string) => `~${key}`],
  ['named by its whole id, as balances written before name it', (key: string) => `${tenantId}:${key}`],
])(
  'a movement whose process died after the balance changed is applied once, even after 200 later movements (%s)',
  async (_, entryOf) => {
    const sku = `${P}-CRASH-${entryOf('').length}`;
    expect((await api.post('/products', { sku, title: { value: 'Crash' }, price: 1 })).status).toBe(201);
    await ledger().apply({ sku, locationId: loc, delta: 1000, reason: 'restock', actor: 'test' });
    // what a process leaves when it dies between the balance's update and marking the movement
    // applied: the movement pending, the balance changed, and the movement's id among its recent ones
    const key = `${P}-died-${entryOf('').length}`;
    const _id = `${tenantId}:${key}`;
    await deps.db.collection('stock_movements').insertOne({
      _id,
      tenantId,
      idempotencyKey: key,
      sku,
      locationId: loc,
      delta: -7,
      reason: 'sale',
      reference: null,
      actor: 'test',
      status: 'pending',
      balanceAfter: null,
      createdAt: new Date(),
    } as never);
    await deps.db
      .collection('stock_levels')
      .updateOne(
        { _id: `${tenantId}:${loc}:${sku}` } as never,
        { $inc: { onHand: -7, seq: 1 }, $push: { recent: entryOf(key) } } as never,
      );
    // a hot SKU: many movements before the retry comes (the balance keeps only its recent ids)
    for (let i = 0; i < 200; i++)
      await ledger().apply({ sku, locationId: loc, delta: -1, reason: 'sale', actor: 'test' });
    const retried = await ledger().apply({
      sku,
      locationId: loc,
      delta: -7,
      reason: 'sale',
      actor: 'test',
      idempotencyKey: key,
    });
    expect(retried.status).toBe('applied');
    expect(await ledger().onHand(sku, loc)).toBe(1000 - 7 - 200);
    expect(await deps.db.collection('stock_movements').countDocuments({ tenantId, sku, status: 'applied' })).toBe(202);
  },
);

test.each([
  ['recorded with the balance it was planned on', { expect: 7 }],
  ['recorded before movements kept that balance', {}],
])(
  'a keyed set whose process died before applying it, retried after a sale, sets the new balance (%s)',
  async (_, planned) => {
    const sku = `${P}-SET-${Object.keys(planned).length}`;
    expect((await api.post('/products', { sku, title: { value: 'Set' }, price: 1 })).status).toBe(201);
    await ledger().apply({ sku, locationId: loc, delta: 7, reason: 'restock', actor: 'test' });
    // what PUT stock=0 with Idempotency-Key K leaves when its process dies between recording the
    // movement (7 → 0: -7) and the balance's update
    const key = `put:${loc}:${sku}:K1`;
    await deps.db.collection('stock_movements').insertOne({
      _id: `${tenantId}:${key}`,
      tenantId,
      idempotencyKey: key,
      sku,
      locationId: loc,
      delta: -7,
      reason: 'manual',
      reference: null,
      actor: 'test',
      status: 'pending',
      balanceAfter: null,
      createdAt: new Date(),
      ...planned,
    } as never);
    await ledger().apply({ sku, locationId: loc, delta: -5, reason: 'sale', actor: 'test' });
    const retry = await api.put(stockPath(sku), { stock: 0 }, { headers: { 'idempotency-key': 'K1' } });
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ onHand: 0 });
    expect(await ledger().onHand(sku, loc)).toBe(0);
    const movement = await deps.db.collection('stock_movements').findOne({ _id: `${tenantId}:${key}` } as never);
    expect(movement).toMatchObject({ status: 'applied', delta: -2, expect: 2, balanceAfter: 0 });
  },
);

test('handlers: a managed SKU or location refuses manual edits with 403; handlers are per tenant', async () => {
  const sku = `${P}-MANAGED`;
  expect((await api.post('/products', { sku, title: { value: 'Managed' }, price: 1 })).status).toBe(201);
  const h = await api.post('/inventory/handlers', { name: 'ERP', type: 'erp', skus: [sku] });
  expect(h.status).toBe(201);
  expectError(await api.put(stockPath(sku), { stock: 1 }), 403, 'forbidden/inventory-handler');
  expect(await ledger().onHand(sku, loc)).toBe(0);
  expect((await api.get(`/inventory/handlers/${h.body.id}`)).body).toMatchObject({
    id: h.body.id,
    skus: [sku],
  });
  const sync = await api.post(`/inventory/handlers/${h.body.id}/sync`);
  expect(sync.body).toMatchObject({ success: true, handlerId: h.body.id, syncCount: 1 });
  const other = await deps.tenantWithKey();
  expectError(await api.as(other.key).get(`/inventory/handlers/${h.body.id}`), 404, 'not-found');
  expectError(await api.as(other.key).post(`/inventory/handlers/${h.body.id}/sync`), 404, 'not-found');
});

test('another tenant sees none of it; no key is 401 bad-request/missing-tenant; a missing scope 403', async () => {
  const other = await deps.tenantWithKey();
  expectError(await api.as(other.key).get(stockPath()), 404, 'not-found/location');
  expectError(await api.as(other.key).put(stockPath(), { stock: 1 }), 404, 'not-found/location');
  expectError(await api.as(other.key).get(`/inventory/items/${SKU}`), 404, 'not-found');
  expect((await api.as(other.key).get('/inventory')).body.totalCount).toBe(0);
  expectError(await api.as(null).get('/inventory'), 401, 'bad-request/missing-tenant');
  const reader = await deps.tenancy.issueKey(tenantId, ['inventory:read']);
  expect((await api.as(reader.key).put(stockPath(), { stock: 1 })).status).toBe(403);
});

/** JSON nested `depth` levels deep under `field`: the body parser refuses it (deeper than 64) before any handler runs. */
const deeplyNested = (field: string, depth = 5000) => `{"${field}":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
const asJson = { 'content-type': 'application/json' };

describe('hostile input is a 4xx, never a 500, and writes nothing', () => {
  test.each(['/inventory', '/inventory/items', `/inventory/location`])(
    'GET %s with page or limit 1e309 is 400 bad-request',
    async (path) => {
      for (const bad of [{ page: '1e309' }, { limit: '1e309' }]) {
        const res = await api.get(path, {
          query: { ...bad, ...(path.endsWith('location') ? { locationId: loc } : {}) },
        });
        expectError(res, 400, 'bad-request', 'inventory');
        expect(res.body.field).toBe(Object.keys(bad)[0]);
      }
    },
  );

  test.each([
    ['PUT', () => stockPath(), 'stock'],
    ['POST', () => '/inventory/bulk-update', 'items'],
  ])('%s with a body nested 5,000 levels deep is 400 bad-request', async (method, path, field) => {
    const before = await deps.db.collection('stock_movements').countDocuments({ tenantId });
    const res = await api.request(method, path(), { raw: deeplyNested(field), headers: asJson });
    expectError(res, 400, 'bad-request', 'inventory');
    expect(await deps.db.collection('stock_movements').countDocuments({ tenantId })).toBe(before);
  });

  test('a blank SKU in the path is 400 bad-request/missing-sku', async () => {
    expectError(await api.get(stockPath('%20')), 400, 'bad-request/missing-sku', 'inventory');
    expectError(await api.put(stockPath('%20'), { stock: 1 }), 400, 'bad-request/missing-sku', 'inventory');
    expectError(await api.get('/inventory/items/%20'), 400, 'bad-request/missing-sku', 'inventory');
  });
});

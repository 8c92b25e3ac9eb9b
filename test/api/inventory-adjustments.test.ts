import { ApiClient, type HttpResult } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { ADJUSTMENT_REASONS, adjustments } from '../../shared/inventory/adjustments';
import { stockMovements } from '../../shared/inventory/collections';
import { inventoryHandlers } from '../../shared/inventory/handlers';
import { Ledger } from '../../shared/inventory/ledger';
import { locations, systemLocationId } from '../../shared/locations/locations';

/** Adjustments through HTTP on the real API process: create checks, list, the state machine, exactly-once approval. */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let other: string;
let readOnly: string;
let noInventory: string;
let tdb: TenantDb;
let ledger: Ledger;
let main: string;
const store = `loc_adjstore_${Date.now().toString(36)}`;
const P = `ADJ${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-MUG`;
const VAR = `${P}-TEE-S`;
const MANAGED = `${P}-MANAGED`;
let n = 0;

const inv = (res: HttpResult, status: number, code: string) => expectError(res, status, code, 'inventory');

/** How many adjustments and movements the tenant has: "nothing written" is this unchanged. */
async function written() {
  const [adj, mov] = await Promise.all([
    tdb.collection(adjustments).countDocuments({}),
    tdb.collection(stockMovements).countDocuments({}),
  ]);
  return { adj, mov };
}

/** A fresh SKU with `stock` units at the main location, so tests do not share balances. */
async function freshSku(stock: number): Promise<string> {
  const sku = `${P}-S${++n}`;
  const res = await api.post('/products', { sku, title: { value: `Item ${n}` }, price: 10, cost: 4 });
  expect(res.status).toBe(201);
  if (stock > 0) await ledger.apply({ sku, locationId: main, delta: stock, reason: 'restock', actor: 'test' });
  return sku;
}

async function createAdj(body: Record<string, unknown>) {
  const res = await api.post('/inventory/adjustments', { locationId: main, reason: 'damage', ...body });
  if (res.status !== 201) throw new Error(`create → ${res.status} ${res.text}`);
  return res.body;
}

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key);
  ({ key: other } = await deps.tenantWithKey());
  readOnly = (await deps.tenancy.issueKey(tenantId, ['inventory:read'])).key;
  noInventory = (await deps.tenancy.issueKey(tenantId, ['products:read'])).key;
  tdb = new TenantDb(deps.db, tenantId);
  ledger = new Ledger(tdb);
  main = systemLocationId(tenantId);
  const now = new Date();
  await tdb.collection(locations).insertOne({
    _id: store,
    name: 'Store',
    type: 'location',
    isDefault: false,
    isSystem: false,
    managedBy: null,
    createdAt: now,
    updatedAt: now,
  });
  for (const body of [
    { sku: SKU, title: { value: 'Mug' }, price: 8, cost: 3 },
    {
      sku: `${P}-TEE`,
      title: { value: 'Tee' },
      price: 10,
      variants: [{ sku: VAR, title: { value: 'Tee S' }, price: 10, position: 0 }],
    },
    { sku: MANAGED, title: { value: 'Managed' }, price: 1 },
  ]) {
    expect((await api.post('/products', body)).status).toBe(201);
  }
  await tdb.collection(inventoryHandlers).insertOne({
    _id: `ih_${P}`,
    name: 'Marketplace FBA',
    type: 'marketplace',
    skus: [MANAGED],
    locationIds: [],
    status: 'active',
    lastSyncAt: null,
    syncCount: 0,
    createdAt: now,
  });
  await ledger.apply({ sku: SKU, locationId: main, delta: 10, reason: 'restock', actor: 'test' });
});
afterAll(() => deps.close());

describe('create', () => {
  test('201: a pending adjustment with the balance at creation; nothing moves yet', async () => {
    const res = await api.post('/inventory/adjustments', {
      locationId: main,
      sku: SKU.toLowerCase(),
      newQuantity: 7,
      reason: 'damage',
      notes: 'dropped a box',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      locationId: main,
      sku: SKU,
      currentQuantity: 10,
      newQuantity: 7,
      difference: -3,
      reason: 'damage',
      notes: 'dropped a box',
      status: 'pending',
      applied: false,
    });
    expect(res.body.id).toMatch(/^adj_[0-9A-Z]{26}$/);
    expect(typeof res.body.createdBy).toBe('string');
    expect(Number.isNaN(Date.parse(res.body.createdAt))).toBe(false);
    expect(res.headers.get('location')).toBe(`/inventory/adjustments/${res.body.id}`);
    expect((await api.get(`/inventory/adjustments/${res.body.id}`)).body).toEqual(res.body);
    expect(await ledger.onHand(SKU, main)).toBe(10);
  });

  test('a variant SKU and a SKU with no balance yet (currentQuantity 0) at another location', async () => {
    const adj = await createAdj({ sku: VAR, locationId: store, newQuantity: 4, reason: 'found' });
    expect(adj).toMatchObject({ sku: VAR, locationId: store, currentQuantity: 0, newQuantity: 4, difference: 4 });
  });

  test('all 11 reasons are accepted', async () => {
    for (const reason of ADJUSTMENT_REASONS) {
      const res = await api.post('/inventory/adjustments', { locationId: main, sku: SKU, newQuantity: 10, reason });
      expect([reason, res.status]).toEqual([reason, 201]);
    }
  });

  const base = () => ({ locationId: main, sku: SKU, newQuantity: 5, reason: 'damage' });
  const without = (...fields: string[]) =>
    Object.fromEntries(Object.entries(base()).filter(([k]) => !fields.includes(k)));
  const cases: [string, () => { body?: unknown; raw?: string }, number, string, RegExp?][] = [
    ['no body', () => ({}), 400, 'bad-request/missing-body'],
    ['an empty object', () => ({ body: {} }), 400, 'bad-request/missing-body'],
    ['malformed JSON', () => ({ raw: '{"sku": ' }), 400, 'bad-request/invalid-json'],
    ['no locationId', () => ({ body: without('locationId') }), 400, 'bad-request/missing-location'],
    ['a blank locationId', () => ({ body: { ...base(), locationId: '  ' } }), 400, 'bad-request/missing-location'],
    ['no sku', () => ({ body: without('sku') }), 400, 'bad-request/missing-sku'],
    ['no newQuantity', () => ({ body: without('newQuantity') }), 400, 'bad-request/missing-quantity'],
    ['no reason', () => ({ body: without('reason') }), 400, 'bad-request/missing-reason'],
    [
      'nothing but notes: location is checked first',
      () => ({ body: { notes: 'x' } }),
      400,
      'bad-request/missing-location',
    ],
    ['no sku and no reason: sku first', () => ({ body: without('sku', 'reason') }), 400, 'bad-request/missing-sku'],
    [
      'no quantity and a bad reason: quantity first',
      () => ({ body: { ...without('newQuantity'), reason: 'sale' } }),
      400,
      'bad-request/missing-quantity',
    ],
    [
      'a negative newQuantity',
      () => ({ body: { ...base(), newQuantity: -1 } }),
      400,
      'bad-request/invalid-stock',
      /negative/,
    ],
    [
      'a string newQuantity',
      () => ({ body: { ...base(), newQuantity: '5' } }),
      400,
      'bad-request/invalid-stock',
      /must be a number/,
    ],
    [
      'a boolean newQuantity',
      () => ({ body: { ...base(), newQuantity: true } }),
      400,
      'bad-request/invalid-stock',
      /must be a number/,
    ],
    [
      'a fractional newQuantity',
      () => ({ body: { ...base(), newQuantity: 1.5 } }),
      400,
      'bad-request/invalid-stock',
      /whole number/,
    ],
    [
      "the reserved reason 'sale'",
      () => ({ body: { ...base(), reason: 'sale' } }),
      400,
      'bad-request/invalid-reason',
      /reserved for automatic decrements/,
    ],
    [
      'an unknown reason',
      () => ({ body: { ...base(), reason: 'gift' } }),
      400,
      'bad-request/invalid-reason',
      /count_correction/,
    ],
    ['a reason of the wrong type', () => ({ body: { ...base(), reason: 3 } }), 400, 'bad-request/invalid-reason'],
    ['an unknown field', () => ({ body: { ...base(), quantity: 5 } }), 400, 'bad-request', /quantity/],
    ['an array body', () => ({ raw: '[1]' }), 400, 'bad-request'],
    ['an unknown SKU', () => ({ body: { ...base(), sku: `${P}-NOPE` } }), 404, 'not-found'],
    ['an unknown location', () => ({ body: { ...base(), locationId: 'loc_nowhere' } }), 404, 'not-found/location'],
    ['a SKU an integration manages', () => ({ body: { ...base(), sku: MANAGED } }), 403, 'forbidden/inventory-handler'],
  ];
  // every row has 5 members: jest takes a callback with more parameters than the row for one wanting `done`
  const rows = cases.map(([name, make, status, code, message]) => [name, status, code, make, message ?? null] as const);
  test.each(rows)('%s → %i %s, nothing written', async (_name, status, code, make, message) => {
    const before = await written();
    const { body, raw } = make();
    const res = await api.post('/inventory/adjustments', body, {
      raw,
      headers: raw !== undefined ? { 'content-type': 'application/json' } : undefined,
    });
    inv(res, status, code);
    if (message) expect(res.body.message).toMatch(message);
    expect(await written()).toEqual(before);
  });

  test('Idempotency-Key: a retried create answers the first adjustment', async () => {
    const before = await written();
    const headers = { 'idempotency-key': `retry-${P}` };
    const a = await api.post(
      '/inventory/adjustments',
      { locationId: main, sku: SKU, newQuantity: 9, reason: 'theft' },
      { headers },
    );
    const b = await api.post(
      '/inventory/adjustments',
      { locationId: main, sku: SKU, newQuantity: 9, reason: 'theft' },
      { headers },
    );
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.body).toEqual(a.body);
    expect((await written()).adj).toBe(before.adj + 1);
  });
});

describe('list and read', () => {
  test('filters by status, SKU and location, pages with totalCount', async () => {
    const sku = await freshSku(3);
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await createAdj({ sku, newQuantity: i }));
    made.push(await createAdj({ sku, newQuantity: 9, locationId: store }));
    await api.post(`/inventory/adjustments/${made[0].id}/reject`, { reason: 'typo' });
    const all = await api.get(`/inventory/adjustments?sku=${sku.toLowerCase()}`);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ totalCount: 4, page: 1, limit: 50 });
    expect(all.body.adjustments.map((a: { id: string }) => a.id)).toEqual(made.map((m) => m.id).reverse()); // newest first
    const pending = await api.get(`/inventory/adjustments?sku=${sku}&status=pending&locationId=${main}`);
    expect(pending.body.adjustments.map((a: { id: string }) => a.id)).toEqual([made[2].id, made[1].id]);
    const page2 = await api.get(`/inventory/adjustments?sku=${sku}&limit=3&page=2`);
    expect(page2.body).toMatchObject({ totalCount: 4, page: 2, limit: 3 });
    expect(page2.body.adjustments.map((a: { id: string }) => a.id)).toEqual([made[0].id]);
    inv(await api.get('/inventory/adjustments?status=done'), 400, 'bad-request');
    inv(await api.get('/inventory/adjustments?limit=0'), 400, 'bad-request');
  });

  test('an unknown id is 404 not-found', async () => {
    inv(await api.get('/inventory/adjustments/adj_NOPE'), 404, 'not-found');
  });
});

describe('state machine', () => {
  type State = 'pending' | 'approved' | 'rejected';
  async function adjustmentIn(state: State) {
    const sku = await freshSku(5);
    const adj = await createAdj({ sku, newQuantity: 2 });
    if (state === 'approved') expect((await api.post(`/inventory/adjustments/${adj.id}/approve`)).status).toBe(200);
    if (state === 'rejected')
      expect((await api.post(`/inventory/adjustments/${adj.id}/reject`, { reason: 'no' })).status).toBe(200);
    return { adj, sku };
  }
  const table: [State, 'approve' | 'reject', number, string][] = [
    ['pending', 'approve', 200, 'approved'],
    ['pending', 'reject', 200, 'rejected'],
    ['approved', 'approve', 409, 'conflict/adjustment-approved'],
    ['approved', 'reject', 409, 'conflict/adjustment-approved'],
    ['rejected', 'approve', 409, 'conflict/adjustment-rejected'],
    ['rejected', 'reject', 409, 'conflict/adjustment-rejected'],
  ];
  test.each(table)('%s + %s → %i %s', async (from, action, status, outcome) => {
    const { adj, sku } = await adjustmentIn(from);
    const stockBefore = await ledger.onHand(sku, main);
    const movesBefore = await tdb.collection(stockMovements).countDocuments({ sku });
    const res = await api.post(
      `/inventory/adjustments/${adj.id}/${action}`,
      action === 'reject' ? { reason: 'checked again' } : undefined,
    );
    if (status === 200) {
      expect(res.status).toBe(200);
      expect(res.body.status).toBe(outcome);
      const moved = outcome === 'approved';
      expect(await ledger.onHand(sku, main)).toBe(moved ? 2 : stockBefore);
      expect(await tdb.collection(stockMovements).countDocuments({ sku })).toBe(movesBefore + (moved ? 1 : 0));
    } else {
      inv(res, status, outcome);
      expect(res.body.details).toEqual({ status: from });
      expect((await api.get(`/inventory/adjustments/${adj.id}`)).body.status).toBe(from);
      expect(await ledger.onHand(sku, main)).toBe(stockBefore);
      expect(await tdb.collection(stockMovements).countDocuments({ sku })).toBe(movesBefore);
    }
  });

  test('approve: the ledger sets the balance to newQuantity under the key adj:<id>, with the reason and a reference', async () => {
    const sku = await freshSku(10);
    const adj = await createAdj({ sku, newQuantity: 6, reason: 'expired' });
    const res = await api.post(`/inventory/adjustments/${adj.id}/approve`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: adj.id,
      status: 'approved',
      applied: true,
      appliedDelta: -4,
      quantityAfter: 6,
      movementId: `adj:${adj.id}`,
    });
    expect(typeof res.body.approvedBy).toBe('string');
    const moves = await tdb.collection(stockMovements).find({ sku, reason: 'expired' }).toArray();
    expect(moves.map((m) => [m.idempotencyKey, m.delta, m.status, m.reference])).toEqual([
      [`adj:${adj.id}`, -4, 'applied', { type: 'adjustment', id: adj.id }],
    ]);
    expect(await ledger.onHand(sku, main)).toBe(6);
  });

  test('approve sets the balance to newQuantity even when stock moved since creation', async () => {
    const sku = await freshSku(10);
    const adj = await createAdj({ sku, newQuantity: 8 });
    await ledger.apply({ sku, locationId: main, delta: -5, reason: 'sale', actor: 'test' });
    const res = await api.post(`/inventory/adjustments/${adj.id}/approve`);
    expect(res.body).toMatchObject({ currentQuantity: 10, difference: -2, appliedDelta: 3, quantityAfter: 8 });
  });

  test('reject: a reason is required (400 bad-request/missing-reason, nothing written); stock does not move', async () => {
    const sku = await freshSku(4);
    const adj = await createAdj({ sku, newQuantity: 0 });
    for (const body of [undefined, {}, { reason: '' }, { reason: null }]) {
      inv(await api.post(`/inventory/adjustments/${adj.id}/reject`, body), 400, 'bad-request/missing-reason');
    }
    inv(await api.post(`/inventory/adjustments/${adj.id}/reject`, { reason: 'x', extra: 1 }), 400, 'bad-request');
    expect((await api.get(`/inventory/adjustments/${adj.id}`)).body.status).toBe('pending');
    const res = await api.post(`/inventory/adjustments/${adj.id}/reject`, { reason: 'counted wrong' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'rejected',
      rejectionReason: 'counted wrong',
      applied: false,
      movementId: null,
    });
    expect(await ledger.onHand(sku, main)).toBe(4);
    inv(await api.post('/inventory/adjustments/adj_NOPE/reject', { reason: 'x' }), 404, 'not-found');
    inv(await api.post('/inventory/adjustments/adj_NOPE/approve'), 404, 'not-found');
  });

  test('approve of an adjustment whose SKU an integration took over since: 403, still pending, nothing moved', async () => {
    const sku = await freshSku(3);
    const adj = await createAdj({ sku, newQuantity: 1 });
    await tdb.collection(inventoryHandlers).insertOne({
      _id: `ih_${sku}`,
      name: 'ERP',
      type: 'erp',
      skus: [sku],
      locationIds: [],
      status: 'active',
      lastSyncAt: null,
      syncCount: 0,
      createdAt: new Date(),
    });
    const before = await written();
    inv(await api.post(`/inventory/adjustments/${adj.id}/approve`), 403, 'forbidden/inventory-handler');
    expect((await api.get(`/inventory/adjustments/${adj.id}`)).body.status).toBe('pending');
    expect(await written()).toEqual(before);
    expect(await ledger.onHand(sku, main)).toBe(3);
  });

  test('10 concurrent approves: one 200, nine 409 conflict/adjustment-approved, the stock changes once', async () => {
    const sku = await freshSku(10);
    const adj = await createAdj({ sku, newQuantity: 25, reason: 'restock' });
    const results = await Promise.all(
      Array.from({ length: 10 }, () => api.post(`/inventory/adjustments/${adj.id}/approve`)),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    for (const r of results.filter((r) => r.status === 409)) inv(r, 409, 'conflict/adjustment-approved');
    expect(await ledger.onHand(sku, main)).toBe(25);
    const moves = await tdb.collection(stockMovements).find({ sku }).toArray();
    expect(moves.map((m) => m.delta).sort((a, b) => a - b)).toEqual([10, 15]); // the seed, then the adjustment once
    expect((await api.get(`/inventory/adjustments/${adj.id}`)).body).toMatchObject({
      status: 'approved',
      applied: true,
      appliedDelta: 15,
      quantityAfter: 25,
    });
  });
  test('an approval whose request died before the ledger answered is finished by the next approve, once; not while its lease runs', async () => {
    const sku = await freshSku(10);
    const adj = await createAdj({ sku, newQuantity: 4 });
    const col = tdb.collection(adjustments);
    // as if an approve claimed it and died: approved, not applied, lease still running
    await col.updateById(adj.id, {
      $set: {
        status: 'approved',
        approvedBy: 'crashed',
        approvedAt: new Date(),
        applied: false,
        applyingUntil: new Date(Date.now() + 60_000),
      },
    });
    inv(await api.post(`/inventory/adjustments/${adj.id}/approve`), 409, 'conflict/adjustment-approved');
    expect(await ledger.onHand(sku, main)).toBe(10);
    // the lease ran out
    await col.updateById(adj.id, { $set: { applyingUntil: new Date(Date.now() - 1000) } });
    const results = await Promise.all([1, 2, 3].map(() => api.post(`/inventory/adjustments/${adj.id}/approve`)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    expect(results.find((r) => r.status === 200)!.body).toMatchObject({
      status: 'approved',
      applied: true,
      appliedDelta: -6,
      quantityAfter: 4,
      approvedBy: 'crashed',
    });
    expect(await ledger.onHand(sku, main)).toBe(4);
    expect(await tdb.collection(stockMovements).countDocuments({ sku })).toBe(2);
    inv(await api.post(`/inventory/adjustments/${adj.id}/approve`), 409, 'conflict/adjustment-approved');
  });
});

test('every adjustment, count, lot and report route is in /openapi.json with a summary and its scope', async () => {
  const doc = (await api.as(null).get('/openapi.json')).body;
  const expected: [string, string, string][] = [
    ['/inventory/adjustments', 'post', 'inventory:adjust'],
    ['/inventory/adjustments', 'get', 'inventory:read'],
    ['/inventory/adjustments/{id}', 'get', 'inventory:read'],
    ['/inventory/adjustments/{id}/approve', 'post', 'inventory:adjust'],
    ['/inventory/adjustments/{id}/reject', 'post', 'inventory:adjust'],
    ['/inventory/counts', 'post', 'inventory:count'],
    ['/inventory/counts', 'get', 'inventory:read'],
    ['/inventory/counts/{id}', 'get', 'inventory:read'],
    ['/inventory/counts/{id}/items', 'put', 'inventory:count'],
    ['/inventory/counts/{id}/complete', 'post', 'inventory:count'],
    ['/inventory/lots', 'get', 'inventory:read'],
    ['/inventory/lots/{lotNumber}', 'get', 'inventory:read'],
    ['/inventory/lots/sku/{sku}/valuation', 'get', 'inventory:read'],
    ['/inventory/stats', 'get', 'inventory:read'],
    ['/inventory/reports', 'post', 'inventory:read'],
  ];
  for (const [path, method, scope] of expected) {
    const op = doc.paths[path]?.[method];
    expect({ path, method, summary: typeof op?.summary, scopes: op?.['x-scopes'] }).toEqual({
      path,
      method,
      summary: 'string',
      scopes: [scope],
    });
    expect(Object.keys(op.responses).length).toBeGreaterThan(1);
  }
  expect(
    doc.paths['/inventory/adjustments'].post.requestBody.content['application/json'].schema.properties.reason.enum,
  ).toEqual([...ADJUSTMENT_REASONS]);
});

describe('tenancy and auth', () => {
  test("another tenant's adjustment is 404 for every verb and absent from its list", async () => {
    const adj = await createAdj({ sku: SKU, newQuantity: 1 });
    inv(await api.as(other).get(`/inventory/adjustments/${adj.id}`), 404, 'not-found');
    inv(await api.as(other).post(`/inventory/adjustments/${adj.id}/approve`), 404, 'not-found');
    inv(await api.as(other).post(`/inventory/adjustments/${adj.id}/reject`, { reason: 'x' }), 404, 'not-found');
    expect((await api.as(other).get('/inventory/adjustments')).body).toMatchObject({ adjustments: [], totalCount: 0 });
    expect((await api.get(`/inventory/adjustments/${adj.id}`)).body.status).toBe('pending');
    // and the other tenant cannot adjust this tenant's SKU: it does not have it
    inv(
      await api.as(other).post('/inventory/adjustments', {
        locationId: systemLocationId(tenantId),
        sku: SKU,
        newQuantity: 1,
        reason: 'damage',
      }),
      404,
      'not-found',
    );
  });

  test('401 bad-request/missing-tenant without a valid key; 403 without the scope', async () => {
    const body = { locationId: main, sku: SKU, newQuantity: 1, reason: 'damage' };
    inv(await api.as(null).post('/inventory/adjustments', body), 401, 'bad-request/missing-tenant');
    inv(await api.as('bok_notarealkeyatallxxxxxxxx').get('/inventory/adjustments'), 401, 'bad-request/missing-tenant');
    const before = await written();
    inv(await api.as(readOnly).post('/inventory/adjustments', body), 403, 'auth:permission_denied');
    const adj = await createAdj({ sku: SKU, newQuantity: 1 });
    const after = await written();
    expect(after.adj).toBe(before.adj + 1);
    inv(await api.as(readOnly).post(`/inventory/adjustments/${adj.id}/approve`), 403, 'auth:permission_denied');
    inv(
      await api.as(readOnly).post(`/inventory/adjustments/${adj.id}/reject`, { reason: 'x' }),
      403,
      'auth:permission_denied',
    );
    inv(await api.as(noInventory).get('/inventory/adjustments'), 403, 'auth:permission_denied');
    inv(await api.as(noInventory).get(`/inventory/adjustments/${adj.id}`), 403, 'auth:permission_denied');
    expect((await api.as(readOnly).get(`/inventory/adjustments/${adj.id}`)).status).toBe(200);
    expect(await written()).toEqual(after);
  });
});

describe('hostile input is a 4xx, never a 500, and writes nothing', () => {
  /** JSON nested 5,000 levels deep under `field`: the body parser refuses it (deeper than 64) before any handler runs. */
  const deeplyNested = (field: string, depth = 5000) => `{"${field}":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
  const asJson = { 'content-type': 'application/json' };

  test('a create body nested 5,000 levels deep is 400 bad-request', async () => {
    const before = await written();
    const res = await api.post('/inventory/adjustments', undefined, { raw: deeplyNested('notes'), headers: asJson });
    inv(res, 400, 'bad-request');
    expect(await written()).toEqual(before);
  });

  test('a reject body nested 5,000 levels deep is 400 bad-request; the adjustment stays pending', async () => {
    const adj = await createAdj({ sku: SKU, newQuantity: 1 });
    const res = await api.post(`/inventory/adjustments/${adj.id}/reject`, undefined, {
      raw: deeplyNested('reason'),
      headers: asJson,
    });
    inv(res, 400, 'bad-request');
    expect((await api.get(`/inventory/adjustments/${adj.id}`)).body.status).toBe('pending');
  });

  test('page or limit 1e309 on the list is 400 bad-request', async () => {
    for (const query of [{ page: '1e309' }, { limit: '1e309' }]) {
      const res = await api.get('/inventory/adjustments', { query });
      inv(res, 400, 'bad-request');
      expect(res.body.field).toBe(Object.keys(query)[0]);
    }
  });
});

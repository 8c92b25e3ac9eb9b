import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { Ledger } from '../../shared/inventory/ledger';
import { transfers } from '../../shared/inventory/transfers';
import { recordLotCost } from '../../shared/inventory/lots';
import { TransferService } from '../../shared/inventory/transfer-service';
import { locations, systemLocationId } from '../../shared/locations/locations';

/** Transfers on the real API and worker: each is a workflow; approve / receive / cancel are Updates guarded by its state. */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let origin: string;
const dest = `loc_dest_${Date.now().toString(36)}`;
const P = `T${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-A`;
const SKU2 = `${P}-B`;

const ledger = () => new Ledger(new TenantDb(deps.db, tenantId));

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key);
  origin = systemLocationId(tenantId);
  const now = new Date();
  await new TenantDb(deps.db, tenantId).collection(locations).insertOne({
    _id: dest,
    name: 'Store',
    type: 'location',
    isDefault: false,
    isSystem: false,
    managedBy: null,
    createdAt: now,
    updatedAt: now,
  });
  for (const sku of [SKU, SKU2])
    expect((await api.post('/products', { sku, title: { value: sku }, price: 1 })).status).toBe(201);
  await ledger().apply({ sku: SKU, locationId: origin, delta: 1000, reason: 'restock', actor: 'test' });
  await ledger().apply({ sku: SKU2, locationId: origin, delta: 1000, reason: 'restock', actor: 'test' });
});
afterAll(() => deps.close());

async function create(lines = [{ sku: SKU, quantity: 2 }]) {
  const res = await api.post('/inventory/transfers', { originId: origin, destinationId: dest, productsList: lines });
  expect(res.status).toBe(201);
  return res.body as { id: string; status: string; workflowId: string };
}
const act = (
  id: string,
  action: string,
  o: { body?: unknown; headers?: Record<string, string>; as?: ApiClient } = {},
) => (o.as ?? api).post(`/inventory/transfers/${id}/${action}`, o.body, { headers: o.headers });

/** A transfer brought to a state through the API. */
async function inState(state: string) {
  const t = await create();
  if (state === 'approved' || state === 'received') expect((await act(t.id, 'approve')).status).toBe(200);
  if (state === 'received') expect((await act(t.id, 'receive')).status).toBe(200);
  if (state === 'cancelled') expect((await act(t.id, 'cancel', { body: { reason: 'not needed' } })).status).toBe(200);
  return t;
}

test('create → pending, a workflow <tenantId>/<transferId> visible under the TenantId search attribute', async () => {
  const t = await create();
  expect(t).toMatchObject({ status: 'pending', workflowId: `${tenantId}/${t.id}` });
  const desc = await deps.temporal.workflow.getHandle(t.workflowId).describe();
  expect(desc.status.name).toBe('RUNNING');
  expect(desc.typedSearchAttributes.get({ name: 'TenantId', type: 'KEYWORD' } as never)).toBe(tenantId);
  expect((await api.get(`/inventory/transfers/${t.id}`)).body).toMatchObject({
    id: t.id,
    status: 'pending',
    productsList: [{ sku: SKU, quantity: 2 }],
  });
  expect(
    (await api.get('/inventory/transfers', { query: { status: 'pending' } })).body.transfers.some(
      (x: { id: string }) => x.id === t.id,
    ),
  ).toBe(true);
});

const TABLE: [string, string, number, string | null][] = [
  ['pending', 'approve', 200, 'approved'],
  ['pending', 'receive', 409, 'conflict/transfer-pending'],
  ['pending', 'cancel', 200, 'cancelled'],
  ['approved', 'approve', 409, 'conflict/transfer-approved'],
  ['approved', 'receive', 200, 'received'],
  ['approved', 'cancel', 200, 'cancelled'],
  ['received', 'approve', 409, 'conflict/transfer-received'],
  ['received', 'receive', 409, 'conflict/transfer-received'],
  ['received', 'cancel', 409, 'conflict/transfer-received'],
  ['cancelled', 'approve', 409, 'conflict/transfer-cancelled'],
  ['cancelled', 'receive', 409, 'conflict/transfer-cancelled'],
  ['cancelled', 'cancel', 409, 'conflict/transfer-cancelled'],
];

test.each(TABLE)('a %s transfer: %s → %i %s', async (state, action, status, outcome) => {
  const t = await inState(state);
  const res = await act(t.id, action);
  if (status === 200) {
    expect(res.status).toBe(200);
    expect(res.body.status).toBe(outcome);
  } else {
    expectError(res, status, outcome!);
    expect(res.body.details).toMatchObject({ currentState: state, action });
    const after = await api.get(`/inventory/transfers/${t.id}`);
    expect(after.body.status).toBe(state);
    expect(after.body.history.at(-1)).toMatchObject({ action, outcome: 'refused', state });
  }
});

test('receive moves the stock out of the origin and into the destination, with ledger movements', async () => {
  const [o1, o2, d1] = [
    await ledger().onHand(SKU, origin),
    await ledger().onHand(SKU2, origin),
    await ledger().onHand(SKU, dest),
  ];
  const t = await create([
    { sku: SKU, quantity: 3 },
    { sku: SKU2.toLowerCase(), quantity: 4 },
  ]);
  await act(t.id, 'approve');
  expect((await act(t.id, 'receive')).body).toMatchObject({ status: 'received', receivedAt: expect.any(String) });
  expect(await ledger().onHand(SKU, origin)).toBe(o1 - 3);
  expect(await ledger().onHand(SKU2, origin)).toBe(o2 - 4);
  expect(await ledger().onHand(SKU, dest)).toBe(d1 + 3);
  const moves = await deps.db.collection('stock_movements').find({ tenantId, 'reference.id': t.id }).toArray();
  expect(moves.map((m) => `${m.reason}:${m.sku}:${m.delta}`).sort()).toEqual(
    [`transfer_in:${SKU2}:4`, `transfer_in:${SKU}:3`, `transfer_out:${SKU2}:-4`, `transfer_out:${SKU}:-3`].sort(),
  );
});

test('the lot a transfer makes at its destination costs what its units cost at the origin (FIFO), not the catalog cost', async () => {
  const sku = `${P}-COST`;
  expect((await api.post('/products', { sku, title: { value: sku }, price: 10, cost: 2 })).status).toBe(201);
  const setCost = (cost: number) => deps.db.collection('products').updateOne({ tenantId, sku }, { $set: { cost } });
  const tenantDb = new TenantDb(deps.db, tenantId);
  // two receipts at the origin: 5 @ 2, then 5 @ 7 (each noted at the catalog cost of its moment)
  for (const [n, cost] of [
    [1, 2],
    [2, 7],
  ]) {
    await setCost(cost);
    await recordLotCost(tenantDb, `${sku}-r${n}`, sku);
    await ledger().apply({
      sku,
      locationId: origin,
      delta: 5,
      reason: 'restock',
      actor: 'test',
      idempotencyKey: `${sku}-r${n}`,
    });
  }
  const t = await create([{ sku, quantity: 6 }]);
  await act(t.id, 'approve');
  await setCost(100);
  expect((await act(t.id, 'receive')).status).toBe(200);

  const moveIn = await deps.db
    .collection('stock_movements')
    .findOne({ tenantId, 'reference.id': t.id, reason: 'transfer_in' });
  const lot = await api.get(`/inventory/lots/${encodeURIComponent(moveIn!.idempotencyKey)}`);
  // the 6 oldest units: 5 @ 2 + 1 @ 7 = 17, 2.8333 each
  expect(lot.body).toMatchObject({ sku, locationId: dest, quantity: 6, costPerUnit: 2.8333, costSource: 'recorded' });
  const atOrigin = await api.get(`/inventory/lots/sku/${sku}/valuation`, {
    query: { locationId: origin, method: 'fifo' },
  });
  expect(atOrigin.body).toMatchObject({ quantity: 4, totalValue: 28, unitCost: 7 });
});

test('a receive refused for stock leaves no cost noted for the lots it did not make', async () => {
  const sku = `${P}-NOCOST`;
  expect((await api.post('/products', { sku, title: { value: sku }, price: 10, cost: 3 })).status).toBe(201);
  const t = await create([
    { sku: SKU, quantity: 1 },
    { sku, quantity: 5 },
  ]);
  await act(t.id, 'approve');
  expectError(await act(t.id, 'receive'), 409, 'conflict/insufficient-stock');
  expect(
    await deps.db
      .collection('inventory_lot_costs')
      .countDocuments({ _id: { $regex: `^${tenantId}:trf:${t.id}:` } as never }),
  ).toBe(0);
});

test('20 concurrent receives: one 200, the rest 409, stock moved once', async () => {
  const before = await ledger().onHand(SKU, dest);
  const t = await inState('approved');
  const all = await Promise.all(Array.from({ length: 20 }, () => act(t.id, 'receive')));
  expect(all.filter((r) => r.status === 200)).toHaveLength(1);
  expect(all.filter((r) => r.status === 409)).toHaveLength(19);
  expect(await ledger().onHand(SKU, dest)).toBe(before + 2);
});

test('a retried receive with the same Idempotency-Key answers the first result; another key is refused', async () => {
  const before = await ledger().onHand(SKU, dest);
  const t = await inState('approved');
  const headers = { 'idempotency-key': `${P}-recv` };
  const first = await act(t.id, 'receive', { headers });
  const again = await act(t.id, 'receive', { headers });
  expect([first.status, again.status]).toEqual([200, 200]);
  expect(again.body).toEqual(first.body);
  expectError(
    await act(t.id, 'receive', { headers: { 'idempotency-key': `${P}-other` } }),
    409,
    'conflict/transfer-received',
  );
  expect(await ledger().onHand(SKU, dest)).toBe(before + 2);
});

test('a receive refused for want of stock is not remembered: its retry under the same key receives once stock is there', async () => {
  const sku = `${P}-SHORT`;
  expect((await api.post('/products', { sku, title: { value: sku }, price: 1 })).status).toBe(201);
  await ledger().apply({ sku, locationId: origin, delta: 1, reason: 'restock', actor: 'test' });
  const t = await create([{ sku, quantity: 3 }]);
  expect((await act(t.id, 'approve')).status).toBe(200);
  const headers = { 'idempotency-key': `${P}-short-recv` };
  expectError(await act(t.id, 'receive', { headers }), 409, 'conflict/insufficient-stock');
  await ledger().apply({ sku, locationId: origin, delta: 5, reason: 'restock', actor: 'test' });
  const retried = await act(t.id, 'receive', { headers });
  expect(retried.status).toBe(200);
  expect(retried.body.status).toBe('received');
  const again = await act(t.id, 'receive', { headers });
  expect(again.status).toBe(200);
  expect(again.body).toEqual(retried.body);
  expect([await ledger().onHand(sku, origin), await ledger().onHand(sku, dest)]).toEqual([3, 3]);
});

test('a create retried with the same Idempotency-Key makes one transfer and answers it again', async () => {
  const body = {
    originId: origin,
    destinationId: dest,
    productsList: [{ sku: SKU2, quantity: 3 }],
    notes: `${P}-once`,
  };
  const headers = { 'idempotency-key': `${P}-create` };
  const first = await api.post('/inventory/transfers', body, { headers });
  const again = await api.post('/inventory/transfers', body, { headers });
  expect([first.status, again.status]).toEqual([201, 201]);
  expect(again.body).toEqual(first.body);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expectError(
    await api.post('/inventory/transfers', { ...body, notes: 'another' }, { headers }),
    409,
    'idempotency-key-reused',
  );
  const stored = await new TenantDb(deps.db, tenantId).collection(transfers).countDocuments({ notes: `${P}-once` });
  expect(stored).toBe(1);
});

test('a create that died after storing its transfer is finished by the retry: the same transfer, one workflow', async () => {
  const service = new TransferService(deps.temporal, deps.config.taskQueue);
  const tenantDb = new TenantDb(deps.db, tenantId);
  const input = { originId: origin, destinationId: dest, productsList: [{ sku: SKU2, quantity: 1 }] };
  const id = `trf_${P.toLowerCase()}_retry`;
  const first = await service.create(tenantDb, 'test', input, id);
  const retry = await service.create(tenantDb, 'test', input, id);
  expect(retry._id).toBe(first._id);
  expect(await tenantDb.collection(transfers).countDocuments({ _id: id })).toBe(1);
  expect((await deps.temporal.workflow.getHandle(first.workflowId).describe()).status.name).toBe('RUNNING');
});

test('a location with a transfer not yet received cannot be deleted; once it is received, it can', async () => {
  const loc = await api.post('/locations', { name: `Gone ${P}`, type: 'location' });
  const t = await api.post('/inventory/transfers', {
    originId: origin,
    destinationId: loc.body.id,
    productsList: [{ sku: SKU2, quantity: 2 }],
  });
  expect(t.status).toBe(201);
  const refused = await api.delete(`/locations/${loc.body.id}`);
  expectError(refused, 400, "bad-request/can't-delete");
  expect(refused.body.message).toContain(t.body.id);
  expect((await act(t.body.id, 'approve')).status).toBe(200);
  expectError(await api.delete(`/locations/${loc.body.id}`), 400, "bad-request/can't-delete");
  expect((await act(t.body.id, 'cancel')).status).toBe(200);
  expect((await api.delete(`/locations/${loc.body.id}`)).status).toBe(200);
});

test('a receive into a location deleted meanwhile is refused: 404 not-found/location, nothing moves, still approved', async () => {
  const loc = await api.post('/locations', { name: `Raced ${P}`, type: 'location' });
  const t = await api.post('/inventory/transfers', {
    originId: origin,
    destinationId: loc.body.id,
    productsList: [{ sku: SKU2, quantity: 2 }],
  });
  expect((await act(t.body.id, 'approve')).status).toBe(200);
  const before = await ledger().onHand(SKU2, origin);
  // as if a delete had passed its check just before the transfer was made
  await new TenantDb(deps.db, tenantId).collection(locations).deleteById(loc.body.id);
  expectError(await act(t.body.id, 'receive'), 404, 'not-found/location');
  expect(await ledger().onHand(SKU2, origin)).toBe(before);
  expect(await ledger().onHand(SKU2, loc.body.id)).toBe(0);
  expect((await api.get(`/inventory/transfers/${t.body.id}`)).body.status).toBe('approved');
  expect((await act(t.body.id, 'cancel')).status).toBe(200);
});

test('receive without enough stock at the origin: 409 conflict/insufficient-stock, nothing moves, still approved', async () => {
  const sku = `${P}-LOW`;
  expect((await api.post('/products', { sku, title: { value: 'Low' }, price: 1 })).status).toBe(201);
  await ledger().apply({ sku, locationId: origin, delta: 1, reason: 'restock', actor: 'test' });
  const aBefore = await ledger().onHand(SKU, origin);
  const t = await create([
    { sku: SKU, quantity: 1 },
    { sku, quantity: 5 },
  ]);
  await act(t.id, 'approve');
  const refused = await act(t.id, 'receive');
  expectError(refused, 409, 'conflict/insufficient-stock');
  expect(refused.body.details).toEqual({ transferId: t.id, sku, locationId: origin, onHand: 1, wanted: 5 });
  expect(await ledger().onHand(SKU, origin)).toBe(aBefore); // the first line was put back
  expect(await ledger().onHand(sku, origin)).toBe(1);
  const after = (await api.get(`/inventory/transfers/${t.id}`)).body;
  expect(after.status).toBe('approved');
  expect(after.history.at(-1)).toMatchObject({
    action: 'receive',
    outcome: 'refused',
    state: 'approved',
    reason: 'insufficient stock',
  });
  // what was put back is not a receipt: no lot for it
  const lots = await api.get('/inventory/lots', { query: { sku: SKU, locationId: origin, limit: 100 } });
  expect(lots.status).toBe(200);
  expect(lots.body.lots.map((l: { reason: string }) => l.reason)).not.toContain('transfer_reversal');
  expect(
    await deps.db
      .collection('stock_movements')
      .countDocuments({ tenantId, reason: 'transfer_reversal', 'reference.id': t.id }),
  ).toBe(1);
  await ledger().apply({ sku, locationId: origin, delta: 10, reason: 'restock', actor: 'test' });
  expect((await act(t.id, 'receive')).status).toBe(200);
  expect(await ledger().onHand(sku, dest)).toBe(5);
});

test.each([
  [{}, 'bad-request/missing-body'],
  [{ destinationId: 'x', productsList: [{ sku: 'A', quantity: 1 }] }, 'bad-request/missing-origin'],
  [{ originId: 'x', productsList: [{ sku: 'A', quantity: 1 }] }, 'bad-request/missing-destination'],
  [{ originId: 'x', destinationId: 'y' }, 'bad-request/missing-products'],
  [{ originId: 'x', destinationId: 'y', productsList: [] }, 'bad-request/missing-products'],
  [{ originId: 'x', destinationId: 'y', productsList: [{ sku: 'A', quantity: 0 }] }, 'bad-request/invalid-items'],
  [{ originId: 'x', destinationId: 'x', productsList: [{ sku: 'A', quantity: 1 }] }, 'bad-request/same-location'],
])('create with %j → 400 %s, nothing stored', async (body, code) => {
  const before = await new TenantDb(deps.db, tenantId).collection(transfers).countDocuments({});
  expectError(await api.post('/inventory/transfers', body), 400, code);
  expect(await new TenantDb(deps.db, tenantId).collection(transfers).countDocuments({})).toBe(before);
});

const line = (sku: string, quantity: unknown = 1) => ({ sku, quantity });
const ITEMS = 'bad-request/invalid-items';
test.each<{ what: string; change: Record<string, unknown>; code: string; field: string }>([
  {
    what: 'a quantity above 1,000,000',
    change: { productsList: [line('A', 1_000_001)] },
    code: ITEMS,
    field: 'productsList.0',
  },
  { what: 'a fractional quantity', change: { productsList: [line('A', 1.5)] }, code: ITEMS, field: 'productsList.0' },
  { what: 'a blank SKU', change: { productsList: [line('A'), line('  ')] }, code: ITEMS, field: 'productsList.1' },
  { what: 'a line that is not an object', change: { productsList: ['A'] }, code: ITEMS, field: 'productsList.0' },
  { what: 'a line without quantity', change: { productsList: [{ sku: 'A' }] }, code: ITEMS, field: 'productsList.0' },
  { what: 'an empty originId', change: { originId: '' }, code: 'bad-request/missing-origin', field: 'originId' },
  {
    what: 'a numeric destinationId',
    change: { destinationId: 7 },
    code: 'bad-request/missing-destination',
    field: 'destinationId',
  },
  { what: 'an unknown field', change: { color: 'red' }, code: 'bad-request', field: 'color' },
  { what: 'notes over 2,000 characters', change: { notes: 'n'.repeat(2001) }, code: 'bad-request', field: 'notes' },
  {
    what: 'more than 500 lines',
    change: { productsList: Array.from({ length: 501 }, (_, i) => line(`S${i}`)) },
    code: 'bad-request',
    field: 'productsList',
  },
])('create with $what → 400 $code naming $field, nothing stored', async ({ change, code, field }) => {
  const before = await new TenantDb(deps.db, tenantId).collection(transfers).countDocuments({});
  const res = await api.post('/inventory/transfers', {
    originId: 'x',
    destinationId: 'y',
    productsList: [line('A')],
    ...change,
  });
  expectError(res, 400, code);
  // the field, or the part of it that failed (productsList.0.quantity)
  expect((res.body.field as string).split('.').slice(0, field.split('.').length).join('.')).toBe(field);
  expect(await new TenantDb(deps.db, tenantId).collection(transfers).countDocuments({})).toBe(before);
});

test('create with no body or a body that is not an object → 400 bad-request/missing-body', async () => {
  expectError(await api.post('/inventory/transfers'), 400, 'bad-request/missing-body');
  expectError(await api.post('/inventory/transfers', []), 400, 'bad-request/missing-body');
});

test('the OpenAPI document shows the limits the create enforces', async () => {
  const doc = (await api.get('/openapi.json')).body;
  const schema = doc.paths['/inventory/transfers'].post.requestBody.content['application/json'].schema;
  expect(schema).toMatchObject({ additionalProperties: false, minProperties: 1 });
  expect(schema.properties.productsList).toMatchObject({ minItems: 1, maxItems: 500 });
  expect(schema.properties.productsList.items.properties.quantity).toMatchObject({ minimum: 1, maximum: 1_000_000 });
  expect(schema.properties.notes).toMatchObject({ maxLength: 2000 });
});

test('a quantity of exactly 1,000,000 is accepted', async () => {
  const t = await create([{ sku: SKU, quantity: 1_000_000 }]);
  expect(t.status).toBe('pending');
  expect((await act(t.id, 'cancel')).status).toBe(200);
});

test('an action with a reason over 1,000 characters or an unknown field → 400 bad-request, nothing recorded', async () => {
  const t = await create();
  const long = await act(t.id, 'cancel', { body: { reason: 'r'.repeat(1001) } });
  expectError(long, 400, 'bad-request');
  expect(long.body.field).toBe('reason');
  expectError(await act(t.id, 'approve', { body: { note: 'x' } }), 400, 'bad-request');
  const after = (await api.get(`/inventory/transfers/${t.id}`)).body;
  expect(after.status).toBe('pending');
  expect(after.history).toHaveLength(1);
});

test('create with an unknown location → 404 not-found/location; unknown SKU → 404 not-found', async () => {
  expectError(
    await api.post('/inventory/transfers', {
      originId: origin,
      destinationId: 'loc_nope',
      productsList: [{ sku: SKU, quantity: 1 }],
    }),
    404,
    'not-found/location',
  );
  expectError(
    await api.post('/inventory/transfers', {
      originId: origin,
      destinationId: dest,
      productsList: [{ sku: `${P}-NOPE`, quantity: 1 }],
    }),
    404,
    'not-found',
  );
});

test("another tenant's transfer is 404 on every route", async () => {
  const t = await create();
  const other = api.as((await deps.tenantWithKey()).key);
  expectError(await other.get(`/inventory/transfers/${t.id}`), 404, 'not-found');
  for (const action of ['approve', 'receive', 'cancel'])
    expectError(await act(t.id, action, { as: other }), 404, 'not-found');
  expect((await api.get(`/inventory/transfers/${t.id}`)).body.status).toBe('pending');
});

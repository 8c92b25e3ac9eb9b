import { ApiClient, type HttpResult } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';
import { TenantDb } from '../../shared/db/tenant-db';
import { AppError } from '../../shared/errors/catalog';
import { StockStore } from '../../shared/materials/stock';
import { decodeStock } from '../../shared/materials/stock-codec';
import type { StockDoc } from '../../shared/materials/collections';

/**
 * Stock of materials and supplies through HTTP on the real API: receipts (units, rounding,
 * exactness), lots, transfers (all or nothing, the order lots leave in, idempotency), costing
 * worked examples, alerts, the ledger, and concurrent receipts and transfers on one material.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let keyId: string;
/** The tenant's default location, and a second one. */
let A: string;
let B: string;
const P = Date.now().toString(36).toUpperCase();
let n = 0;
const DAY = 86_400_000;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  tenantId = tenant.tenantId;
  keyId = tenant.keyId;
  api = new ApiClient(tenant.key);
  A = systemLocationId(tenantId);
  const second = await api.post('/locations', { name: `Store ${P}`, type: 'location' });
  expect(second.status).toBe(201);
  B = second.body.id;
});
afterAll(() => deps.close());

type Body = Record<string, unknown>;
type Lot = { lotNumber: string; quantity: number; costPerUnit: number; status: string; [k: string]: unknown };

/** A new material counted in kg (precision 3) with `extra` fields; its SKU. */
async function material(tag: string, extra: Body = {}): Promise<string> {
  const sku = `${P}-${tag}-${++n}`.toUpperCase();
  const res = await api.post('/products/materials', {
    sku,
    title: `Material ${tag}`,
    baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
    ...extra,
  });
  expect(res.status).toBe(201);
  return sku;
}

async function supply(tag: string, extra: Body = {}): Promise<string> {
  const sku = `${P}-${tag}-${++n}`.toUpperCase();
  const res = await api.post('/products/supplies', { sku, title: `Supply ${tag}`, ...extra });
  expect(res.status).toBe(201);
  return sku;
}

const withKey = (key?: string) => (key ? { headers: { 'idempotency-key': key } } : undefined);
const receive = (sku: string, body: unknown, location = A, key?: string) =>
  api.post(`/products/materials/${sku}/stock/${location}`, body, withKey(key));
const transfer = (body: Body, key?: string) => api.post('/products/materials/transfer', body, withKey(key));
const move = (sku: string, quantity: number, from = A, to = B) =>
  transfer({ materialSku: sku, fromLocationId: from, toLocationId: to, quantity });
const at = (sku: string, location = A) => api.get(`/products/materials/${sku}/stock/${location}`);
const total = (sku: string) => api.get(`/products/materials/${sku}/stock`);
const record = (sku: string) => api.get(`/products/materials/${sku}`);
const stored = (sku: string) => deps.db.collection('material_stock').findOne({ _id: `${tenantId}:${sku}` } as never);
const lotsOf = (res: HttpResult) =>
  (res.body.lots as Lot[]).map((l) => ({ lotNumber: l.lotNumber, quantity: l.quantity }));

async function ok(res: Promise<HttpResult> | HttpResult, status = 200): Promise<HttpResult> {
  const r = await res;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text}`);
  return r;
}

/** Alerts of one SKU from the list (every page the tenant has). */
async function alertsOf(sku: string, status: 'open' | 'closed' | 'all' = 'all', kind = 'materials') {
  const res = await ok(api.get(`/products/${kind}/alerts`, { query: { status, limit: 200 } }));
  expect(res.body.hasMore).toBe(false);
  return (res.body.data as { sku: string; status: string; locationId: string }[]).filter((a) => a.sku === sku);
}

describe('receipts', () => {
  test('a receipt answers 200 with the location record: quantity, available, lots, valuation, limits', async () => {
    const sku = await material('rcv', { initialCost: 1.5 });
    const res = await ok(receive(sku.toLowerCase(), { quantity: 12.5, reason: 'delivery 1' }));
    expect(res.body).toMatchObject({
      tenantId,
      materialSku: sku,
      locationId: A,
      quantity: 12.5,
      unit: 'kg',
      reservedQty: 0,
      committedQty: 0,
      available: 12.5,
      lotTrackingEnabled: false,
      valuation: { method: 'average', totalValue: 18.75, unitCost: 1.5, currency: 'USD' },
      minStock: 0,
      reorderPoint: 0,
      alert: null,
    });
    expect(res.body.lots).toEqual([
      expect.objectContaining({ quantity: 12.5, costPerUnit: 1.5, currency: 'USD', status: 'available' }),
    ]);
    expect(res.body.lots[0].lotNumber).toMatch(/^RCV-/);
    // a second request sees the same record
    expect((await ok(at(sku))).body).toMatchObject({ quantity: 12.5, available: 12.5 });
  });

  describe('a quantity in an alternative unit is converted and rounded to the base precision (3)', () => {
    const units = [
      { code: 'bag', name: 'Bag of 25 kg', conversionFactor: 25 },
      { code: 'g', name: 'Gram', conversionFactor: 0.001 },
    ];
    test.each([
      [1, 'bag', 25],
      [1, 'BAG', 25],
      [0.5, 'bag', 12.5],
      [250, 'g', 0.25],
      [0.5, 'g', 0.001],
      [1234.5, 'g', 1.235],
      [2, 'kg', 2],
    ])('%s %s → %s kg', async (quantity, unit, kg) => {
      const sku = await material('unit', { alternativeUnits: units });
      const res = await ok(receive(sku, { quantity, unit }));
      expect(res.body.quantity).toBe(kg);
      const ledger = await ok(api.get(`/products/materials/${sku}/movements`));
      expect(ledger.body.data[0]).toMatchObject({ quantity: kg, unit: 'kg', requested: { quantity, unit } });
    });

    test('0.4 g is 0.0004 kg, which rounds to 0 at precision 3: 400 bad-request parameter quantity', async () => {
      const sku = await material('unit0', { alternativeUnits: units });
      const res = await receive(sku, { quantity: 0.4, unit: 'g' });
      expectError(res, 400, 'bad-request');
      expect(res.body.parameter).toBe('quantity');
      expectError(await at(sku), 404, 'not-found');
    });
  });

  test.each([
    ['0', { quantity: 0 }],
    ['-1', { quantity: -1 }],
    ['"x"', { quantity: 'x' }],
    ['missing', { reason: 'no quantity' }],
  ])('quantity %s → 400 bad-request with parameter quantity, nothing recorded', async (_what, body) => {
    const sku = await material('badq');
    const res = await receive(sku, body);
    expectError(res, 400, 'bad-request');
    expect(res.body.parameter).toBe('quantity');
    expectError(await at(sku), 404, 'not-found');
    expect(await stored(sku)).toBeNull();
  });

  test('an unknown unit → 400 validation-error on field unit naming it', async () => {
    const sku = await material('badunit', { alternativeUnits: [{ code: 'bag', conversionFactor: 25 }] });
    const res = await receive(sku, { quantity: 1, unit: 'crate' });
    expectError(res, 400, 'validation-error');
    expect(res.body.field).toBe('unit');
    expect(res.body.message).toContain('crate');
    expect(await stored(sku)).toBeNull();
  });

  test('ten receipts of 0.1 kg make exactly 1 kg: stored as the integer 1000 at precision 3', async () => {
    const sku = await material('exact');
    for (let i = 0; i < 10; i++) await ok(receive(sku, { quantity: 0.1 }));
    const loc = await ok(at(sku));
    expect(loc.body.quantity).toBe(1);
    expect(loc.body.available).toBe(1);
    // same cost each time: one cost layer
    expect(lotsOf(loc)).toEqual([{ lotNumber: expect.stringMatching(/^RCV-/), quantity: 1 }]);
    expect((await ok(total(sku))).body).toMatchObject({ totalQuantity: 1, totalAvailable: 1 });
    const doc = (await stored(sku)) as any;
    expect(doc.precision).toBe(3);
    expect(doc.locations).toHaveLength(1);
    expect(doc.locations[0].quantity).toBe(1000);
    expect(doc.locations[0].lots.map((l: { quantity: number }) => l.quantity)).toEqual([1000]);
  });

  test('0.1 kg + 0.2 kg is exactly 0.3 kg (no floating-point drift)', async () => {
    const sku = await material('exact2');
    await ok(receive(sku, { quantity: 0.1 }));
    const res = await ok(receive(sku, { quantity: 0.2 }));
    expect(res.body.quantity).toBe(0.3);
    expect(((await stored(sku)) as any).locations[0].quantity).toBe(300);
  });

  test('minStock and reorderPoint sent with a receipt apply only when it creates the location record', async () => {
    const sku = await material('limits', {
      stockAlerts: { minStock: 1, reorderPoint: 2, reorderQuantity: 5, alertEnabled: false },
    });
    const first = await ok(receive(sku, { quantity: 5, minStock: 3, reorderPoint: 7 }));
    expect(first.body).toMatchObject({ minStock: 3, reorderPoint: 7 });
    const second = await ok(receive(sku, { quantity: 5, minStock: 99, reorderPoint: 99 }));
    expect(second.body).toMatchObject({ quantity: 10, minStock: 3, reorderPoint: 7 });
    expect((await ok(at(sku))).body).toMatchObject({ minStock: 3, reorderPoint: 7 });
    // a location created without them takes the material's stockAlerts
    const other = await ok(receive(sku, { quantity: 1 }, B));
    expect(other.body).toMatchObject({ minStock: 1, reorderPoint: 2 });
  });

  test('an unknown location → 404 not-found; an unknown SKU → 404 not-found; nothing recorded', async () => {
    const sku = await material('404');
    expectError(await receive(sku, { quantity: 1 }, 'loc_nowhere'), 404, 'not-found');
    expect(await stored(sku)).toBeNull();
    expectError(await receive(`${P}-NOPE`, { quantity: 1 }), 404, 'not-found');
    expectError(await at(`${P}-NOPE`), 404, 'not-found');
    expectError(await total(`${P}-NOPE`), 404, 'not-found');
  });

  test('GET stock at a location without a record → 404 not-found; the total without stock is zeros', async () => {
    const sku = await material('empty');
    expectError(await at(sku), 404, 'not-found');
    const empty = await ok(total(sku));
    expect(empty.body).toMatchObject({
      sku,
      unit: 'kg',
      totalQuantity: 0,
      totalReserved: 0,
      totalCommitted: 0,
      totalAvailable: 0,
      byLocation: [],
    });
    await ok(receive(sku, { quantity: 2 }));
    expectError(await at(sku, B), 404, 'not-found');
    expect((await ok(total(sku))).body).toMatchObject({
      totalQuantity: 2,
      byLocation: [{ locationId: A, quantity: 2, available: 2 }],
    });
  });

  test('a receipt retried with the same Idempotency-Key receives nothing again', async () => {
    const sku = await material('idem-rcv');
    const key = `${P}-rcv-1`;
    const a = await ok(receive(sku, { quantity: 3 }, A, key));
    const b = await ok(receive(sku, { quantity: 3 }, A, key));
    expect([a.body.quantity, b.body.quantity]).toEqual([3, 3]);
    expect((await ok(at(sku))).body.quantity).toBe(3);
    expect((await ok(api.get(`/products/materials/${sku}/movements`))).body.total).toBe(1);
  });

  test('an Idempotency-Key sent again for another location answers the first receipt, receiving nothing at B', async () => {
    const sku = await material('idem-rcv-elsewhere');
    const key = `${P}-rcv-2`;
    await ok(receive(sku, { quantity: 3 }, A, key));
    const again = await ok(receive(sku, { quantity: 5 }, B, key));
    expect(again.body).toMatchObject({ locationId: A, quantity: 3 });
    expect((await at(sku, B)).status).toBe(404);
    expect((await ok(total(sku))).body.totalQuantity).toBe(3);
  });
});

describe('the journal as stored', () => {
  test('is one text; a document written before (an array of entries) still replays a retry, and is rewritten as text', async () => {
    const sku = await material('journal-text');
    await ok(receive(sku, { quantity: 3 }, A, `${P}-jt-1`));
    await ok(receive(sku, { quantity: 2 }, A, `${P}-jt-2`));
    const now = (await stored(sku)) as unknown as { journal: unknown; version: number };
    expect(typeof now.journal).toBe('string');
    const entries = decodeStock(now as never as StockDoc).journal;
    expect(entries.map((m) => m.idempotencyKey)).toEqual([`${P}-jt-1`, `${P}-jt-2`]);
    expect(entries[0].at).toBeInstanceOf(Date);
    // as a document written before the journal became text: its entries as documents (and a new
    // version, so that the API reads it instead of starting from the copy it wrote)
    await deps.db
      .collection('material_stock')
      .updateOne({ _id: `${tenantId}:${sku}` } as never, { $set: { journal: entries, version: now.version + 1 } });
    const again = await ok(receive(sku, { quantity: 3 }, A, `${P}-jt-1`));
    expect(again.body.quantity).toBe(5);
    await ok(receive(sku, { quantity: 1 }, A, `${P}-jt-3`));
    expect((await ok(at(sku))).body.quantity).toBe(6);
    const after = (await stored(sku)) as unknown as { journal: unknown };
    expect(typeof after.journal).toBe('string');
    const ledger = await ok(api.get(`/products/materials/${sku}/movements`));
    expect(ledger.body.total).toBe(3);
    expect((ledger.body.data as { quantity: number }[]).map((m) => m.quantity)).toEqual([1, 2, 3]);
  });
});

describe('lots', () => {
  test('a lot-tracked material needs lot.lotNumber: 400 validation-error on lot.lotNumber', async () => {
    const sku = await material('lotreq', { lotTrackingEnabled: true });
    for (const body of [{ quantity: 1 }, { quantity: 1, lot: { costPerUnit: 2 } }]) {
      const res = await receive(sku, body);
      expectError(res, 400, 'validation-error');
      expect(res.body.field).toBe('lot.lotNumber');
    }
    expect(await stored(sku)).toBeNull();
  });

  test('a receipt into the same lot number with the same cost and expiry merges into one lot', async () => {
    const sku = await material('merge', { lotTrackingEnabled: true });
    const expirationDate = new Date(Date.now() + 30 * DAY).toISOString();
    const lot = { lotNumber: 'L-100', costPerUnit: 2.5, expirationDate };
    await ok(receive(sku, { quantity: 4, lot }));
    const res = await ok(receive(sku, { quantity: 6, lot: { ...lot, currency: 'USD' } }));
    expect(res.body.quantity).toBe(10);
    expect(res.body.lots).toEqual([
      expect.objectContaining({ lotNumber: 'L-100', quantity: 10, costPerUnit: 2.5, expirationDate }),
    ]);
  });

  test.each([
    ['another cost', { costPerUnit: 3 }],
    ['another expiry', { expirationDate: new Date(Date.now() + 60 * DAY).toISOString() }],
  ])('the same lot number with %s → 400 validation-error on lot.lotNumber, nothing changed', async (_w, change) => {
    const sku = await material('clash', { lotTrackingEnabled: true });
    const lot = { lotNumber: 'L-7', costPerUnit: 2, expirationDate: new Date(Date.now() + 30 * DAY).toISOString() };
    await ok(receive(sku, { quantity: 4, lot }));
    const before = await stored(sku);
    const res = await receive(sku, { quantity: 1, lot: { ...lot, ...change } });
    expectError(res, 400, 'validation-error');
    expect(res.body.field).toBe('lot.lotNumber');
    expect(await stored(sku)).toEqual(before);
    expect(lotsOf(await ok(at(sku)))).toEqual([{ lotNumber: 'L-7', quantity: 4 }]);
    // the lot number is the material's, at any location
    expectError(await receive(sku, { quantity: 1, lot: { ...lot, ...change } }, B), 400, 'validation-error');
    expectError(await at(sku, B), 404, 'not-found');
  });

  test("more of a known lot sent without cost or expiry takes the lot's terms and merges", async () => {
    const sku = await material('known', { lotTrackingEnabled: true, costingMethod: 'average' });
    const expirationDate = new Date(Date.now() + 30 * DAY).toISOString();
    await ok(receive(sku, { quantity: 4, lot: { lotNumber: 'K1', costPerUnit: 2, expirationDate } }));
    // another lot moves the current cost to 3: K1 keeps its own cost, not the current one
    await ok(receive(sku, { quantity: 4, lot: { lotNumber: 'K2', costPerUnit: 4 } }));
    const res = await ok(receive(sku, { quantity: 1, lot: { lotNumber: 'K1' } }));
    expect(res.body.lots).toEqual([
      expect.objectContaining({ lotNumber: 'K1', quantity: 5, costPerUnit: 2, expirationDate }),
      expect.objectContaining({ lotNumber: 'K2', quantity: 4, costPerUnit: 4 }),
    ]);
  });

  test('shelfLifeDays 5, lot-tracked: a second receipt into the same lot keeps its first expiry and merges', async () => {
    const sku = await material('shelf-lot', {
      lotTrackingEnabled: true,
      expiration: { expires: true, shelfLifeDays: 5 },
    });
    const first = await ok(receive(sku, { quantity: 1, lot: { lotNumber: 'S1', costPerUnit: 1 } }));
    const second = await ok(receive(sku, { quantity: 2, lot: { lotNumber: 'S1', costPerUnit: 1 } }));
    expect(second.body.lots).toEqual([
      expect.objectContaining({ lotNumber: 'S1', quantity: 3, expirationDate: first.body.lots[0].expirationDate }),
    ]);
  });

  test('a lot currency other than the material currency → 400 validation-error', async () => {
    const sku = await material('cur', { lotTrackingEnabled: true, currency: 'USD' });
    const res = await receive(sku, { quantity: 1, lot: { lotNumber: 'L-1', costPerUnit: 1, currency: 'EUR' } });
    expectError(res, 400, 'validation-error');
    expect(res.body.message).toContain('EUR');
    expect(await stored(sku)).toBeNull();
  });

  test('a lot past its expirationDate shows status expired and is not in available', async () => {
    const sku = await material('expired', { lotTrackingEnabled: true });
    const past = new Date(Date.now() - DAY).toISOString();
    await ok(receive(sku, { quantity: 10, lot: { lotNumber: 'OLD', costPerUnit: 1, expirationDate: past } }));
    const res = await ok(receive(sku, { quantity: 5, lot: { lotNumber: 'NEW', costPerUnit: 1 } }));
    expect(res.body).toMatchObject({ quantity: 15, available: 5 });
    const status = Object.fromEntries((res.body.lots as Lot[]).map((l) => [l.lotNumber, l.status]));
    expect(status).toEqual({ OLD: 'expired', NEW: 'available' });
    expect((await ok(total(sku))).body).toMatchObject({ totalQuantity: 15, totalAvailable: 5 });
  });

  test('a lot emptied by transfers shows status depleted at the origin', async () => {
    const sku = await material('depleted', { lotTrackingEnabled: true, stockAlerts: alertsOff });
    await ok(receive(sku, { quantity: 5, lot: { lotNumber: 'D1', costPerUnit: 1 } }));
    await ok(move(sku, 2));
    await ok(move(sku, 3));
    const origin = await ok(at(sku));
    expect(origin.body).toMatchObject({ quantity: 0, available: 0 });
    expect(origin.body.lots).toEqual([expect.objectContaining({ lotNumber: 'D1', quantity: 0, status: 'depleted' })]);
    expect((await ok(at(sku, B))).body.lots).toEqual([
      expect.objectContaining({ lotNumber: 'D1', quantity: 5, status: 'available' }),
    ]);
  });

  test('shelfLifeDays 7: a lot without expirationDate expires receivedDate + 7 days', async () => {
    const sku = await material('shelf', { expiration: { expires: true, shelfLifeDays: 7 } });
    const res = await ok(receive(sku, { quantity: 1 }));
    const [lot] = res.body.lots as { receivedDate: string; expirationDate: string; status: string }[];
    expect(Date.parse(lot.expirationDate) - Date.parse(lot.receivedDate)).toBe(7 * DAY);
    expect(lot.status).toBe('available');
    // an explicit expirationDate wins
    const explicit = new Date(Date.now() + 2 * DAY).toISOString();
    const lotted = await ok(receive(sku, { quantity: 1, lot: { lotNumber: 'X', expirationDate: explicit } }));
    expect((lotted.body.lots as Lot[]).find((l) => l.lotNumber === 'X')?.expirationDate).toBe(explicit);
  });
});

const alertsOff = { minStock: 0, reorderPoint: 0, reorderQuantity: 0, alertEnabled: false };

/** Receives lots L1, L2, L3… of 10 kg each, in that order, with cost i and the expiry given. */
async function lotsReceived(sku: string, expiries: (number | null)[] = [null, null, null]): Promise<void> {
  for (const [i, days] of expiries.entries())
    await ok(
      receive(sku, {
        quantity: 10,
        lot: {
          lotNumber: `L${i + 1}`,
          costPerUnit: i + 1,
          ...(days !== null ? { expirationDate: new Date(Date.now() + days * DAY).toISOString() } : {}),
        },
      }),
    );
}

describe('transfers', () => {
  test('not enough available → 400 transfer-failed with available, requested, shortBy; nothing moves', async () => {
    const sku = await material('short');
    await ok(receive(sku, { quantity: 5 }));
    const before = await stored(sku);
    const res = await move(sku, 8);
    expectError(res, 400, 'transfer-failed');
    expect(res.body.details).toEqual({ sku, fromLocationId: A, available: 5, requested: 8, shortBy: 3, unit: 'kg' });
    expect(await stored(sku)).toEqual(before);
    expect((await ok(at(sku))).body.quantity).toBe(5);
    expectError(await at(sku, B), 404, 'not-found');
    // from a location with no record at all: available 0
    const none = await move(sku, 1, B, A);
    expectError(none, 400, 'transfer-failed');
    expect(none.body.details).toMatchObject({ available: 0, requested: 1, shortBy: 1 });
  });

  test('a transfer answers the movement, moves the quantity and keeps the total', async () => {
    const sku = await material('move', { alternativeUnits: [{ code: 'bag', conversionFactor: 25 }] });
    await ok(receive(sku, { quantity: 2, unit: 'bag' }));
    const res = await ok(
      transfer({ materialSku: sku.toLowerCase(), fromLocationId: A, toLocationId: B, quantity: 1, unit: 'bag' }),
    );
    expect(res.body).toMatchObject({
      success: true,
      replayed: false,
      materialSku: sku,
      fromLocationId: A,
      toLocationId: B,
      quantity: 25,
      unit: 'kg',
      lots: [{ lotNumber: expect.stringMatching(/^RCV-/), quantity: 25, costPerUnit: 0 }],
    });
    expect(res.body.movementId).toMatch(/^mmv_/);
    expect((await ok(at(sku))).body.quantity).toBe(25);
    expect((await ok(at(sku, B))).body.quantity).toBe(25);
    expect((await ok(total(sku))).body.totalQuantity).toBe(50);
  });

  test.each([
    ['fifo', ['L1', 'L2']],
    ['average', ['L1', 'L2']],
    ['last_purchase', ['L1', 'L2']],
    ['lifo', ['L3', 'L2']],
  ])('%s: 15 kg out of lots L1, L2, L3 (10 kg each, received in that order) leave as %j', async (method, order) => {
    const sku = await material(`order-${method}`, { lotTrackingEnabled: true, costingMethod: method });
    await lotsReceived(sku);
    const res = await ok(move(sku, 15));
    expect(res.body.lots.map((l: Lot) => [l.lotNumber, l.quantity])).toEqual([
      [order[0], 10],
      [order[1], 5],
    ]);
    const left = Object.fromEntries(lotsOf(await ok(at(sku))).map((l) => [l.lotNumber, l.quantity]));
    expect(left[order[0]]).toBe(0);
    expect(left[order[1]]).toBe(5);
  });

  test('fefo: an expiring material sends the earliest expiry first, lots without expiry last', async () => {
    const sku = await material('fefo', {
      lotTrackingEnabled: true,
      costingMethod: 'fifo',
      expiration: { expires: true, expirationPolicy: 'fefo' },
    });
    // L1 +30 days, L2 +10 days, L3 no expiry, L4 +20 days
    await lotsReceived(sku, [30, 10, null, 20]);
    const res = await ok(move(sku, 35));
    expect(res.body.lots.map((l: Lot) => [l.lotNumber, l.quantity])).toEqual([
      ['L2', 10],
      ['L4', 10],
      ['L1', 10],
      ['L3', 5],
    ]);
  });

  test('costing_order policy: an expiring material sends lots in its costing order (fifo: oldest first)', async () => {
    const sku = await material('costord', {
      lotTrackingEnabled: true,
      costingMethod: 'fifo',
      expiration: { expires: true, expirationPolicy: 'costing_order' },
    });
    await lotsReceived(sku, [30, 10, 20]);
    const res = await ok(move(sku, 15));
    expect(res.body.lots.map((l: Lot) => [l.lotNumber, l.quantity])).toEqual([
      ['L1', 10],
      ['L2', 5],
    ]);
  });

  test('expired lots never leave: only the live 5 kg are available to a transfer', async () => {
    const sku = await material('noexp', { lotTrackingEnabled: true, costingMethod: 'fifo' });
    const past = new Date(Date.now() - DAY).toISOString();
    await ok(receive(sku, { quantity: 10, lot: { lotNumber: 'GONE', costPerUnit: 1, expirationDate: past } }));
    await ok(receive(sku, { quantity: 5, lot: { lotNumber: 'LIVE', costPerUnit: 1 } }));
    const refused = await move(sku, 6);
    expectError(refused, 400, 'transfer-failed');
    expect(refused.body.details).toMatchObject({ available: 5, requested: 6, shortBy: 1 });
    const res = await ok(move(sku, 5));
    expect(res.body.lots.map((l: Lot) => l.lotNumber)).toEqual(['LIVE']);
    expect(lotsOf(await ok(at(sku)))).toEqual(
      expect.arrayContaining([
        { lotNumber: 'GONE', quantity: 10 },
        { lotNumber: 'LIVE', quantity: 0 },
      ]),
    );
  });

  test('lots arrive at the destination with their lotNumber, cost, currency, receivedDate and expiry', async () => {
    const sku = await material('arrive', { lotTrackingEnabled: true, costingMethod: 'fifo' });
    await lotsReceived(sku, [30, 10]);
    const origin = (await ok(at(sku))).body.lots as Lot[];
    await ok(move(sku, 12));
    const there = (await ok(at(sku, B))).body.lots as Lot[];
    expect(there).toEqual([
      { ...origin.find((l) => l.lotNumber === 'L1'), quantity: 10 },
      { ...origin.find((l) => l.lotNumber === 'L2'), quantity: 2 },
    ]);
    // a second transfer merges into the same lot there
    await ok(move(sku, 3));
    expect(lotsOf(await ok(at(sku, B)))).toEqual([
      { lotNumber: 'L1', quantity: 10 },
      { lotNumber: 'L2', quantity: 5 },
    ]);
  });

  test('a transfer retried with the same Idempotency-Key answers the same movementId, replayed, moving once', async () => {
    const sku = await material('idem', { stockAlerts: alertsOff });
    await ok(receive(sku, { quantity: 10 }));
    const key = `${P}-tr-1`;
    const body = { materialSku: sku, fromLocationId: A, toLocationId: B, quantity: 4 };
    const first = await ok(transfer(body, key));
    const again = await ok(transfer(body, key));
    expect(first.body.replayed).toBe(false);
    expect(again.body).toEqual({ ...first.body, replayed: true });
    expect((await ok(at(sku))).body.quantity).toBe(6);
    expect((await ok(at(sku, B))).body.quantity).toBe(4);
    // another key is another movement
    const other = await ok(transfer(body, `${P}-tr-2`));
    expect(other.body.movementId).not.toBe(first.body.movementId);
    expect((await ok(at(sku, B))).body.quantity).toBe(8);
    const ledger = await ok(api.get(`/products/materials/${sku}/movements`));
    expect(ledger.body.total).toBe(3);
  });

  test('the same location as origin and destination → 400 validation-error, nothing moves', async () => {
    const sku = await material('same');
    await ok(receive(sku, { quantity: 1 }));
    const before = await stored(sku);
    expectError(
      await transfer({ materialSku: sku, fromLocationId: A, toLocationId: A, quantity: 1 }),
      400,
      'validation-error',
    );
    expect(await stored(sku)).toEqual(before);
  });

  test('an unknown location or SKU → 404 not-found; a bad quantity → 400', async () => {
    const sku = await material('t404');
    await ok(receive(sku, { quantity: 1 }));
    expectError(await move(sku, 1, A, 'loc_nowhere'), 404, 'not-found');
    expectError(await move(sku, 1, 'loc_nowhere', A), 404, 'not-found');
    expectError(await move(`${P}-NOPE`, 1), 404, 'not-found');
    expect((await move(sku, 0)).status).toBe(400);
    expect((await ok(at(sku))).body.quantity).toBe(1);
  });

  test('supplies: receipt and transfer with supplySku; records without lots or valuation', async () => {
    const sku = await supply('sup', { consumptionUnit: 'pza', unitPrecision: 0 });
    const rcv = await ok(api.post(`/products/supplies/${sku}/stock/${A}`, { quantity: 100 }));
    expect(rcv.body).toMatchObject({ supplySku: sku, locationId: A, quantity: 100, unit: 'pza', available: 100 });
    expect(rcv.body).not.toHaveProperty('lots');
    expect(rcv.body).not.toHaveProperty('valuation');
    const res = await ok(
      api.post('/products/supplies/transfer', { supplySku: sku, fromLocationId: A, toLocationId: B, quantity: 30 }),
    );
    expect(res.body).toMatchObject({ success: true, supplySku: sku, quantity: 30, unit: 'pza', replayed: false });
    expect(res.body).not.toHaveProperty('lots');
    expect((await ok(api.get(`/products/supplies/${sku}/stock/${B}`))).body.quantity).toBe(30);
    const sum = await ok(api.get(`/products/supplies/${sku}/stock`));
    expect(sum.body).toMatchObject({ totalQuantity: 100, totalAvailable: 100 });
    expect(sum.body).not.toHaveProperty('totalValue');
    const short = await api.post('/products/supplies/transfer', {
      supplySku: sku,
      fromLocationId: A,
      toLocationId: B,
      quantity: 71,
    });
    expectError(short, 400, 'transfer-failed');
    expect(short.body.details).toMatchObject({ available: 70, requested: 71, shortBy: 1, unit: 'pza' });
    // the material route does not know a supply
    expectError(await move(sku, 1), 404, 'not-found');
  });
});

describe('costing worked examples (receipts 10 kg @ 2.00, then 10 kg @ 4.00)', () => {
  async function twoReceipts(method: string): Promise<string> {
    const sku = await material(`cost-${method}`, { costingMethod: method, initialCost: 1, stockAlerts: alertsOff });
    await ok(receive(sku, { quantity: 10, lot: { costPerUnit: 2 } }));
    await ok(receive(sku, { quantity: 10, lot: { costPerUnit: 4 } }));
    return sku;
  }

  test.each([
    ['fifo', 2],
    ['lifo', 4],
    ['average', 3],
    ['last_purchase', 4],
  ])('%s: currentCost is %s', async (method, cost) => {
    const sku = await twoReceipts(method);
    const res = await ok(record(sku));
    expect(res.body.costing).toMatchObject({
      method,
      currentCost: { value: cost, currency: 'USD', perUnit: 'kg' },
    });
  });

  test('average, then 5 kg @ 1.00: (20 + 40 + 5) / 25 = 2.6; valuation 25 × 2.6 = 65', async () => {
    const sku = await twoReceipts('average');
    const res = await ok(receive(sku, { quantity: 5, lot: { costPerUnit: 1 } }));
    expect(res.body.valuation).toEqual({ method: 'average', totalValue: 65, unitCost: 2.6, currency: 'USD' });
    expect((await ok(record(sku))).body.costing.currentCost.value).toBe(2.6);
    expect((await ok(total(sku))).body).toMatchObject({ totalQuantity: 25, totalValue: 65, currency: 'USD' });
  });

  test('costHistory: the initial cost (quantity 0), then one entry per receipt with its cost and quantity', async () => {
    const sku = await twoReceipts('fifo');
    const history = (await ok(record(sku))).body.costing.costHistory;
    expect(history).toEqual([
      expect.objectContaining({ cost: 1, currency: 'USD', quantity: 0 }),
      expect.objectContaining({ cost: 2, currency: 'USD', quantity: 10 }),
      expect.objectContaining({ cost: 4, currency: 'USD', quantity: 10 }),
    ]);
    await ok(receive(sku, { quantity: 250, unit: 'kg', lot: { costPerUnit: 3 } }));
    expect((await ok(record(sku))).body.costing.costHistory).toHaveLength(4);
  });

  test('no receipt yet: currentCost is the initial cost', async () => {
    const sku = await material('cost-none', { costingMethod: 'fifo', initialCost: 7.25 });
    expect((await ok(record(sku))).body.costing.currentCost.value).toBe(7.25);
  });

  test('a receipt without a cost is costed at the current cost (average 3 → a layer @ 3)', async () => {
    const sku = await twoReceipts('average');
    const res = await ok(receive(sku, { quantity: 10 }));
    expect((res.body.lots as Lot[]).map((l) => l.costPerUnit)).toEqual([2, 4, 3]);
    expect((await ok(record(sku))).body.costing.currentCost.value).toBe(3);
  });

  test('fifo valuation per location is the sum of its lots: after 5 kg move, A 5×2 + 10×4 = 50, B 5×2 = 10', async () => {
    const sku = await twoReceipts('fifo');
    expect((await ok(at(sku))).body.valuation).toMatchObject({ method: 'fifo', totalValue: 60, unitCost: 3 });
    await ok(move(sku, 5));
    expect((await ok(at(sku))).body.valuation).toMatchObject({ totalValue: 50, currency: 'USD' });
    expect((await ok(at(sku, B))).body.valuation).toMatchObject({ totalValue: 10, unitCost: 2 });
    expect((await ok(total(sku))).body.totalValue).toBe(60);
  });

  test('lifo valuation per location: after 5 kg move, A 10×2 + 5×4 = 40, B 5×4 = 20', async () => {
    const sku = await twoReceipts('lifo');
    await ok(move(sku, 5));
    expect((await ok(at(sku))).body.valuation.totalValue).toBe(40);
    expect((await ok(at(sku, B))).body.valuation).toMatchObject({ totalValue: 20, unitCost: 4 });
  });

  test('average valuation per location is quantity × average: after 5 kg move, A 15×3 = 45, B 5×3 = 15', async () => {
    const sku = await twoReceipts('average');
    await ok(move(sku, 5));
    expect((await ok(at(sku))).body.valuation).toMatchObject({ totalValue: 45, unitCost: 3 });
    expect((await ok(at(sku, B))).body.valuation).toMatchObject({ totalValue: 15, unitCost: 3 });
  });

  test('last_purchase valuation is quantity × last cost: 20 × 4 = 80', async () => {
    const sku = await twoReceipts('last_purchase');
    expect((await ok(at(sku))).body.valuation).toMatchObject({ method: 'last_purchase', totalValue: 80, unitCost: 4 });
  });
});

describe('alerts', () => {
  const alerts = { minStock: 2, reorderPoint: 10, reorderQuantity: 20 };

  test('reorderPoint 10: a receipt of 5 opens one alert, +2 opens no second, lifting above 10 closes it', async () => {
    const sku = await material('alert', { stockAlerts: alerts });
    const first = await ok(receive(sku, { quantity: 5 }));
    expect(first.body.alert).toMatchObject({
      sku,
      kind: 'material',
      locationId: A,
      status: 'open',
      availableAtOpen: 5,
      reorderPoint: 10,
      minStock: 2,
      reorderQuantity: 20,
      unit: 'kg',
      closedAt: null,
    });
    const second = await ok(receive(sku, { quantity: 2 }));
    expect(second.body.alert.id).toBe(first.body.alert.id);
    expect(await alertsOf(sku)).toHaveLength(1);
    expect(await alertsOf(sku, 'open')).toEqual([expect.objectContaining({ id: first.body.alert.id })]);

    const third = await ok(receive(sku, { quantity: 4 }));
    expect(third.body.alert).toBeNull();
    expect(await alertsOf(sku, 'open')).toEqual([]);
    expect(await alertsOf(sku, 'closed')).toEqual([
      expect.objectContaining({ id: first.body.alert.id, status: 'closed', availableAtOpen: 5, availableAtClose: 11 }),
    ]);
  });

  test('exactly at the reorder point (10) is low; a transfer that drops the origin to it opens one there', async () => {
    const sku = await material('alert-tr', { stockAlerts: alerts });
    await ok(receive(sku, { quantity: 12 }));
    expect(await alertsOf(sku)).toEqual([]);
    await ok(move(sku, 2));
    const open = await alertsOf(sku, 'open');
    expect(open.filter((a) => a.locationId === A)).toEqual([
      expect.objectContaining({ locationId: A, status: 'open', availableAtOpen: 10 }),
    ]);
    expect((await ok(at(sku))).body.alert).toMatchObject({ status: 'open' });
    // filtered by location
    const res = await ok(
      api.get('/products/materials/alerts', { query: { locationId: A, status: 'open', limit: 200 } }),
    );
    expect(res.body.data.filter((a: { sku: string }) => a.sku === sku)).toHaveLength(1);
    expect(res.body.data.every((a: { locationId: string }) => a.locationId === A)).toBe(true);
  });

  test('alertEnabled false: no alert, whatever the stock', async () => {
    const sku = await material('alert-off', { stockAlerts: { ...alerts, alertEnabled: false } });
    const res = await ok(receive(sku, { quantity: 5 }));
    expect(res.body.alert).toBeNull();
    await ok(move(sku, 5));
    expect(await alertsOf(sku)).toEqual([]);
  });

  test('supplies: alerts at /products/supplies/alerts, not among the materials', async () => {
    const sku = await supply('sup-alert', { stockAlerts: alerts });
    const res = await ok(api.post(`/products/supplies/${sku}/stock/${A}`, { quantity: 3 }));
    expect(res.body.alert).toMatchObject({ kind: 'supply', status: 'open', availableAtOpen: 3 });
    expect(await alertsOf(sku, 'open', 'supplies')).toEqual([expect.objectContaining({ sku, kind: 'supply' })]);
    expect(await alertsOf(sku, 'all', 'materials')).toEqual([]);
  });

  test('the alerts list is newest first and paged', async () => {
    const s1 = await material('alert-p1', { stockAlerts: alerts });
    await ok(receive(s1, { quantity: 1 }));
    const s2 = await material('alert-p2', { stockAlerts: alerts });
    await ok(receive(s2, { quantity: 1 }));
    const res = await ok(api.get('/products/materials/alerts', { query: { status: 'open', limit: 1 } }));
    expect(res.body).toMatchObject({ page: 0, limit: 1, hasMore: true });
    expect(res.body.data).toEqual([expect.objectContaining({ sku: s2 })]);
    const opened = (await ok(api.get('/products/materials/alerts', { query: { limit: 200 } }))).body.data.map(
      (a: { openedAt: string }) => Date.parse(a.openedAt),
    );
    expect(opened).toEqual([...opened].sort((a, b) => b - a));
  });
});

describe('ledger', () => {
  test('every receipt and transfer, newest first, with actor, reason, lots and units', async () => {
    const sku = await material('ledger', { lotTrackingEnabled: true, stockAlerts: alertsOff });
    await ok(receive(sku, { quantity: 6, reason: 'delivery', lot: { lotNumber: 'A1', costPerUnit: 2 } }));
    await ok(receive(sku, { quantity: 4, lot: { lotNumber: 'A2', costPerUnit: 3 } }));
    const tr = await ok(
      transfer({ materialSku: sku, fromLocationId: A, toLocationId: B, quantity: 7, reason: 'restock store' }),
    );
    const res = await ok(api.get(`/products/materials/${sku.toLowerCase()}/movements`));
    expect(res.body).toMatchObject({ total: 3, page: 0, limit: 50, totalPages: 1, hasMore: false });
    expect(res.body.data).toEqual([
      expect.objectContaining({
        movementId: tr.body.movementId,
        sku,
        type: 'transfer',
        locationId: A,
        toLocationId: B,
        quantity: 7,
        unit: 'kg',
        requested: { quantity: 7, unit: 'kg' },
        lots: [
          { lotNumber: 'A1', quantity: 6, costPerUnit: 2 },
          { lotNumber: 'A2', quantity: 1, costPerUnit: 3 },
        ],
        reason: 'restock store',
        actor: keyId,
      }),
      expect.objectContaining({
        type: 'receipt',
        locationId: A,
        toLocationId: null,
        quantity: 4,
        lots: [{ lotNumber: 'A2', quantity: 4, costPerUnit: 3 }],
        reason: null,
        actor: keyId,
      }),
      expect.objectContaining({
        type: 'receipt',
        quantity: 6,
        lots: [{ lotNumber: 'A1', quantity: 6, costPerUnit: 2 }],
        reason: 'delivery',
        actor: keyId,
      }),
    ]);
    expectError(await api.get(`/products/materials/${P}-NOPE/movements`), 404, 'not-found');
  });

  test('more than 40 movements on one SKU (30 receipts, 15 transfers): all 45 listed once, newest first', async () => {
    const sku = await material('ledger45', { stockAlerts: alertsOff });
    const reasons: string[] = [];
    for (let i = 0; i < 45; i++) {
      const reason = `m${i}`;
      reasons.push(reason);
      if (i % 3 === 2)
        await ok(transfer({ materialSku: sku, fromLocationId: A, toLocationId: B, quantity: 0.5, reason }));
      else await ok(receive(sku, { quantity: 1, reason }));
    }
    const all = await ok(api.get(`/products/materials/${sku}/movements`, { query: { limit: 200 } }));
    expect(all.body.total).toBe(45);
    const data = all.body.data as { movementId: string; reason: string; type: string; at: string }[];
    expect(new Set(data.map((m) => m.movementId)).size).toBe(45);
    expect(data.map((m) => m.reason)).toEqual([...reasons].reverse());
    expect(data.filter((m) => m.type === 'transfer')).toHaveLength(15);
    // pages of 20 cover the same 45, each once
    const paged: string[] = [];
    for (let page = 0; page < 3; page++) {
      const res = await ok(api.get(`/products/materials/${sku}/movements`, { query: { page, limit: 20 } }));
      expect(res.body).toMatchObject({ total: 45, totalPages: 3, hasMore: page < 2 });
      paged.push(...res.body.data.map((m: { movementId: string }) => m.movementId));
    }
    expect(paged).toEqual(data.map((m) => m.movementId));
    // the balance agrees with the ledger
    expect((await ok(at(sku))).body.quantity).toBe(30 - 7.5);
    expect((await ok(at(sku, B))).body.quantity).toBe(7.5);
    // and the stored ledger holds each movement once
    const rows = await deps.db.collection('material_movements').find({ tenantId, sku }).toArray();
    expect(rows).toHaveLength(45);
  });
});

describe('concurrency', () => {
  test('a process starting from the document it last wrote ends right after another process wrote it', async () => {
    // this test's process is one writer (it remembers what it wrote), the API another
    const sku = await material('stale', { stockAlerts: alertsOff });
    const here = new StockStore(new TenantDb(deps.db, tenantId), 'material');
    const actor = { actor: 'test-process' };
    await here.receive(sku, { ...actor, locationId: A, quantity: 5 });
    await ok(move(sku, 5)); // the API empties A: what this process remembers is now stale
    // refused on a fresh read, not on the remembered 5 kg
    const refused = await here.transfer({ ...actor, sku, fromLocationId: A, toLocationId: B, quantity: 1 }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('transfer-failed');
    await here.receive(sku, { ...actor, locationId: B, quantity: 1 }); // read afresh: remembers A at 0 kg
    await ok(receive(sku, { quantity: 2 })); // the API again: A holds 2 kg that this process has not seen
    // a refusal decided on the remembered 0 kg is decided again on a fresh read: it goes through
    const moved = await here.transfer({ ...actor, sku, fromLocationId: A, toLocationId: B, quantity: 1 });
    expect(moved.replayed).toBe(false);
    // a write over a remembered version that the API replaced loses its race and reads again
    await ok(receive(sku, { quantity: 3 }, B));
    await here.receive(sku, { ...actor, locationId: A, quantity: 0.5 });
    // an Idempotency-Key the API used, its movement since moved to the ledger, replays here
    await ok(receive(sku, { quantity: 0.25 }, A, `stale-${P}`));
    for (let i = 0; i < 5; i++) await ok(receive(sku, { quantity: 0.001 }, B));
    const again = await here.receive(sku, { ...actor, idempotencyKey: `stale-${P}`, locationId: A, quantity: 0.25 });
    expect(again.replayed).toBe(true);

    expect((await ok(at(sku, A))).body.quantity).toBe(1.75); // 5 − 5 + 2 − 1 + 0.5 + 0.25
    expect((await ok(at(sku, B))).body.quantity).toBe(10.005); // 5 + 1 + 1 + 3 + 0.005
    const ledger = await ok(api.get(`/products/materials/${sku}/movements`, { query: { limit: 200 } }));
    expect(ledger.body.total).toBe(13); // here 3 receipts and a transfer; the API a transfer and 8 receipts
  });

  test('20 concurrent receipts (distinct lots) and transfers A→B: exact totals, lots add up, nothing below zero', async () => {
    const sku = await material('conc', { lotTrackingEnabled: true, costingMethod: 'fifo', stockAlerts: alertsOff });
    await ok(receive(sku, { quantity: 5, lot: { lotNumber: 'PRE', costPerUnit: 1 } }));
    const receipts = Array.from({ length: 10 }, (_, i) => ({ lotNumber: `C${i}`, quantity: 1 + (i + 1) / 10 }));
    const requests: Promise<HttpResult>[] = [];
    for (let i = 0; i < 10; i++) {
      const r = receipts[i];
      requests.push(receive(sku, { quantity: r.quantity, lot: { lotNumber: r.lotNumber, costPerUnit: 2 } }));
      requests.push(move(sku, 1.5));
    }
    const results = await Promise.all(requests);
    const rcv = results.filter((_, i) => i % 2 === 0);
    const trs = results.filter((_, i) => i % 2 === 1);
    expect(rcv.map((r) => r.status)).toEqual(Array(10).fill(200));
    for (const t of trs) if (t.status !== 200) expectError(t, 400, 'transfer-failed');
    const moved = trs.filter((t) => t.status === 200).length;
    expect(moved).toBeGreaterThan(0);

    // in integer steps of 0.001 kg: 5 + Σ receipts
    const received = 5000 + receipts.reduce((s, r) => s + Math.round(r.quantity * 1000), 0);
    const doc = (await stored(sku)) as any;
    const locs = Object.fromEntries(doc.locations.map((l: any) => [l.locationId, l]));
    expect(locs[A].quantity + locs[B].quantity).toBe(received);
    expect(locs[B].quantity).toBe(moved * 1500);
    for (const l of doc.locations) {
      expect(l.quantity).toBeGreaterThanOrEqual(0);
      expect(l.lots.reduce((s: number, lot: { quantity: number }) => s + lot.quantity, 0)).toBe(l.quantity);
      for (const lot of l.lots) expect(lot.quantity).toBeGreaterThanOrEqual(0);
    }
    // each lot number holds, across both locations, what was received into it
    const byLot = new Map<string, number>();
    for (const l of doc.locations)
      for (const lot of l.lots) byLot.set(lot.lotNumber, (byLot.get(lot.lotNumber) ?? 0) + lot.quantity);
    expect(byLot.get('PRE')).toBe(5000);
    for (const r of receipts) expect(byLot.get(r.lotNumber)).toBe(Math.round(r.quantity * 1000));

    // the API agrees, and the ledger has every movement once
    const sum = await ok(total(sku));
    expect(sum.body.totalQuantity).toBe(received / 1000);
    expect(sum.body.byLocation.find((l: { locationId: string }) => l.locationId === B).quantity).toBe(moved * 1.5);
    const ledger = await ok(api.get(`/products/materials/${sku}/movements`, { query: { limit: 200 } }));
    expect(ledger.body.total).toBe(1 + 10 + moved);
    expect(new Set(ledger.body.data.map((m: { movementId: string }) => m.movementId)).size).toBe(1 + 10 + moved);
  });
});

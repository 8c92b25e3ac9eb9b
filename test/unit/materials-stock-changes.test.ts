import { AppError } from '../../shared/errors/catalog';
import type {
  LocationStock,
  StockAlert,
  StockAlerts,
  StockDoc,
  StockLot,
  StockMovement,
} from '../../shared/materials/collections';
import {
  applyConsumption,
  applyReceipt,
  applyReturn,
  applyTransfer,
  availableMinor,
  currentCostOf,
  emptyStock,
  evaluateAlerts,
  isExpired,
  lotStatus,
  recost,
  takingOrder,
  valuationOf,
  type ReceiptInput,
  type StockFacts,
} from '../../shared/materials/stock-changes';
import { MAX_MINOR } from '../../shared/materials/quantity';

const DAY = 86_400_000;
const T0 = new Date('2026-03-01T12:00:00.000Z');
/** `n` days after T0 (negative: before). */
const day = (n: number) => new Date(T0.getTime() + n * DAY);

const alertsOff: StockAlerts = {
  minStock: 0,
  reorderPoint: 0,
  reorderQuantity: 0,
  alertEmails: [],
  alertEnabled: false,
};

/** Flour in kg (3 decimals), USD, average cost, no lots, no expiry, alerts off unless asked. */
function facts(over: Partial<StockFacts> = {}): StockFacts {
  return {
    kind: 'material',
    sku: 'FLOUR',
    unit: 'kg',
    precision: 3,
    currency: 'USD',
    stockAlerts: alertsOff,
    lotTracking: false,
    costing: { method: 'average', initialCost: 1.25 },
    expiration: null,
    ...over,
  };
}
const costed = (method: 'fifo' | 'lifo' | 'average' | 'last_purchase', over: Partial<StockFacts> = {}) =>
  facts({ costing: { method, initialCost: 1.25 }, ...over });
const expiring = (
  method: 'fifo' | 'lifo' | 'average' | 'last_purchase',
  expirationPolicy: 'fefo' | 'costing_order',
  shelfLifeDays?: number,
) => costed(method, { expiration: { expires: true, expirationPolicy, shelfLifeDays } });

/** A movement id whose last 12 characters are `RCPT` and the number: its RCV layer is `RCV-RCPT0000000n`. */
const mid = (n: number) => `mmv_0000000000RCPT${String(n).padStart(8, '0')}`;

function movement(
  n: number,
  type: StockMovement['type'],
  locationId: string,
  quantityMinor: number,
  toLocationId: string | null = null,
): Omit<StockMovement, 'lots'> {
  return {
    _id: `ten_1:${mid(n)}`,
    tenantId: 'ten_1',
    movementId: mid(n),
    sku: 'FLOUR',
    kind: 'material',
    type,
    locationId,
    toLocationId,
    quantityMinor,
    quantity: quantityMinor / 1000,
    unit: 'kg',
    requested: { quantity: quantityMinor / 1000, unit: 'kg' },
    reason: null,
    actor: 'key_1',
    idempotencyKey: null,
    at: T0,
  };
}

function lot(lotNumber: string, quantity: number, costPerUnit: number, received: number, expires?: number): StockLot {
  return {
    lotNumber,
    quantity,
    costPerUnit,
    currency: 'USD',
    receivedDate: day(received),
    expirationDate: expires === undefined ? null : day(expires),
  };
}

function location(locationId: string, lots: StockLot[], over: Partial<LocationStock> = {}): LocationStock {
  return {
    locationId,
    quantity: lots.reduce((s, l) => s + l.quantity, 0),
    reservedQty: 0,
    committedQty: 0,
    minStock: 0,
    reorderPoint: 0,
    lots,
    createdAt: day(-30),
    updatedAt: day(-30),
    ...over,
  };
}

function doc(f: StockFacts, locations: LocationStock[] = [], costing: StockDoc['costing'] = null): StockDoc {
  const d = emptyStock(f, `ten_1:${f.sku}`, day(-30));
  d.locations = locations;
  d.costing = costing;
  return d;
}

let seq = 0;
function receive(
  d: StockDoc,
  f: StockFacts,
  input: Omit<ReceiptInput, 'locationId'> & { locationId?: string },
  now = T0,
) {
  const locationId = input.locationId ?? 'loc_a';
  return applyReceipt(d, f, { ...input, locationId }, movement(++seq, 'receipt', locationId, input.minor), now);
}

function transfer(d: StockDoc, f: StockFacts, from: string, to: string, minor: number, now = T0) {
  return applyTransfer(
    d,
    f,
    { fromLocationId: from, toLocationId: to, minor },
    movement(++seq, 'transfer', from, minor, to),
    now,
  );
}

/** The AppError `run` throws. */
function refusal(run: () => unknown): AppError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected a refusal');
}

const at = (d: StockDoc, locationId: string) => d.locations.find((l) => l.locationId === locationId)!;
const lotsAt = (d: StockDoc, locationId: string) =>
  at(d, locationId).lots.map((l) => [l.lotNumber, l.quantity] as [string, number]);

beforeEach(() => {
  seq = 0;
});

describe('emptyStock', () => {
  test('a document with nothing in it, named for the SKU', () => {
    const d = emptyStock(facts(), 'ten_1:FLOUR', T0);
    expect(d).toMatchObject({ _id: 'ten_1:FLOUR', sku: 'FLOUR', kind: 'material', unit: 'kg', precision: 3 });
    expect(d).toMatchObject({ locations: [], costing: null, alerts: [], hasAlerts: false, journal: [], version: 0 });
  });
});

describe('applyReceipt', () => {
  test('creates the location with minStock/reorderPoint from the input; later receipts ignore them', () => {
    const f = facts({ stockAlerts: { ...alertsOff, minStock: 1, reorderPoint: 2 } });
    const first = receive(doc(f), f, { minor: 5000, minStock: 7, reorderPoint: 9 });
    expect(at(first, 'loc_a')).toMatchObject({ quantity: 5000, reservedQty: 0, committedQty: 0, minStock: 7 });
    expect(at(first, 'loc_a')).toMatchObject({ reorderPoint: 9, createdAt: T0, updatedAt: T0 });
    const second = receive(first, f, { minor: 1000, minStock: 100, reorderPoint: 200 }, day(1));
    expect(at(second, 'loc_a')).toMatchObject({ quantity: 6000, minStock: 7, reorderPoint: 9, createdAt: T0 });
    expect(at(second, 'loc_a').updatedAt).toEqual(day(1));
  });

  test("without limits in the input the new location takes the material's stockAlerts", () => {
    const f = facts({ stockAlerts: { ...alertsOff, minStock: 3, reorderPoint: 4.5 } });
    const d = receive(doc(f), f, { minor: 10000 });
    expect(at(d, 'loc_a')).toMatchObject({ minStock: 3, reorderPoint: 4.5 });
    const withOne = receive(doc(f), f, { minor: 10000, minStock: 0 });
    expect(at(withOne, 'loc_a')).toMatchObject({ minStock: 0, reorderPoint: 4.5 });
  });

  test('the input document is not changed, neither by a receipt nor by a refusal', () => {
    const f = facts({ lotTracking: true });
    const before = doc(f, [location('loc_a', [lot('L1', 1000, 2, -1)])], {
      currentCost: 2,
      calculatedAt: day(-1),
      lastPurchaseCost: 2,
      history: [],
    });
    const copy = structuredClone(before);
    const after = receive(before, f, { minor: 500, lot: { lotNumber: 'L1', costPerUnit: 2 } });
    expect(at(after, 'loc_a').quantity).toBe(1500);
    refusal(() => receive(before, f, { minor: 500, lot: { lotNumber: 'L1', costPerUnit: 3 } }));
    refusal(() => receive(before, f, { minor: 500 }));
    expect(before).toEqual(copy);
  });

  test('a lot-tracked material needs lot.lotNumber: 400 validation-error field lot.lotNumber', () => {
    const f = facts({ lotTracking: true });
    for (const lotIn of [undefined, {}, { lotNumber: '' }, { costPerUnit: 2 }]) {
      const e = refusal(() => receive(doc(f), f, { minor: 1000, lot: lotIn }));
      expect([e.status, e.code, e.extra.field]).toEqual([400, 'validation-error', 'lot.lotNumber']);
      expect(e.message).toContain('FLOUR');
    }
  });

  test("lot.currency other than the material's → 400 validation-error field lot.currency; same currency in any case is fine", () => {
    const f = facts();
    const e = refusal(() => receive(doc(f), f, { minor: 1000, lot: { currency: 'EUR', costPerUnit: 2 } }));
    expect([e.status, e.code, e.extra.field]).toEqual([400, 'validation-error', 'lot.currency']);
    expect(e.message).toContain('EUR');
    const ok = receive(doc(f), f, { minor: 1000, lot: { currency: 'usd', costPerUnit: 2 } });
    expect(at(ok, 'loc_a').lots[0]).toMatchObject({ currency: 'USD', costPerUnit: 2 });
  });

  test('a lot number with another cost anywhere in the document → 400 field lot.lotNumber; same terms merge', () => {
    const f = costed('fifo', { lotTracking: true });
    let d = receive(doc(f), f, { minor: 1000, lot: { lotNumber: 'L1', costPerUnit: 2 } });
    d = transfer(d, f, 'loc_a', 'loc_b', 1000); // L1 now only at loc_b; loc_a keeps it depleted
    for (const [where, costPerUnit] of [
      ['loc_a', 2.5],
      ['loc_b', 2.5],
      ['loc_c', 2.000001],
    ] as const) {
      const e = refusal(() => receive(d, f, { locationId: where, minor: 1, lot: { lotNumber: 'L1', costPerUnit } }));
      expect([e.status, e.code, e.extra.field]).toEqual([400, 'validation-error', 'lot.lotNumber']);
      expect(e.extra.details).toEqual({ lotNumber: 'L1' });
      expect(e.message).toContain('L1');
    }
    // same terms: into the lot where it is, a new lot of that number elsewhere; a cost differing below 1e-6 is the same
    d = receive(d, f, { locationId: 'loc_b', minor: 500, lot: { lotNumber: 'L1', costPerUnit: 2.0000001 } }, day(1));
    d = receive(d, f, { locationId: 'loc_c', minor: 250, lot: { lotNumber: 'L1', costPerUnit: 2 } }, day(2));
    expect(lotsAt(d, 'loc_b')).toEqual([['L1', 1500]]);
    expect(at(d, 'loc_b').lots[0].receivedDate).toEqual(T0);
    expect(lotsAt(d, 'loc_c')).toEqual([['L1', 250]]);
    expect(at(d, 'loc_c').lots[0]).toMatchObject({ costPerUnit: 2, receivedDate: day(2), expirationDate: null });
  });

  test("a lot number with another expiry → 400; the same expiry, or none sent, merges on the lot's terms", () => {
    const f = facts({ lotTracking: true });
    const d = receive(doc(f), f, { minor: 1000, lot: { lotNumber: 'L1', costPerUnit: 2, expirationDate: day(30) } });
    const e = refusal(() =>
      receive(d, f, {
        locationId: 'loc_b',
        minor: 1,
        lot: { lotNumber: 'L1', costPerUnit: 2, expirationDate: day(31) },
      }),
    );
    expect([e.status, e.code, e.extra.field]).toEqual([400, 'validation-error', 'lot.lotNumber']);
    const merged = receive(d, f, { minor: 1, lot: { lotNumber: 'L1', costPerUnit: 2, expirationDate: day(30) } });
    expect(lotsAt(merged, 'loc_a')).toEqual([['L1', 1001]]);
    // more of a known lot without its terms takes the lot's cost and expiry
    const more = receive(merged, f, { minor: 2, lot: { lotNumber: 'L1' } }, day(5));
    expect(lotsAt(more, 'loc_a')).toEqual([['L1', 1003]]);
    expect(at(more, 'loc_a').lots[0]).toMatchObject({ costPerUnit: 2, expirationDate: day(30) });
  });

  test('no lot tracking, no lot number: an RCV- layer, merged while cost and expiry stay the same', () => {
    const f = costed('fifo');
    let d = receive(doc(f), f, { minor: 1000, lot: { costPerUnit: 2 } });
    expect(lotsAt(d, 'loc_a')).toEqual([['RCV-RCPT00000001', 1000]]);
    d = receive(d, f, { minor: 500, lot: { costPerUnit: 2 } }, day(1));
    expect(lotsAt(d, 'loc_a')).toEqual([['RCV-RCPT00000001', 1500]]);
    d = receive(d, f, { minor: 200, lot: { costPerUnit: 3 } }, day(2));
    expect(lotsAt(d, 'loc_a')).toEqual([
      ['RCV-RCPT00000001', 1500],
      ['RCV-RCPT00000003', 200],
    ]);
    // only the newest layer is merged into: cost 2 again is a new layer
    d = receive(d, f, { minor: 100, lot: { costPerUnit: 2 } }, day(3));
    expect(lotsAt(d, 'loc_a').map(([n]) => n)).toEqual(['RCV-RCPT00000001', 'RCV-RCPT00000003', 'RCV-RCPT00000004']);
    // a named lot is its own lot even without lot tracking
    d = receive(d, f, { minor: 100, lot: { lotNumber: 'SUPPLIER-7', costPerUnit: 2 } }, day(4));
    expect(lotsAt(d, 'loc_a').map(([n]) => n)).toContain('SUPPLIER-7');
    expect(at(d, 'loc_a').quantity).toBe(1900);
  });

  test('an RCV- layer that was emptied is not merged into: a new layer', () => {
    const f = costed('fifo');
    const d = doc(f, [location('loc_a', [lot('RCV-OLD', 0, 2, -1)])]);
    const next = receive(d, f, { minor: 300, lot: { costPerUnit: 2 } });
    expect(lotsAt(next, 'loc_a')).toEqual([
      ['RCV-OLD', 0],
      ['RCV-RCPT00000001', 300],
    ]);
  });

  test('cost default: the current cost, else the initial cost; rounded to 6 decimals', () => {
    const f = costed('average');
    const first = receive(doc(f), f, { minor: 1000 });
    expect(at(first, 'loc_a').lots[0].costPerUnit).toBe(1.25);
    const withCost = doc(f, [], { currentCost: 3.5, calculatedAt: day(-1), lastPurchaseCost: 3.5, history: [] });
    expect(at(receive(withCost, f, { minor: 1000 }), 'loc_a').lots[0].costPerUnit).toBe(3.5);
    const rounded = receive(doc(f), f, { minor: 1000, lot: { costPerUnit: 1.23456789 } });
    expect(at(rounded, 'loc_a').lots[0].costPerUnit).toBe(1.234568);
  });

  test('expiring material: expirationDate is receivedDate + shelfLifeDays unless the lot names one', () => {
    const f = expiring('fifo', 'fefo', 10);
    const d = receive(doc(f), f, { minor: 1000, lot: { costPerUnit: 2 } });
    expect(at(d, 'loc_a').lots[0]).toMatchObject({ receivedDate: T0, expirationDate: day(10) });
    const named = receive(doc(f), f, { minor: 1000, lot: { costPerUnit: 2, expirationDate: day(3) } });
    expect(at(named, 'loc_a').lots[0].expirationDate).toEqual(day(3));
    // not expiring (or expiring without a shelf life): no expiry of ours
    const notExpiring = facts({ expiration: { expires: false, shelfLifeDays: 10, expirationPolicy: 'fefo' } });
    expect(at(receive(doc(notExpiring), notExpiring, { minor: 1 }), 'loc_a').lots[0].expirationDate).toBeNull();
    const noShelfLife = expiring('fifo', 'fefo');
    expect(at(receive(doc(noShelfLife), noShelfLife, { minor: 1 }), 'loc_a').lots[0].expirationDate).toBeNull();
  });

  test('the journal gets the movement with its lot (quantity in base units); costing history gets the receipt', () => {
    const f = costed('average', { lotTracking: true });
    const d = receive(doc(f), f, { minor: 12345, lot: { lotNumber: 'L-9', costPerUnit: 2.5 } });
    expect(d.journal).toEqual([
      { ...movement(1, 'receipt', 'loc_a', 12345), lots: [{ lotNumber: 'L-9', quantity: 12.345, costPerUnit: 2.5 }] },
    ]);
    expect(d.costing).toEqual({
      currentCost: 2.5,
      calculatedAt: T0,
      lastPurchaseCost: 2.5,
      history: [{ cost: 2.5, date: T0, quantity: 12.345 }],
    });
    expect(d.updatedAt).toEqual(T0);
    expect(at(d, 'loc_a').lots[0]).toEqual({
      lotNumber: 'L-9',
      quantity: 12345,
      costPerUnit: 2.5,
      currency: 'USD',
      receivedDate: T0,
      expirationDate: null,
    });
  });

  test('a supply: quantities only (no lots, no costing), the journal entry has no lots', () => {
    const f = facts({ kind: 'supply', sku: 'BOX', unit: 'pza', precision: 0, costing: null });
    const d = receive(doc(f), f, { minor: 40 });
    expect(at(d, 'loc_a')).toMatchObject({ quantity: 40, lots: [] });
    expect(d.costing).toBeNull();
    expect(d.journal).toHaveLength(1);
    expect(d.journal[0].lots).toEqual([]);
  });

  test('a balance beyond the exact range → 400 bad-request parameter quantity', () => {
    const f = facts();
    const d = doc(f, [location('loc_a', [lot('RCV-1', MAX_MINOR - 10, 2, -1)])]);
    expect(at(receive(d, f, { minor: 10 }), 'loc_a').quantity).toBe(MAX_MINOR);
    const e = refusal(() => receive(d, f, { minor: 11 }));
    expect([e.status, e.code, e.extra.parameter]).toEqual([400, 'bad-request', 'quantity']);
  });

  test('depleted lots: a location keeps the 3 newest', () => {
    const f = costed('fifo', { lotTracking: true });
    const depleted = Array.from({ length: 11 }, (_, i) => lot(`D${i + 1}`, 0, 2, -20 + i));
    const d = receive(doc(f, [location('loc_a', depleted)]), f, {
      minor: 5,
      lot: { lotNumber: 'NEW', costPerUnit: 2 },
    });
    expect(lotsAt(d, 'loc_a').map(([n]) => n)).toEqual(['D9', 'D10', 'D11', 'NEW']);
  });
});

describe('takingOrder', () => {
  // D has no expiry; A and B expire together (B received later); C expires first; X is expired; Z is empty
  const lots = [
    lot('D', 10, 1, 0),
    lot('A', 10, 1, 1, 10),
    lot('B', 10, 1, 2, 10),
    lot('C', 10, 1, 3, 5),
    lot('X', 10, 1, -5, -1),
    lot('Z', 0, 1, -6, 20),
  ];
  const names = (f: StockFacts, now = T0) => takingOrder(structuredClone(lots), f, now).map((l) => l.lotNumber);

  test.each([
    ['fifo, no expiry: oldest received first', costed('fifo'), ['D', 'A', 'B', 'C']],
    ['average, no expiry: oldest first', costed('average'), ['D', 'A', 'B', 'C']],
    ['last_purchase, no expiry: oldest first', costed('last_purchase'), ['D', 'A', 'B', 'C']],
    ['lifo, no expiry: newest first', costed('lifo'), ['C', 'B', 'A', 'D']],
    ['fifo + fefo: earliest expiry, ties oldest first, no expiry last', expiring('fifo', 'fefo'), ['C', 'A', 'B', 'D']],
    ['lifo + fefo: earliest expiry, ties newest first, no expiry last', expiring('lifo', 'fefo'), ['C', 'B', 'A', 'D']],
    ['average + fefo', expiring('average', 'fefo'), ['C', 'A', 'B', 'D']],
    ['fifo + costing_order: expiry ignored', expiring('fifo', 'costing_order'), ['D', 'A', 'B', 'C']],
    ['lifo + costing_order: expiry ignored', expiring('lifo', 'costing_order'), ['C', 'B', 'A', 'D']],
    [
      'fefo policy of a non-expiring material is not used',
      costed('fifo', { expiration: { expires: false, expirationPolicy: 'fefo' } }),
      ['D', 'A', 'B', 'C'],
    ],
  ])('%s (expired and empty lots never)', (_what, f, order) => {
    expect(names(f)).toEqual(order);
  });

  test('same received date: by lot number; a lot expiring exactly now is expired', () => {
    const same = [lot('b', 1, 1, 0), lot('a', 1, 1, 0), lot('c', 1, 1, -1, 0)];
    expect(takingOrder(same, costed('fifo'), T0).map((l) => l.lotNumber)).toEqual(['a', 'b']);
    expect(takingOrder(same, costed('lifo'), T0).map((l) => l.lotNumber)).toEqual(['b', 'a']);
    expect(takingOrder(same, costed('fifo'), day(-0.5)).map((l) => l.lotNumber)).toEqual(['c', 'a', 'b']);
  });
});

describe('applyTransfer', () => {
  const twoLots = (f: StockFacts) =>
    doc(f, [location('loc_a', [lot('L-OLD', 10000, 2, -10), lot('L-NEW', 10000, 4, -5)])]);

  test('moves the quantity and the lots; the journal gets the movement with the lots taken', () => {
    const f = costed('fifo');
    const d = transfer(twoLots(f), f, 'loc_a', 'loc_b', 15000);
    expect(at(d, 'loc_a').quantity).toBe(5000);
    expect(at(d, 'loc_b').quantity).toBe(15000);
    expect(lotsAt(d, 'loc_a')).toEqual([
      ['L-OLD', 0],
      ['L-NEW', 5000],
    ]);
    expect(lotsAt(d, 'loc_b')).toEqual([
      ['L-OLD', 10000],
      ['L-NEW', 5000],
    ]);
    expect(d.journal).toEqual([
      {
        ...movement(1, 'transfer', 'loc_a', 15000, 'loc_b'),
        lots: [
          { lotNumber: 'L-OLD', quantity: 10, costPerUnit: 2 },
          { lotNumber: 'L-NEW', quantity: 5, costPerUnit: 4 },
        ],
      },
    ]);
    expect(at(d, 'loc_a').updatedAt).toEqual(T0);
    expect(at(d, 'loc_b')).toMatchObject({ createdAt: T0, updatedAt: T0, reservedQty: 0, committedQty: 0 });
    expect(d.updatedAt).toEqual(T0);
  });

  test('lifo takes the newest lot first', () => {
    const f = costed('lifo');
    const d = transfer(twoLots(f), f, 'loc_a', 'loc_b', 15000);
    expect(lotsAt(d, 'loc_b')).toEqual([
      ['L-NEW', 10000],
      ['L-OLD', 5000],
    ]);
    expect(d.journal[0].lots.map((l) => [l.lotNumber, l.quantity])).toEqual([
      ['L-NEW', 10],
      ['L-OLD', 5],
    ]);
  });

  test('fefo takes the earliest expiry first; costing_order takes the costing order; expired never leaves', () => {
    const lots = () => [
      lot('OLD-LATE', 1000, 1, -10, 30),
      lot('NEW-SOON', 1000, 2, -2, 5),
      lot('GONE', 1000, 3, -20, -1),
    ];
    const fefo = expiring('fifo', 'fefo');
    const byExpiry = transfer(doc(fefo, [location('loc_a', lots())]), fefo, 'loc_a', 'loc_b', 1500);
    expect(lotsAt(byExpiry, 'loc_b')).toEqual([
      ['NEW-SOON', 1000],
      ['OLD-LATE', 500],
    ]);
    const co = expiring('fifo', 'costing_order');
    const byCosting = transfer(doc(co, [location('loc_a', lots())]), co, 'loc_a', 'loc_b', 1500);
    expect(lotsAt(byCosting, 'loc_b')).toEqual([
      ['OLD-LATE', 1000],
      ['NEW-SOON', 500],
    ]);
    expect(lotsAt(byCosting, 'loc_a')).toEqual([
      ['OLD-LATE', 0],
      ['NEW-SOON', 500],
      ['GONE', 1000],
    ]);
    // 2000 live: 2000.001 would need the expired lot
    const e = refusal(() => transfer(doc(co, [location('loc_a', lots())]), co, 'loc_a', 'loc_b', 2001));
    expect(e.code).toBe('transfer-failed');
    expect(e.extra.details).toMatchObject({ available: 2, requested: 2.001 });
  });

  test('lots arrive with their number, cost, currency, received and expiry dates, merged with the same number there', () => {
    const f = expiring('fifo', 'fefo');
    const d0 = doc(f, [
      location('loc_a', [lot('L1', 3000, 2.5, -10, 20), lot('L2', 1000, 3, -3, 40)]),
      location('loc_b', [lot('L1', 500, 2.5, -10, 20)]),
    ]);
    const d = transfer(d0, f, 'loc_a', 'loc_b', 4000);
    expect(at(d, 'loc_b').lots).toEqual([lot('L1', 3500, 2.5, -10, 20), lot('L2', 1000, 3, -3, 40)]);
    expect(at(d, 'loc_b').quantity).toBe(4500);
    expect(at(d, 'loc_a').quantity).toBe(0);
  });

  test('all or nothing: not enough available → 400 transfer-failed naming the shortfall; the document is unchanged', () => {
    const f = costed('fifo');
    const d0 = doc(f, [location('loc_a', [lot('L1', 10000, 2, -10)], { reservedQty: 1500, committedQty: 500 })]);
    const copy = structuredClone(d0);
    const e = refusal(() => transfer(d0, f, 'loc_a', 'loc_b', 8500));
    expect([e.status, e.code]).toEqual([400, 'transfer-failed']);
    expect(e.extra.details).toEqual({
      sku: 'FLOUR',
      fromLocationId: 'loc_a',
      available: 8,
      requested: 8.5,
      shortBy: 0.5,
      unit: 'kg',
    });
    expect(e.message).toContain('FLOUR');
    expect(e.message).toContain('loc_a');
    expect(d0).toEqual(copy);
    // exactly what is available moves
    const d = transfer(d0, f, 'loc_a', 'loc_b', 8000);
    expect([at(d, 'loc_a').quantity, at(d, 'loc_b').quantity]).toEqual([2000, 8000]);
    expect(d0).toEqual(copy);
  });

  test('from a location with no record: available 0', () => {
    const f = costed('fifo');
    const e = refusal(() => transfer(doc(f), f, 'loc_x', 'loc_b', 1));
    expect(e.extra.details).toEqual({
      sku: 'FLOUR',
      fromLocationId: 'loc_x',
      available: 0,
      requested: 0.001,
      shortBy: 0.001,
      unit: 'kg',
    });
  });

  test('the destination is created with the stockAlerts limits', () => {
    const f = costed('fifo', { stockAlerts: { ...alertsOff, minStock: 2, reorderPoint: 3 } });
    const d = transfer(twoLots(f), f, 'loc_a', 'loc_b', 1000);
    expect(at(d, 'loc_b')).toMatchObject({ minStock: 2, reorderPoint: 3, quantity: 1000 });
  });

  test('depleted lots: the origin keeps the 3 newest', () => {
    const f = costed('fifo');
    const depleted = Array.from({ length: 11 }, (_, i) => lot(`D${i + 1}`, 0, 2, -20 + i));
    const d = transfer(doc(f, [location('loc_a', [...depleted, lot('LIVE', 700, 2, -1)])]), f, 'loc_a', 'loc_b', 700);
    expect(lotsAt(d, 'loc_a').map(([n]) => n)).toEqual(['D10', 'D11', 'LIVE']);
    expect(lotsAt(d, 'loc_b')).toEqual([['LIVE', 700]]);
  });

  test('a supply moves quantities only', () => {
    const f = facts({ kind: 'supply', sku: 'BOX', unit: 'pza', precision: 0, costing: null });
    const d = transfer(doc(f, [location('loc_a', [], { quantity: 40 })]), f, 'loc_a', 'loc_b', 15);
    expect([at(d, 'loc_a').quantity, at(d, 'loc_b').quantity]).toEqual([25, 15]);
    expect(at(d, 'loc_b').lots).toEqual([]);
    expect(d.journal[0].lots).toEqual([]);
  });

  test('exact: 0.1 kg moved three times from 0.3 kg leaves exactly 0', () => {
    const f = costed('fifo');
    let d = receive(doc(f), f, { minor: 300, lot: { costPerUnit: 1 } });
    for (let i = 0; i < 3; i++) d = transfer(d, f, 'loc_a', 'loc_b', 100);
    expect([at(d, 'loc_a').quantity, at(d, 'loc_b').quantity]).toEqual([0, 300]);
    expect(() => transfer(d, f, 'loc_a', 'loc_b', 1)).toThrow(AppError);
  });
});

describe('currentCostOf: worked examples', () => {
  /** Receipts in order (one day apart, all at loc_a), then the current cost recorded. */
  function afterReceipts(f: StockFacts, receipts: [qty: number, cost: number][]): StockDoc {
    let d = doc(f);
    receipts.forEach(([qty, costPerUnit], i) => {
      d = receive(d, f, { minor: qty * 1000, lot: { costPerUnit } }, day(i));
    });
    return d;
  }

  test.each([
    [
      'fifo: 10 @ 2 then 10 @ 4 → 2',
      'fifo',
      [
        [10, 2],
        [10, 4],
      ],
      2,
    ],
    [
      'lifo: 10 @ 2 then 10 @ 4 → 4',
      'lifo',
      [
        [10, 2],
        [10, 4],
      ],
      4,
    ],
    [
      'average: 10 @ 2 then 10 @ 4 → 3',
      'average',
      [
        [10, 2],
        [10, 4],
      ],
      3,
    ],
    [
      'average: 10 @ 2 then 30 @ 4 → 3.5',
      'average',
      [
        [10, 2],
        [30, 4],
      ],
      3.5,
    ],
    [
      'average: 1 @ 1 then 2 @ 2 → 1.666667',
      'average',
      [
        [1, 1],
        [2, 2],
      ],
      1.666667,
    ],
    [
      'average: 3 @ 1.1 then 7 @ 2.35 → 1.975',
      'average',
      [
        [3, 1.1],
        [7, 2.35],
      ],
      1.975,
    ],
    [
      'last_purchase: 10 @ 4 then 10 @ 2 → 2',
      'last_purchase',
      [
        [10, 4],
        [10, 2],
      ],
      2,
    ],
    [
      'last_purchase: 10 @ 2 then 10 @ 4 → 4',
      'last_purchase',
      [
        [10, 2],
        [10, 4],
      ],
      4,
    ],
    [
      'fifo: 10 @ 3 then 10 @ 2 then 10 @ 5 → 3',
      'fifo',
      [
        [10, 3],
        [10, 2],
        [10, 5],
      ],
      3,
    ],
    [
      'lifo: 10 @ 3 then 10 @ 5 then 10 @ 2 → 2',
      'lifo',
      [
        [10, 3],
        [10, 5],
        [10, 2],
      ],
      2,
    ],
  ] as const)('%s', (_name, method, receipts, cost) => {
    const f = costed(method);
    const d = afterReceipts(f, receipts as unknown as [number, number][]);
    expect(d.costing!.currentCost).toBe(cost);
    expect(currentCostOf(d, f, day(5))).toBe(cost);
    expect(d.costing!.history.map((h) => [h.quantity, h.cost])).toEqual(receipts);
  });

  test('fifo: 10 @ 2 then 10 @ 4, the first lot used up → 4; lifo: the second used up → 2', () => {
    const fifo = costed('fifo');
    expect(currentCostOf(doc(fifo, [location('loc_a', [lot('A', 0, 2, 0), lot('B', 10, 4, 1)])]), fifo, T0)).toBe(4);
    const lifo = costed('lifo');
    expect(currentCostOf(doc(lifo, [location('loc_a', [lot('A', 10, 2, 0), lot('B', 0, 4, 1)])]), lifo, T0)).toBe(2);
  });

  test('lots of every location count: fifo 10 @ 4 at loc_a, older 5 @ 2 at loc_b → 2; average → 3.333333', () => {
    const locs = () => [location('loc_a', [lot('A', 10, 4, 1)]), location('loc_b', [lot('B', 5, 2, 0)])];
    expect(currentCostOf(doc(costed('fifo'), locs()), costed('fifo'), T0)).toBe(2);
    expect(currentCostOf(doc(costed('lifo'), locs()), costed('lifo'), T0)).toBe(4);
    expect(currentCostOf(doc(costed('average'), locs()), costed('average'), T0)).toBe(3.333333);
  });

  test('expired lots do not count: fifo 10 @ 2 (expired) then 10 @ 4 → 4; average → 4', () => {
    const locs = () => [location('loc_a', [lot('A', 10, 2, -5, -1), lot('B', 10, 4, -2)])];
    expect(currentCostOf(doc(costed('fifo'), locs()), costed('fifo'), T0)).toBe(4);
    expect(currentCostOf(doc(costed('average'), locs()), costed('average'), T0)).toBe(4);
  });

  test('nothing live: stays as it was, at first the initial cost', () => {
    const f = costed('fifo');
    const costing = { currentCost: 7, calculatedAt: day(-1), lastPurchaseCost: 6, history: [] };
    expect(currentCostOf(doc(f, [location('loc_a', [lot('A', 0, 2, 0)])], costing), f, T0)).toBe(7);
    expect(currentCostOf(doc(f), f, T0)).toBe(1.25);
    const lp = costed('last_purchase');
    expect(currentCostOf(doc(lp), lp, T0)).toBe(1.25);
    expect(currentCostOf(doc(lp, [], costing), lp, T0)).toBe(6);
  });

  test('recost: a change of costing method recomputes at once (10 @ 2 then 10 @ 4: fifo 2 → lifo 4 → average 3)', () => {
    let d = afterReceipts(costed('fifo'), [
      [10, 2],
      [10, 4],
    ]);
    expect(d.costing!.currentCost).toBe(2);
    const history = d.costing!.history;
    d = recost(d, costed('lifo'), day(3));
    expect(d.costing).toEqual({ currentCost: 4, calculatedAt: day(3), lastPurchaseCost: 4, history });
    expect(recost(d, costed('average'), day(4)).costing!.currentCost).toBe(3);
    const supply = facts({ kind: 'supply', costing: null });
    expect(recost(d, supply, day(5))).toBe(d);
  });
});

describe('valuationOf', () => {
  const locs = () => [location('loc_a', [lot('A', 10000, 2, 0), lot('B', 10000, 4, 1)])];

  test.each([
    ['fifo: 10 @ 2 + 10 @ 4 → 60.00, 3 per kg', 'fifo', 60, 3],
    ['lifo: 10 @ 2 + 10 @ 4 → 60.00, 3 per kg', 'lifo', 60, 3],
    ['average: 20 × 3 → 60.00', 'average', 60, 3],
    ['last_purchase: 20 × 4 (the last receipt) → 80.00', 'last_purchase', 80, 4],
  ] as const)('%s', (_name, method, totalValue, unitCost) => {
    const f = costed(method);
    const costing = { currentCost: 9, calculatedAt: day(1), lastPurchaseCost: 4, history: [] };
    const d = doc(f, locs(), costing);
    expect(valuationOf(d, d.locations[0], f, T0)).toEqual({ method, totalValue, unitCost, currency: 'USD' });
  });

  test('average: 10 @ 2 then 30 @ 4 → 40 × 3.5 = 140', () => {
    const f = costed('average');
    const d = doc(f, [location('loc_a', [lot('A', 10000, 2, 0), lot('B', 30000, 4, 1)])]);
    expect(valuationOf(d, d.locations[0], f, T0)).toMatchObject({ totalValue: 140, unitCost: 3.5 });
  });

  test('to the cent, half away from zero: 12.345 kg @ 1.5 = 18.5175 → 18.52', () => {
    for (const method of ['fifo', 'average'] as const) {
      const f = costed(method);
      const d = doc(f, [location('loc_a', [lot('A', 12345, 1.5, 0)])]);
      expect(valuationOf(d, d.locations[0], f, T0).totalValue).toBe(18.52);
    }
  });

  test('an empty location is worth 0, its unit cost the current cost', () => {
    const f = costed('fifo');
    const d = doc(f, [location('loc_a', [lot('A', 0, 2, 0)])], {
      currentCost: 2.5,
      calculatedAt: T0,
      lastPurchaseCost: 2,
      history: [],
    });
    expect(valuationOf(d, d.locations[0], f, T0)).toEqual({
      method: 'fifo',
      totalValue: 0,
      unitCost: 2.5,
      currency: 'USD',
    });
  });
});

describe('availableMinor and lot status', () => {
  test('on hand less reserved, committed and expired; never below 0', () => {
    const loc = location('loc_a', [lot('A', 5000, 1, -5, -1), lot('B', 7000, 1, -2, 10), lot('C', 0, 1, -9, -3)], {
      reservedQty: 1000,
      committedQty: 500,
    });
    expect(loc.quantity).toBe(12000);
    expect(availableMinor(loc, T0)).toBe(5500);
    // the day before A expires it still counts
    expect(availableMinor(loc, day(-2))).toBe(10500);
    expect(availableMinor({ ...loc, reservedQty: 20000 }, T0)).toBe(0);
    expect(availableMinor(location('s', [], { quantity: 9 }), T0)).toBe(9);
  });

  test('available, expired (at or after its date), depleted', () => {
    const live = lot('A', 5, 1, -1, 1);
    expect(lotStatus(live, T0)).toBe('available');
    expect(lotStatus(live, day(1))).toBe('expired');
    expect(isExpired(live, day(1))).toBe(true);
    expect(isExpired(live, new Date(day(1).getTime() - 1))).toBe(false);
    expect(lotStatus({ ...live, quantity: 0 }, day(5))).toBe('depleted');
    expect(lotStatus(lot('N', 1, 1, -100), day(1000))).toBe('available');
  });
});

describe('evaluateAlerts', () => {
  const alerting = (over: Partial<StockAlerts> = {}) =>
    costed('fifo', {
      stockAlerts: { minStock: 2, reorderPoint: 5, reorderQuantity: 20, alertEmails: [], alertEnabled: true, ...over },
    });

  test('opens once when available falls to the reorder point, not again, closes when it recovers', () => {
    const f = alerting();
    let d = receive(doc(f), f, { minor: 8000, lot: { costPerUnit: 2 } });
    expect(d.alerts).toEqual([]);
    expect(d.hasAlerts).toBe(false);

    d = transfer(d, f, 'loc_a', 'loc_b', 3000, day(1)); // loc_a: 5 = reorder point; loc_b: 3
    expect(d.alerts.map((a) => [a.locationId, a.status, a.availableAtOpen])).toEqual([
      ['loc_a', 'open', 5],
      ['loc_b', 'open', 3],
    ]);
    const opened = d.alerts[0];
    expect(opened).toEqual({
      id: expect.stringMatching(/^alr_.+_loc_a$/),
      sku: 'FLOUR',
      kind: 'material',
      locationId: 'loc_a',
      status: 'open',
      openedAt: day(1),
      closedAt: null,
      availableAtOpen: 5,
      availableAtClose: null,
      reorderPoint: 5,
      minStock: 2,
      reorderQuantity: 20,
      unit: 'kg',
    });
    expect(d.hasAlerts).toBe(true);

    d = transfer(d, f, 'loc_a', 'loc_b', 1000, day(2)); // still low at loc_a: no second alert
    expect(d.alerts.filter((a) => a.locationId === 'loc_a')).toHaveLength(1);

    d = receive(d, f, { minor: 1001, lot: { costPerUnit: 2 } }, day(3)); // 4 → 5.001 > 5: closes
    const closed = d.alerts.find((a) => a.locationId === 'loc_a')!;
    expect(closed).toMatchObject({ status: 'closed', closedAt: day(3), availableAtOpen: 5, availableAtClose: 5.001 });
    expect(d.alerts.find((a) => a.locationId === 'loc_b')!.status).toBe('open'); // untouched by that receipt

    d = transfer(d, f, 'loc_a', 'loc_b', 1, day(4)); // falls again: a new alert for loc_a; loc_b 4.001 still open
    expect(d.alerts.map((a) => [a.locationId, a.status])).toEqual([
      ['loc_a', 'closed'],
      ['loc_b', 'open'],
      ['loc_a', 'open'],
    ]);
  });

  test('reserved stock counts against available', () => {
    const f = alerting();
    const d = doc(f, [location('loc_a', [lot('A', 9000, 1, 0)], { reservedQty: 4000, reorderPoint: 5 })]);
    evaluateAlerts(d, f, 'mmv_test', T0);
    expect(d.alerts.map((a) => [a.status, a.availableAtOpen])).toEqual([['open', 5]]);
  });

  test("the location's own reorder point is used", () => {
    const f = alerting({ reorderPoint: 100 });
    const d = doc(f, [location('loc_a', [lot('A', 9000, 1, 0)], { reorderPoint: 1 })]);
    evaluateAlerts(d, f, 'mmv_test', T0);
    expect(d.alerts).toEqual([]);
  });

  test('disabled alerts never open', () => {
    const f = alerting({ alertEnabled: false });
    let d = receive(doc(f), f, { minor: 1000, lot: { costPerUnit: 2 } });
    d = transfer(d, f, 'loc_a', 'loc_b', 1000, day(1));
    expect(d.alerts).toEqual([]);
    expect(d.hasAlerts).toBe(false);
  });

  test('closed alerts: the document keeps the 5 newest, and every open one', () => {
    const f = alerting();
    const closed = (i: number): StockAlert => ({
      id: `old-${i}`,
      sku: 'FLOUR',
      kind: 'material',
      locationId: 'loc_z',
      status: 'closed',
      openedAt: day(-100 + i),
      closedAt: day(-99 + i),
      availableAtOpen: 1,
      availableAtClose: 9,
      reorderPoint: 5,
      minStock: 2,
      reorderQuantity: 20,
      unit: 'kg',
    });
    const d = doc(f, [location('loc_a', [lot('A', 1000, 1, 0)], { reorderPoint: 5 })]);
    d.alerts = Array.from({ length: 25 }, (_, i) => closed(i));
    evaluateAlerts(d, f, 'mmv_test', T0);
    expect(d.alerts).toHaveLength(6);
    expect(d.alerts.filter((a) => a.status === 'closed').map((a) => a.id)).toEqual(
      Array.from({ length: 5 }, (_, i) => `old-${i + 20}`),
    );
    expect(d.alerts[5]).toMatchObject({ locationId: 'loc_a', status: 'open' });
  });
});

describe('consumption takes lots and records their worth; a return puts exactly them back', () => {
  // two lots at loc_a: 2 kg received on day -10 at 1.00, 2 kg on day -5 at 2.00; 3 kg consumed
  const twoLots = (f: StockFacts) =>
    doc(f, [location('loc_a', [lot('OLD', 2000, 1, -10), lot('NEW', 2000, 2, -5)])], {
      currentCost: 1.5,
      calculatedAt: day(-5),
      lastPurchaseCost: 2,
      history: [],
    });
  const consume = (d: StockDoc, f: StockFacts, minor: number, method?: 'fifo' | 'lifo') =>
    applyConsumption(d, f, { locationId: 'loc_a', minor, method }, movement(++seq, 'consumption', 'loc_a', minor), T0);

  test.each([
    [
      'fifo',
      undefined,
      [
        ['OLD', 2],
        ['NEW', 1],
      ],
      4,
      2,
    ],
    [
      'lifo',
      undefined,
      [
        ['NEW', 2],
        ['OLD', 1],
      ],
      5,
      1,
    ],
    [
      'average',
      undefined,
      [
        ['OLD', 2],
        ['NEW', 1],
      ],
      4.5,
      2,
    ],
    [
      'last_purchase',
      undefined,
      [
        ['OLD', 2],
        ['NEW', 1],
      ],
      6,
      2,
    ],
    [
      'average',
      'lifo',
      [
        ['NEW', 2],
        ['OLD', 1],
      ],
      5,
      1,
    ],
  ] as const)(
    '3 kg from 2 kg at 1.00 and 2 kg at 2.00, costing %s, method %s: lots %j, worth %d, current cost after %d',
    (method, chosen, lots, worth, costAfter) => {
      const f = costed(method);
      const after = consume(twoLots(f), f, 3000, chosen);
      const m = after.journal[after.journal.length - 1];
      expect(m.lots.map((l) => [l.lotNumber, l.quantity])).toEqual(lots);
      expect(m.cost).toEqual({ total: worth, currency: 'USD' });
      expect(after.locations[0].quantity).toBe(1000);
      if (method === 'fifo' || method === 'lifo') expect(after.costing!.currentCost).toBe(costAfter);
    },
  );

  test('a supply is worth its price: 3 pieces at 0.35 are 1.05', () => {
    const f = facts({ kind: 'supply', unit: 'pza', precision: 0, costing: null, price: 0.35 });
    const d = doc(f, [location('loc_a', [], { quantity: 10 })]);
    const after = applyConsumption(
      d,
      f,
      { locationId: 'loc_a', minor: 3 },
      movement(++seq, 'consumption', 'loc_a', 3),
      T0,
    );
    expect(after.locations[0].quantity).toBe(7);
    expect(after.journal[0].cost).toEqual({ total: 1.05, currency: 'USD' });
  });

  test('more than is available is insufficient-stock naming required and available; expired lots are not available', () => {
    const f = costed('fifo');
    const d = doc(f, [location('loc_a', [lot('GONE', 1000, 1, -10, -1), lot('OK', 500, 1, -5)])]);
    try {
      consume(d, f, 1000);
      throw new Error('expected a refusal');
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('insufficient-stock');
      expect((err as AppError).extra.details).toMatchObject({ required: 1, available: 0.5, unit: 'kg' });
    }
  });

  test('a return puts back the very lots, even one pruned since; a return of what never applied is a void', () => {
    const f = costed('fifo');
    const taken = consume(twoLots(f), f, 3000);
    const consumed = taken.journal[taken.journal.length - 1];
    // OLD is depleted; drop it from the document as pruning would
    const pruned = structuredClone(taken);
    pruned.locations[0].lots = pruned.locations[0].lots.filter((l) => l.lotNumber !== 'OLD');
    const back = applyReturn(pruned, f, consumed, movement(++seq, 'return', 'loc_a', 0), T0);
    expect(back.locations[0].quantity).toBe(4000);
    expect(back.locations[0].lots.map((l) => [l.lotNumber, l.quantity, l.costPerUnit]).sort()).toEqual([
      ['NEW', 2000, 2],
      ['OLD', 2000, 1],
    ]);
    expect(back.costing!.currentCost).toBe(1);
    const voided = applyReturn(twoLots(f), f, undefined, movement(++seq, 'return', 'loc_a', 0), T0);
    expect(voided.locations[0].quantity).toBe(4000);
    expect(voided.journal[voided.journal.length - 1]).toMatchObject({ type: 'return', voided: true, quantity: 0 });
  });
});

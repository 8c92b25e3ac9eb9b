import { ApiClient, type HttpResult } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { Adjustments, adjustments } from '../../shared/inventory/adjustments';
import { stockMovements } from '../../shared/inventory/collections';
import { counts, type CountDoc } from '../../shared/inventory/counts';
import { inventoryHandlers } from '../../shared/inventory/handlers';
import { Ledger } from '../../shared/inventory/ledger';
import { lotCosts, valueOnHand } from '../../shared/inventory/lots';
import { Locations, locations, systemLocationId } from '../../shared/locations/locations';

/** Counts, lots and their valuation, stats and reports through HTTP on the real API process. */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let other: string;
let readOnly: string;
let noInventory: string;
let tdb: TenantDb;
let ledger: Ledger;
let main: string;
const store = `loc_cntstore_${Date.now().toString(36)}`;
const P = `CLR${Date.now().toString(36).toUpperCase()}`;
let n = 0;

const inv = (res: HttpResult, status: number, code: string) => expectError(res, status, code, 'inventory');

async function product(body: Record<string, unknown>) {
  const res = await api.post('/products', { title: { value: String(body.sku) }, price: 10, ...body });
  if (res.status !== 201) throw new Error(`product → ${res.status} ${res.text}`);
  return res.body;
}

async function freshSku(stock: number, cost = 4): Promise<string> {
  const sku = `${P}-S${++n}`;
  await product({ sku, cost });
  if (stock > 0) await ledger.apply({ sku, locationId: main, delta: stock, reason: 'restock', actor: 'test' });
  return sku;
}

async function openCount(body: Record<string, unknown> = {}) {
  const res = await api.post('/inventory/counts', {
    name: `Count ${++n}`,
    locationId: main,
    countType: 'cycle',
    ...body,
  });
  if (res.status !== 201) throw new Error(`count → ${res.status} ${res.text}`);
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
});
afterAll(() => deps.close());

describe('counts', () => {
  test('create: 201 open with no items; read and list it', async () => {
    const res = await api.post('/inventory/counts', { name: 'Aisle 3', locationId: store, countType: 'spot' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Aisle 3',
      locationId: store,
      countType: 'spot',
      status: 'open',
      items: [],
      summary: null,
    });
    expect(res.body.id).toMatch(/^cnt_[0-9A-Z]{26}$/);
    expect(Number.isNaN(Date.parse(res.body.createdAt))).toBe(false);
    expect((await api.get(`/inventory/counts/${res.body.id}`)).body).toEqual(res.body);
    const list = await api.get(`/inventory/counts?locationId=${store}&status=open`);
    expect(list.status).toBe(200);
    expect(list.body.counts.map((c: { id: string }) => c.id)).toContain(res.body.id);
    expect(list.body).toMatchObject({ page: 1, limit: 50 });
    expect(list.body.totalCount).toBeGreaterThanOrEqual(1);
    for (const countType of ['full', 'cycle'])
      expect((await api.post('/inventory/counts', { name: 'x', locationId: main, countType })).status).toBe(201);
  });

  const base = () => ({ name: 'Weekly', locationId: main, countType: 'full' });
  const without = (...f: string[]) => Object.fromEntries(Object.entries(base()).filter(([k]) => !f.includes(k)));
  const cases: [string, () => unknown, number, string][] = [
    ['no body', () => undefined, 400, 'bad-request/missing-body'],
    ['an empty object', () => ({}), 400, 'bad-request/missing-body'],
    ['no name', () => without('name'), 400, 'bad-request/missing-name'],
    ['a blank name', () => ({ ...base(), name: ' ' }), 400, 'bad-request/missing-name'],
    ['no locationId', () => without('locationId'), 400, 'bad-request/missing-location'],
    ['no countType', () => without('countType'), 400, 'bad-request/missing-type'],
    ['nothing but countType: name first', () => ({ countType: 'full' }), 400, 'bad-request/missing-name'],
    [
      'no location and no type: location first',
      () => without('locationId', 'countType'),
      400,
      'bad-request/missing-location',
    ],
    ['an unknown countType', () => ({ ...base(), countType: 'annual' }), 400, 'bad-request/invalid-type'],
    ['an unknown field', () => ({ ...base(), items: [] }), 400, 'bad-request'],
    ['an unknown location', () => ({ ...base(), locationId: 'loc_nowhere' }), 404, 'not-found/location'],
  ];
  test.each(cases.map(([name, body, status, code]) => [name, status, code, body] as const))(
    'create with %s → %i %s, nothing written',
    async (_name, status, code, body) => {
      const before = await tdb.collection(counts).countDocuments({});
      inv(await api.post('/inventory/counts', body()), status, code);
      expect(await tdb.collection(counts).countDocuments({})).toBe(before);
    },
  );

  test('items: expected is the balance when counted; a SKU counted again is replaced', async () => {
    const a = await freshSku(10);
    const b = await freshSku(5);
    const count = await openCount();
    const first = await api.put(`/inventory/counts/${count.id}/items`, {
      countItems: [
        { sku: a.toLowerCase(), countedQuantity: 7 },
        { sku: b, countedQuantity: 5 },
      ],
    });
    expect(first.status).toBe(200);
    expect(first.body.items.map((i: any) => [i.sku, i.expectedQuantity, i.countedQuantity, i.difference])).toEqual([
      [a, 10, 7, -3],
      [b, 5, 5, 0],
    ]);
    await ledger.apply({ sku: a, locationId: main, delta: 2, reason: 'restock', actor: 'test' });
    const again = await api.put(`/inventory/counts/${count.id}/items`, {
      countItems: [{ sku: a, countedQuantity: 11 }],
    });
    expect(again.body.items.map((i: any) => [i.sku, i.expectedQuantity, i.countedQuantity, i.difference])).toEqual([
      [b, 5, 5, 0],
      [a, 12, 11, -1],
    ]);
    expect((await api.get(`/inventory/counts/${count.id}`)).body.items).toEqual(again.body.items);
    expect(await ledger.onHand(a, main)).toBe(12); // counting moves nothing
  });

  test('items: concurrent PUTs of different SKUs all land', async () => {
    const skus = await Promise.all([1, 2, 3, 4].map(() => freshSku(1)));
    const count = await openCount();
    const results = await Promise.all(
      skus.map((sku) => api.put(`/inventory/counts/${count.id}/items`, { countItems: [{ sku, countedQuantity: 2 }] })),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(
      (await api.get(`/inventory/counts/${count.id}`)).body.items.map((i: { sku: string }) => i.sku).sort(),
    ).toEqual([...skus].sort());
  });

  test('items: invalid or empty → 400 bad-request/invalid-items; unknown SKU 404, managed 403, unknown count 404; nothing written', async () => {
    const sku = await freshSku(1);
    const managed = await freshSku(1);
    await tdb.collection(inventoryHandlers).insertOne({
      _id: `ih_${managed}`,
      name: 'ERP',
      type: 'erp',
      skus: [managed],
      locationIds: [],
      status: 'active',
      lastSyncAt: null,
      syncCount: 0,
      createdAt: new Date(),
    });
    const count = await openCount();
    await api.put(`/inventory/counts/${count.id}/items`, { countItems: [{ sku, countedQuantity: 1 }] });
    const before = await tdb.collection(counts).findOne({ _id: count.id });
    const invalid: unknown[] = [
      undefined,
      {},
      { countItems: [] },
      { countItems: 'x' },
      { countItems: [{ countedQuantity: 1 }] },
      { countItems: [{ sku: '', countedQuantity: 1 }] },
      { countItems: [{ sku }] },
      { countItems: [{ sku, countedQuantity: -1 }] },
      { countItems: [{ sku, countedQuantity: '3' }] },
      { countItems: [{ sku, countedQuantity: 2.5 }] },
      { countItems: [{ sku, countedQuantity: 1, note: 'x' }] },
      {
        countItems: [
          { sku, countedQuantity: 1 },
          { sku: sku.toLowerCase(), countedQuantity: 2 },
        ],
      },
      { countItems: [null] },
    ];
    for (const body of invalid) {
      const res = await api.put(`/inventory/counts/${count.id}/items`, body);
      expect([JSON.stringify(body), res.status, res.body.code]).toEqual([
        JSON.stringify(body),
        400,
        'bad-request/invalid-items',
      ]);
    }
    inv(
      await api.put(`/inventory/counts/${count.id}/items`, { countItems: [{ sku, countedQuantity: 1 }], extra: true }),
      400,
      'bad-request',
    );
    inv(
      await api.put(`/inventory/counts/${count.id}/items`, {
        countItems: [
          { sku, countedQuantity: 3 },
          { sku: `${P}-NOPE`, countedQuantity: 1 },
        ],
      }),
      404,
      'not-found',
    );
    inv(
      await api.put(`/inventory/counts/${count.id}/items`, {
        countItems: [
          { sku, countedQuantity: 3 },
          { sku: managed, countedQuantity: 1 },
        ],
      }),
      403,
      'forbidden/inventory-handler',
    );
    inv(
      await api.put('/inventory/counts/cnt_NOPE/items', { countItems: [{ sku, countedQuantity: 1 }] }),
      404,
      'not-found',
    );
    expect(await tdb.collection(counts).findOne({ _id: count.id })).toEqual(before);
  });

  test('complete: each difference becomes an approved count_correction applied through the ledger; completed twice is 409', async () => {
    const over = await freshSku(10);
    const same = await freshSku(5);
    const fresh = await freshSku(0);
    const count = await openCount();
    await api.put(`/inventory/counts/${count.id}/items`, {
      countItems: [
        { sku: over, countedQuantity: 8 },
        { sku: same, countedQuantity: 5 },
        { sku: fresh, countedQuantity: 4 },
      ],
    });
    const res = await api.post(`/inventory/counts/${count.id}/complete`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'completed', summary: { itemsCounted: 3, discrepancies: 2 } });
    expect(res.body.summary.adjustments).toHaveLength(2);
    expect(typeof res.body.completedAt).toBe('string');
    expect([
      await ledger.onHand(over, main),
      await ledger.onHand(same, main),
      await ledger.onHand(fresh, main),
    ]).toEqual([8, 5, 4]);
    const adj = await Promise.all(
      res.body.summary.adjustments.map((id: string) => api.get(`/inventory/adjustments/${id}`)),
    );
    expect(
      adj
        .map((a) => [
          a.body.sku,
          a.body.reason,
          a.body.status,
          a.body.applied,
          a.body.currentQuantity,
          a.body.newQuantity,
          a.body.difference,
          a.body.reference,
        ])
        .sort(),
    ).toEqual(
      [
        [over, 'count_correction', 'approved', true, 10, 8, -2, { type: 'count', id: count.id }],
        [fresh, 'count_correction', 'approved', true, 0, 4, 4, { type: 'count', id: count.id }],
      ].sort(),
    );
    const moves = await tdb
      .collection(stockMovements)
      .find({ reason: 'count_correction', 'reference.id': count.id })
      .toArray();
    expect(moves.map((m) => [m.idempotencyKey, m.delta]).sort()).toEqual(
      [
        [`cnt:${count.id}:${fresh}`, 4],
        [`cnt:${count.id}:${over}`, -2],
      ].sort(),
    );
    const before = {
      adj: await tdb.collection(adjustments).countDocuments({}),
      mov: await tdb.collection(stockMovements).countDocuments({}),
    };
    inv(await api.post(`/inventory/counts/${count.id}/complete`), 409, 'conflict/count-completed');
    inv(
      await api.put(`/inventory/counts/${count.id}/items`, { countItems: [{ sku: same, countedQuantity: 1 }] }),
      409,
      'conflict/count-completed',
    );
    expect({
      adj: await tdb.collection(adjustments).countDocuments({}),
      mov: await tdb.collection(stockMovements).countDocuments({}),
    }).toEqual(before);
    // its corrections are approved already: approving or rejecting them again is 409
    inv(
      await api.post(`/inventory/adjustments/${res.body.summary.adjustments[0]}/approve`),
      409,
      'conflict/adjustment-approved',
    );
  });

  test('movements between counting and completing stay counted: a correction moves the balance by the difference, never below zero', async () => {
    const sold = await freshSku(10);
    const received = await freshSku(10);
    const emptied = await freshSku(10);
    const count = await openCount();
    await api.put(`/inventory/counts/${count.id}/items`, {
      countItems: [
        { sku: sold, countedQuantity: 8 }, // 2 missing when counted
        { sku: received, countedQuantity: 9 }, // 1 missing
        { sku: emptied, countedQuantity: 7 }, // 3 missing
      ],
    });
    // after the count: 3 of `sold` sold, 5 of `received` received, 9 of `emptied` sold
    await ledger.apply({ sku: sold, locationId: main, delta: -3, reason: 'sale', actor: 'test' });
    await ledger.apply({ sku: received, locationId: main, delta: 5, reason: 'restock', actor: 'test' });
    await ledger.apply({ sku: emptied, locationId: main, delta: -9, reason: 'sale', actor: 'test' });
    const res = await api.post(`/inventory/counts/${count.id}/complete`);
    expect(res.status).toBe(200);
    // 10 − 3 − 2 = 5; 10 + 5 − 1 = 14; 1 − 3 stops at 0
    expect([
      await ledger.onHand(sold, main),
      await ledger.onHand(received, main),
      await ledger.onHand(emptied, main),
    ]).toEqual([5, 14, 0]);
    const adj = await Promise.all(
      res.body.summary.adjustments.map((id: string) => api.get(`/inventory/adjustments/${id}`)),
    );
    expect(adj.map((a) => [a.body.sku, a.body.difference, a.body.appliedDelta, a.body.quantityAfter]).sort()).toEqual(
      [
        [sold, -2, -2, 5],
        [received, -1, -1, 14],
        [emptied, -3, -1, 0],
      ].sort(),
    );
  });

  test('two concurrent completes: one 200, one 409 conflict/count-completed; every correction applied once', async () => {
    const skus = await Promise.all([10, 20, 30, 40, 50].map((s) => freshSku(s)));
    const count = await openCount();
    await api.put(`/inventory/counts/${count.id}/items`, {
      countItems: skus.map((sku, i) => ({ sku, countedQuantity: i * 3 })),
    });
    const results = await Promise.all([
      api.post(`/inventory/counts/${count.id}/complete`),
      api.post(`/inventory/counts/${count.id}/complete`),
      api.post(`/inventory/counts/${count.id}/complete`),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    for (const r of results.filter((r) => r.status === 409)) inv(r, 409, 'conflict/count-completed');
    const done = results.find((r) => r.status === 200)!.body;
    expect(done.summary).toMatchObject({ itemsCounted: 5, discrepancies: 5 });
    expect(await Promise.all(skus.map((sku) => ledger.onHand(sku, main)))).toEqual([0, 3, 6, 9, 12]);
    for (const sku of skus) {
      const moves = await tdb.collection(stockMovements).find({ sku }).toArray();
      expect(moves.map((m) => m.idempotencyKey).filter((k) => k.startsWith('cnt:'))).toEqual([
        `cnt:${count.id}:${sku}`,
      ]);
    }
    expect(await tdb.collection(adjustments).countDocuments({ 'reference.id': count.id })).toBe(5);
  });

  test('a completion that stopped half-way is finished by the next complete, without applying anything twice', async () => {
    const a = await freshSku(10);
    const b = await freshSku(10);
    const count = await openCount();
    await api.put(`/inventory/counts/${count.id}/items`, {
      countItems: [
        { sku: a, countedQuantity: 1 },
        { sku: b, countedQuantity: 2 },
      ],
    });
    // as if a completion claimed it, applied the first correction, and died: lease over
    const col = tdb.collection(counts);
    await col.updateById(count.id, { $set: { status: 'completing', leaseUntil: new Date(Date.now() - 1000) } });
    const doc = (await col.findOne({ _id: count.id })) as CountDoc;
    await new Adjustments(tdb, 'crashed').correctFromCount(doc, doc.items[0]);
    expect(await ledger.onHand(a, main)).toBe(1);
    const res = await api.post(`/inventory/counts/${count.id}/complete`);
    expect(res.status).toBe(200);
    expect(res.body.summary).toMatchObject({ itemsCounted: 2, discrepancies: 2 });
    expect([await ledger.onHand(a, main), await ledger.onHand(b, main)]).toEqual([1, 2]);
    expect(await tdb.collection(stockMovements).countDocuments({ sku: a })).toBe(2); // the seed and one correction
    expect(await tdb.collection(adjustments).countDocuments({ 'reference.id': count.id })).toBe(2);
  });

  test('complete: unknown count 404; a SKU an integration took over since counting: 403 and nothing written', async () => {
    inv(await api.post('/inventory/counts/cnt_NOPE/complete'), 404, 'not-found');
    const sku = await freshSku(3);
    const count = await openCount();
    await api.put(`/inventory/counts/${count.id}/items`, { countItems: [{ sku, countedQuantity: 1 }] });
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
    inv(await api.post(`/inventory/counts/${count.id}/complete`), 403, 'forbidden/inventory-handler');
    expect((await api.get(`/inventory/counts/${count.id}`)).body.status).toBe('open');
    expect(await ledger.onHand(sku, main)).toBe(3);
  });
});

describe('lots and valuation', () => {
  let sku: string;
  let productId: string;
  let productBody: Record<string, unknown>;
  const lotNumbers: string[] = [];

  /** Receives stock with an approved adjustment (which notes the product's cost at that moment). */
  async function receiveTo(newQuantity: number) {
    const adj = await api.post('/inventory/adjustments', { locationId: main, sku, newQuantity, reason: 'restock' });
    expect((await api.post(`/inventory/adjustments/${adj.body.id}/approve`)).status).toBe(200);
    lotNumbers.push(`adj:${adj.body.id}`);
  }
  async function setCost(cost: number) {
    expect((await api.put(`/products/${productId}`, { ...productBody, cost })).status).toBe(200);
  }

  beforeAll(async () => {
    sku = `${P}-LOTS`;
    productBody = { sku, title: { value: 'Lots' }, price: 20, cost: 2 };
    productId = (await product(productBody)).id;
    // receipts: 10 @ 2, 5 @ 3, then 3 sold, then 4 @ 5 → 16 on hand
    await receiveTo(10);
    await setCost(3);
    await receiveTo(15);
    await ledger.apply({
      sku,
      locationId: main,
      delta: -3,
      reason: 'sale',
      actor: 'test',
      idempotencyKey: `sale-${sku}`,
    });
    await setCost(5);
    await receiveTo(16);
    expect(await ledger.onHand(sku, main)).toBe(16);
  });

  test('GET /inventory/lots: every receipt, newest first, with the cost noted when it came in', async () => {
    const res = await api.get(`/inventory/lots?sku=${sku.toLowerCase()}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ totalCount: 3, page: 1, limit: 50 });
    expect(
      res.body.lots.map((l: any) => [
        l.lotNumber,
        l.sku,
        l.locationId,
        l.quantity,
        l.costPerUnit,
        l.costSource,
        l.reason,
      ]),
    ).toEqual([
      [lotNumbers[2], sku, main, 4, 5, 'recorded', 'restock'],
      [lotNumbers[1], sku, main, 5, 3, 'recorded', 'restock'],
      [lotNumbers[0], sku, main, 10, 2, 'recorded', 'restock'],
    ]);
    expect(Number.isNaN(Date.parse(res.body.lots[0].receivedAt))).toBe(false);
    const paged = await api.get(`/inventory/lots?sku=${sku}&locationId=${main}&limit=1&page=3`);
    expect(paged.body.lots.map((l: any) => l.lotNumber)).toEqual([lotNumbers[0]]);
    expect((await api.get(`/inventory/lots?sku=${sku}&locationId=${store}`)).body).toMatchObject({
      lots: [],
      totalCount: 0,
    });
  });

  test('GET /inventory/lots/{lotNumber}: one lot; a sale, an unknown number or another tenant’s lot is 404', async () => {
    const res = await api.get(`/inventory/lots/${encodeURIComponent(lotNumbers[1])}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ lotNumber: lotNumbers[1], sku, locationId: main, quantity: 5, costPerUnit: 3 });
    inv(await api.get(`/inventory/lots/${encodeURIComponent(`sale-${sku}`)}`), 404, 'not-found');
    inv(await api.get('/inventory/lots/nope'), 404, 'not-found');
    inv(await api.as(other).get(`/inventory/lots/${encodeURIComponent(lotNumbers[1])}`), 404, 'not-found');
    expect((await api.as(other).get('/inventory/lots')).body).toMatchObject({ lots: [], totalCount: 0 });
  });

  test('valuation by hand: FIFO keeps the newest receipts, LIFO the oldest, average the weighted receipt cost', async () => {
    const v = (method: string) => api.get(`/inventory/lots/sku/${sku}/valuation?locationId=${main}&method=${method}`);
    const fifo = await v('fifo');
    expect(fifo.status).toBe(200);
    // 4 @ 5 + 5 @ 3 + 7 @ 2 = 20 + 15 + 14 = 49
    expect(fifo.body).toMatchObject({
      sku,
      locationId: main,
      method: 'fifo',
      quantity: 16,
      totalValue: 49,
      unitCost: 3.0625,
    });
    expect(fifo.body.lots.map((l: any) => [l.lotNumber, l.remaining, l.costPerUnit, l.value])).toEqual([
      [lotNumbers[0], 7, 2, 14],
      [lotNumbers[1], 5, 3, 15],
      [lotNumbers[2], 4, 5, 20],
    ]);
    // 10 @ 2 + 5 @ 3 + 1 @ 5 = 20 + 15 + 5 = 40
    const lifo = await v('lifo');
    expect(lifo.body).toMatchObject({ method: 'lifo', quantity: 16, totalValue: 40, unitCost: 2.5 });
    expect(lifo.body.lots.map((l: any) => [l.lotNumber, l.remaining, l.value])).toEqual([
      [lotNumbers[0], 10, 20],
      [lotNumbers[1], 5, 15],
      [lotNumbers[2], 1, 5],
    ]);
    // (10·2 + 5·3 + 4·5) / 19 = 55/19 = 2.894736…; × 16 = 46.3157…
    const avg = await v('average');
    expect(avg.body).toMatchObject({ method: 'average', quantity: 16, totalValue: 46.32, unitCost: 2.8947 });
    expect((await api.get(`/inventory/lots/sku/${sku.toLowerCase()}/valuation?locationId=${main}`)).body.method).toBe(
      'fifo',
    );
  });

  test('valuation with nothing on hand is 0; a lot whose path noted no cost uses the current catalog cost', async () => {
    const empty = await api.get(`/inventory/lots/sku/${sku}/valuation?locationId=${store}&method=average`);
    expect(empty.body).toMatchObject({ quantity: 0, totalValue: 0, lots: [] });
    await ledger.apply({
      sku,
      locationId: store,
      delta: 2,
      reason: 'transfer_in',
      actor: 'test',
      idempotencyKey: `direct-${sku}`,
    });
    const lot = await api.get(`/inventory/lots/${encodeURIComponent(`direct-${sku}`)}`);
    expect(lot.body).toMatchObject({ quantity: 2, costPerUnit: 5, costSource: 'catalog' });
    expect((await api.get(`/inventory/lots/sku/${sku}/valuation?locationId=${store}&method=lifo`)).body).toMatchObject({
      quantity: 2,
      totalValue: 10,
      unitCost: 5,
    });
  });

  test('valuation errors: 400 bad-request/missing-location, 404 not-found for an unknown SKU, 404 not-found/location, 400 for a bad method', async () => {
    inv(await api.get(`/inventory/lots/sku/${sku}/valuation`), 400, 'bad-request/missing-location');
    inv(
      await api.get(`/inventory/lots/sku/${sku}/valuation?method=fifo&locationId=`),
      400,
      'bad-request/missing-location',
    );
    inv(await api.get(`/inventory/lots/sku/${P}-NOPE/valuation?locationId=${main}`), 404, 'not-found');
    inv(await api.get(`/inventory/lots/sku/${sku}/valuation?locationId=loc_nowhere`), 404, 'not-found/location');
    inv(await api.get(`/inventory/lots/sku/${sku}/valuation?locationId=${main}&method=hifo`), 400, 'bad-request');
    inv(await api.as(other).get(`/inventory/lots/sku/${sku}/valuation?locationId=${main}`), 404, 'not-found');
  });

  test('valueOnHand: more on hand than every receipt values the rest at the fallback cost', () => {
    const at = (s: number) => new Date(1_700_000_000_000 + s * 1000);
    const receipts = [
      { lotNumber: 'a', quantity: 2, costPerUnit: 1, receivedAt: at(1) },
      { lotNumber: 'b', quantity: 3, costPerUnit: 2, receivedAt: at(2) },
    ];
    expect(valueOnHand(receipts, 7, 'fifo', 10)).toMatchObject({ quantity: 7, totalValue: 2 + 6 + 20 });
    expect(valueOnHand(receipts, 4, 'fifo', 10).lots.map((l) => [l.lotNumber, l.remaining])).toEqual([
      ['a', 1],
      ['b', 3],
    ]);
    expect(valueOnHand(receipts, 4, 'lifo', 10).lots.map((l) => [l.lotNumber, l.remaining])).toEqual([
      ['a', 2],
      ['b', 2],
    ]);
    expect(valueOnHand(receipts, 0, 'average', 10)).toMatchObject({
      quantity: 0,
      totalValue: 0,
      unitCost: 1.6,
      lots: [],
    });
  });
});

describe('stats and reports (a tenant of their own)', () => {
  let rApi: ApiClient;
  let rTenant: TenantDb;
  let rMain: string;
  const rStore = `loc_rstore_${Date.now().toString(36)}`;
  const R = `${P}R`;
  const A = `${R}-A`; // 3 at main, min 5 (default): low
  const B = `${R}-B`; // 10 at main + 4 at store, min 2: in stock
  const CV = `${R}-C-V`; // a variant, 15 at store, variant min 20: low
  const D = `${R}-D`; // 0 at main: out of stock
  let t0: Date;
  let t1: Date;

  beforeAll(async () => {
    const t = await deps.tenantWithKey();
    rApi = new ApiClient(t.key);
    rTenant = new TenantDb(deps.db, t.tenantId);
    rMain = (await new Locations(rTenant).system())._id;
    const now = new Date();
    await rTenant.collection(locations).insertOne({
      _id: rStore,
      name: 'Store',
      type: 'location',
      isDefault: false,
      isSystem: false,
      managedBy: null,
      createdAt: now,
      updatedAt: now,
    });
    const make = async (body: Record<string, unknown>) =>
      expect((await rApi.post('/products', { title: { value: String(body.sku) }, price: 10, ...body })).status).toBe(
        201,
      );
    await make({ sku: A, cost: 1 });
    await make({ sku: B, cost: 10, minAlertStock: 2 });
    await make({
      sku: `${R}-C`,
      cost: 99,
      variants: [{ sku: CV, title: { value: 'C variant' }, price: 10, position: 0, cost: 7, minAlertStock: 20 }],
    });
    await make({ sku: D, cost: 3 });
    await make({ sku: `${R}-E`, cost: 3 }); // never stocked: not tracked
    t0 = new Date();
    const l = new Ledger(rTenant);
    await l.apply({ sku: A, locationId: rMain, delta: 3, reason: 'restock', actor: 't' });
    // B at main: two receipts whose costs were noted (6 @ 8, 4 @ 14 → average 10.4)
    await rTenant.collection(lotCosts).insertOne({ _id: `${t.tenantId}:rB1`, sku: B, costPerUnit: 8, recordedAt: now });
    await rTenant
      .collection(lotCosts)
      .insertOne({ _id: `${t.tenantId}:rB2`, sku: B, costPerUnit: 14, recordedAt: now });
    await l.apply({ sku: B, locationId: rMain, delta: 6, reason: 'restock', actor: 't', idempotencyKey: 'rB1' });
    await l.apply({ sku: B, locationId: rMain, delta: 4, reason: 'restock', actor: 't', idempotencyKey: 'rB2' });
    await l.apply({ sku: B, locationId: rStore, delta: 4, reason: 'restock', actor: 't' });
    await l.apply({ sku: CV, locationId: rStore, delta: 15, reason: 'restock', actor: 't' });
    await l.apply({ sku: D, locationId: rMain, delta: 2, reason: 'restock', actor: 't' });
    await l.apply({ sku: D, locationId: rMain, delta: -2, reason: 'sale', actor: 't' });
    t1 = new Date();
  });

  test('GET /inventory/stats', async () => {
    const res = await rApi.get('/inventory/stats');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ totalSkus: 4, totalUnits: 32, locations: 2, lowStock: 2, outOfStock: 1 });
  });

  test('stock-levels: one row per balance, narrowed by location', async () => {
    const res = await rApi.post('/inventory/reports', { reportType: 'stock-levels' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      reportType: 'stock-levels',
      locationId: null,
      totals: { rows: 5, skus: 4, units: 32 },
    });
    expect(Number.isNaN(Date.parse(res.body.generatedAt))).toBe(false);
    expect(res.body.rows.map((r: any) => [r.sku, r.locationId, r.onHand, r.minAlertStock, r.status])).toEqual(
      [
        [A, rMain, 3, 5, 'low-stock'],
        [B, rMain, 10, 2, 'in-stock'],
        [B, rStore, 4, 2, 'in-stock'],
        [CV, rStore, 15, 20, 'low-stock'],
        [D, rMain, 0, 5, 'out-of-stock'],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0])) || String(x[1]).localeCompare(String(y[1]))),
    );
    expect(res.body.rows.find((r: any) => r.sku === CV).name).toBe('C variant');
    const atStore = await rApi.post('/inventory/reports', { reportType: 'stock-levels', locationId: rStore });
    expect(atStore.body.rows.map((r: any) => r.sku)).toEqual([B, CV]);
    expect(atStore.body.totals).toEqual({ rows: 2, skus: 2, units: 19 });
  });

  test('low-stock and out-of-stock: one row per SKU over the scope', async () => {
    const low = await rApi.post('/inventory/reports', { reportType: 'low-stock' });
    expect(low.body.rows.map((r: any) => [r.sku, r.onHand, r.minAlertStock, r.shortfall])).toEqual([
      [A, 3, 5, 2],
      [CV, 15, 20, 5],
    ]);
    expect(low.body.totals).toEqual({ skus: 2, units: 18, shortfall: 7 });
    expect(
      (await rApi.post('/inventory/reports', { reportType: 'low-stock', locationId: rMain })).body.rows.map(
        (r: any) => r.sku,
      ),
    ).toEqual([A]);
    // at the store alone, B's 4 is still above its minimum of 2
    expect(
      (await rApi.post('/inventory/reports', { reportType: 'low-stock', locationId: rStore })).body.rows.map(
        (r: any) => r.sku,
      ),
    ).toEqual([CV]);
    const out = await rApi.post('/inventory/reports', { reportType: 'out-of-stock' });
    expect(out.body.rows.map((r: any) => [r.sku, r.onHand, r.locations])).toEqual([
      [D, 0, [{ locationId: rMain, onHand: 0 }]],
    ]);
    expect(out.body.totals).toMatchObject({ skus: 1 });
  });

  test('valuation: on hand × average receipt cost per balance', async () => {
    const res = await rApi.post('/inventory/reports', { reportType: 'valuation' });
    expect(res.body.rows.map((r: any) => [r.sku, r.locationId, r.onHand, r.unitCost, r.value])).toEqual(
      [
        [A, rMain, 3, 1, 3],
        [B, rMain, 10, 10.4, 104],
        [B, rStore, 4, 10, 40],
        [CV, rStore, 15, 7, 105],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0])) || String(x[1]).localeCompare(String(y[1]))),
    );
    expect(res.body.totals).toEqual({ rows: 4, skus: 3, units: 32, value: 252 });
    expect(
      (await rApi.post('/inventory/reports', { reportType: 'valuation', locationId: rStore })).body.totals,
    ).toEqual({
      rows: 2,
      skus: 2,
      units: 19,
      value: 145,
    });
  });

  test('movements: applied ledger entries in the period', async () => {
    const res = await rApi.post('/inventory/reports', {
      reportType: 'movements',
      from: t0.toISOString(),
      to: t1.toISOString(),
    });
    expect(res.status).toBe(200);
    expect(res.body.rows).toHaveLength(7);
    expect(res.body.totals).toEqual({ movements: 7, unitsIn: 34, unitsOut: 2, net: 32 });
    expect(res.body.truncated).toBe(false);
    expect(res.body.rows.find((r: any) => r.delta < 0)).toMatchObject({
      sku: D,
      delta: -2,
      reason: 'sale',
      balanceAfter: 0,
      locationId: rMain,
    });
    const atStore = await rApi.post('/inventory/reports', { reportType: 'movements', locationId: rStore });
    expect(atStore.body.totals).toEqual({ movements: 2, unitsIn: 19, unitsOut: 0, net: 19 });
    const later = await rApi.post('/inventory/reports', {
      reportType: 'movements',
      from: new Date(Date.now() + 60_000).toISOString(),
    });
    expect(later.body.rows).toEqual([]);
  });

  test('report errors: missing-body, missing-type, invalid-report, not-found/location, bad dates', async () => {
    inv(await rApi.post('/inventory/reports'), 400, 'bad-request/missing-body');
    inv(await rApi.post('/inventory/reports', {}), 400, 'bad-request/missing-body');
    inv(await rApi.post('/inventory/reports', { locationId: rMain }), 400, 'bad-request/missing-type');
    inv(await rApi.post('/inventory/reports', { reportType: 'inventory-turns' }), 400, 'bad-request/invalid-report');
    inv(await rApi.post('/inventory/reports', { reportType: 7 }), 400, 'bad-request/invalid-report');
    inv(
      await rApi.post('/inventory/reports', { reportType: 'stock-levels', locationId: 'loc_nowhere' }),
      404,
      'not-found/location',
    );
    inv(await rApi.post('/inventory/reports', { reportType: 'movements', from: 'yesterday' }), 400, 'bad-request');
    inv(
      await rApi.post('/inventory/reports', { reportType: 'movements', from: t1.toISOString(), to: t0.toISOString() }),
      400,
      'bad-request',
    );
    inv(await rApi.post('/inventory/reports', { reportType: 'movements', format: 'csv' }), 400, 'bad-request');
    inv(
      await rApi.post('/inventory/reports', undefined, {
        raw: '{"reportType":',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'bad-request/invalid-json',
    );
  });

  test('another tenant sees only its own figures', async () => {
    const res = await api.as(other).get('/inventory/stats');
    expect(res.body).toMatchObject({ totalSkus: 0, totalUnits: 0, lowStock: 0, outOfStock: 0 });
    expect((await api.as(other).post('/inventory/reports', { reportType: 'stock-levels' })).body.rows).toEqual([]);
    inv(
      await api.as(other).post('/inventory/reports', { reportType: 'stock-levels', locationId: rStore }),
      404,
      'not-found/location',
    );
  });
});

describe('tenancy and auth', () => {
  test("another tenant's count is 404 for every verb", async () => {
    const count = await openCount();
    inv(await api.as(other).get(`/inventory/counts/${count.id}`), 404, 'not-found');
    inv(
      await api
        .as(other)
        .put(`/inventory/counts/${count.id}/items`, { countItems: [{ sku: 'X', countedQuantity: 1 }] }),
      404,
      'not-found',
    );
    inv(await api.as(other).post(`/inventory/counts/${count.id}/complete`), 404, 'not-found');
    expect((await api.as(other).get('/inventory/counts')).body).toMatchObject({ counts: [], totalCount: 0 });
    expect((await api.get(`/inventory/counts/${count.id}`)).body.status).toBe('open');
  });

  test('401 bad-request/missing-tenant without a key; 403 without the scope', async () => {
    const count = await openCount();
    for (const [method, path] of [
      ['GET', '/inventory/counts'],
      ['POST', '/inventory/counts'],
      ['GET', '/inventory/lots'],
      ['GET', '/inventory/stats'],
      ['POST', '/inventory/reports'],
      ['GET', `/inventory/lots/sku/X/valuation?locationId=${main}`],
    ]) {
      inv(await api.as(null).request(method, path), 401, 'bad-request/missing-tenant');
    }
    const before = await tdb.collection(counts).countDocuments({});
    inv(
      await api.as(readOnly).post('/inventory/counts', { name: 'x', locationId: main, countType: 'full' }),
      403,
      'auth:permission_denied',
    );
    inv(
      await api
        .as(readOnly)
        .put(`/inventory/counts/${count.id}/items`, { countItems: [{ sku: 'X', countedQuantity: 1 }] }),
      403,
      'auth:permission_denied',
    );
    inv(await api.as(readOnly).post(`/inventory/counts/${count.id}/complete`), 403, 'auth:permission_denied');
    expect(await tdb.collection(counts).countDocuments({})).toBe(before);
    for (const path of [
      '/inventory/counts',
      `/inventory/counts/${count.id}`,
      '/inventory/lots',
      '/inventory/stats',
      `/inventory/lots/sku/X/valuation?locationId=${main}`,
    ]) {
      inv(await api.as(noInventory).get(path), 403, 'auth:permission_denied');
      expect((await api.as(readOnly).get(path.replace('/X/', `/${P}-LOTS/`))).status).toBe(200);
    }
    inv(
      await api.as(noInventory).post('/inventory/reports', { reportType: 'stock-levels' }),
      403,
      'auth:permission_denied',
    );
    expect((await api.as(readOnly).post('/inventory/reports', { reportType: 'stock-levels' })).status).toBe(200);
  });
});

describe('hostile input is a 4xx, never a 500, and writes nothing', () => {
  /** JSON nested 5,000 levels deep under `field`: the body parser refuses it (deeper than 64) before any handler runs. */
  const deeplyNested = (field: string, depth = 5000) => `{"${field}":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
  const asJson = { 'content-type': 'application/json' };

  test('a count body nested 5,000 levels deep is 400 bad-request', async () => {
    const before = await tdb.collection(counts).countDocuments({});
    inv(
      await api.post('/inventory/counts', undefined, { raw: deeplyNested('notes'), headers: asJson }),
      400,
      'bad-request',
    );
    expect(await tdb.collection(counts).countDocuments({})).toBe(before);
  });

  test('count items nested 5,000 levels deep are 400 bad-request; the count is unchanged', async () => {
    const count = await openCount();
    const before = await tdb.collection(counts).findOne({ _id: count.id });
    const res = await api.put(`/inventory/counts/${count.id}/items`, undefined, {
      raw: deeplyNested('countItems'),
      headers: asJson,
    });
    inv(res, 400, 'bad-request');
    expect(await tdb.collection(counts).findOne({ _id: count.id })).toEqual(before);
  });

  test('a report body nested 5,000 levels deep is 400 bad-request', async () => {
    inv(
      await api.post('/inventory/reports', undefined, { raw: deeplyNested('locationId'), headers: asJson }),
      400,
      'bad-request',
    );
  });

  test.each(['/inventory/counts', '/inventory/lots'])('page or limit 1e309 on %s is 400 bad-request', async (path) => {
    for (const query of [{ page: '1e309' }, { limit: '1e309' }]) {
      const res = await api.get(path, { query });
      inv(res, 400, 'bad-request');
      expect(res.body.field).toBe(Object.keys(query)[0]);
    }
  });
});

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { Held } from '../helpers/held-tenant-db';
import { systemLocationId } from '../../shared/locations/locations';
import { TenantDb } from '../../shared/db/tenant-db';
import { StockStore } from '../../shared/materials/stock';
import { materialConsumptions } from '../../shared/consumption/collections';
import { finishStaleConsumptions } from '../../shared/consumption/recovery';
import { ConsumptionService } from '../../shared/consumption/service';

/**
 * Materials stock and consumption where requests meet: a consumption another request is driving
 * (or whose driver died), plans made on this process's copy of the stock while another process
 * changed it, a date a JavaScript Date cannot hold, and one referenceId for two products.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let A: string;
const P = `RV${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key);
  A = systemLocationId(tenantId);
});
afterAll(() => deps.close());

type Body = Record<string, unknown>;

async function material(tag: string, extra: Body = {}): Promise<string> {
  const sku = `${P}-${tag}-${++n}`.toUpperCase();
  const res = await api.post('/products/materials', {
    sku,
    title: `Material ${tag}`,
    baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
    stockAlerts: { minStock: 0, reorderPoint: 0, reorderQuantity: 0, alertEnabled: false },
    ...extra,
  });
  if (res.status !== 201) throw new Error(`${res.status} ${res.text}`);
  return sku;
}

async function receive(sku: string, quantity: number, costPerUnit = 1) {
  const res = await api.post(`/products/materials/${sku}/stock/${A}`, { quantity, lot: { costPerUnit } });
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return res.body;
}

async function onHand(sku: string): Promise<number> {
  const res = await api.get(`/products/materials/${sku}/stock/${A}`);
  return res.status === 404 ? 0 : res.body.quantity;
}

async function product(tag: string, components: Body[]): Promise<string> {
  const sku = `${P}-${tag}-${++n}`.toUpperCase();
  const res = await api.post('/products', {
    sku,
    title: { value: `Product ${tag}` },
    price: 10,
    billOfMaterials: { consumptionMode: 'manual', yield: { quantity: 1, unit: 'pza' }, components },
  });
  if (res.status !== 201) throw new Error(`${res.status} ${res.text}`);
  return sku;
}

describe('ledger copy', () => {
  test('a journal copy that meets entries already in the ledger still copies the others (GET movements between receipts)', async () => {
    const sku = await material('LEDGER');
    for (let i = 0; i < 3; i++) await receive(sku, 1);
    // GET flushes the journal (3 entries) into the ledger
    expect((await api.get(`/products/materials/${sku}/movements`)).body.total).toBe(3);
    // 4th stays in the journal; 5th overflows it: entries 1-4 copied (1-3 already there), then dropped
    await receive(sku, 1);
    await receive(sku, 1);
    const rows = await deps.db.collection('material_movements').find({ tenantId, sku }).toArray();
    const res = await api.get(`/products/materials/${sku}/movements`);
    expect({ stored: rows.length, listed: res.body.total }).toEqual({ stored: 4, listed: 5 });
  });
});

describe('a consumption another request is driving', () => {
  test('a second identical BOM run while the first is between its take and its decision answers the first result, not 400', async () => {
    const flour = await material('FLOUR');
    const tenantDb = new TenantDb(deps.db, tenantId);
    // received in this process: the API process has no copy of the stock in memory
    await new StockStore(tenantDb, 'material').receive(flour, { actor: 'test', locationId: A, quantity: 1 });
    const p = await product('BREAD', [{ materialSku: flour, quantity: 1, unit: 'kg' }]);
    const body = { quantity: 1, referenceId: `ref-${P}-1`, referenceType: 'order' as const };
    // driver 1 (this process) takes the flour and waits just before its decision
    const held = new Held(deps.db, tenantId, {
      collection: 'material_consumptions',
      method: 'findOneAndUpdate',
      call: 1,
    });
    const first = new ConsumptionService(held, 'driver-1').runBom(p, body);
    await held.reached;
    // the same request again, through the API
    const second = await api.post(`/products/${p}/bom/consume`, body);
    held.release();
    const firstResult = await first;
    expect(firstResult.componentsConsumed[0].quantity).toBe(1);
    expect(await onHand(flour)).toBe(0);
    // stock was taken once for this reference: the second request should say so
    expect({ status: second.status, code: second.body.code }).toEqual({ status: 200, code: undefined });
    // the second decided it, but the first recorded it: only the second is a replay
    expect([firstResult.replayed, second.body.replayed]).toEqual([false, true]);
  });

  test('a retry of a BOM run whose driver died after taking one material finishes it and answers it', async () => {
    const a = await material('KA');
    const b = await material('KB');
    // received by another process (not the API): the API process that gets the retry has no copy in memory
    const store = new StockStore(new TenantDb(deps.db, tenantId), 'material');
    await store.receive(a, { actor: 'test', locationId: A, quantity: 1 });
    await store.receive(b, { actor: 'test', locationId: A, quantity: 1 });
    const p = await product('KIT', [
      { materialSku: a, quantity: 1, unit: 'kg' },
      { materialSku: b, quantity: 1, unit: 'kg' },
    ]);
    const body = { quantity: 1, referenceId: `ref-${P}-2` };
    // the driver dies before its decision (its call never returns)
    const held = new Held(deps.db, tenantId, {
      collection: 'material_consumptions',
      method: 'findOneAndUpdate',
      call: 1,
    });
    void new ConsumptionService(held, 'killed').runBom(p, body).catch(() => undefined);
    await held.reached;
    expect([await onHand(a), await onHand(b)]).toEqual([0, 0]);
    // the client retries: documented as finishing the run (or answering it)
    const retry = await api.post(`/products/${p}/bom/consume`, body);
    // the sweep finishes it a minute later
    await finishStaleConsumptions(deps.db, 0);
    const stored = await new TenantDb(deps.db, tenantId)
      .collection(materialConsumptions)
      .findOne({ _id: `${tenantId}:bom:${p}:production:${body.referenceId}` });
    expect(stored?.status).toBe('applied');
    const later = await api.post(`/products/${p}/bom/consume`, body);
    expect(later.status).toBe(200);
    expect(later.body.replayed).toBe(true);
    // the retry answered differently from how the run ended
    expect({ status: retry.status, code: retry.body.code }).toEqual({ status: 200, code: undefined });
  });
});

describe('a plan made on the stock this process last wrote', () => {
  test('the primary is taken, not its substitute, when another process received its stock', async () => {
    const butter = await material('BUTTER');
    const marg = await material('MARG');
    await receive(butter, 1);
    await receive(marg, 10);
    const p = await product('CROISSANT', [
      { materialSku: butter, quantity: 1, unit: 'kg', substitutes: [{ materialSku: marg, conversionFactor: 1 }] },
    ]);
    const here = new ConsumptionService(new TenantDb(deps.db, tenantId), 'test-process');
    await here.runBom(p, { quantity: 1, referenceId: 'r1' }); // this process remembers butter at 0 kg
    await receive(butter, 5); // another process (the API) receives 5 kg of butter
    const run = await here.runBom(p, { quantity: 1, referenceId: 'r2', allowSubstitutes: true });
    // butter covered it: no substitute should be used
    expect(run.componentsConsumed.map((c) => [c.materialSku, c.quantity, c.substituted])).toEqual([[butter, 1, false]]);
  });

  test('an optional component is taken when another process received its stock', async () => {
    const flour = await material('FLOUR2');
    const sugar = await material('SUGAR');
    await receive(flour, 10);
    await receive(sugar, 1);
    const p = await product('CAKE', [
      { materialSku: flour, quantity: 1, unit: 'kg' },
      { materialSku: sugar, quantity: 1, unit: 'kg', required: false },
    ]);
    const here = new ConsumptionService(new TenantDb(deps.db, tenantId), 'test-process');
    await here.runBom(p, { quantity: 1, referenceId: 'c1' }); // remembers sugar at 0 kg
    await receive(sugar, 5); // the API receives 5 kg of sugar
    const run = await here.runBom(p, { quantity: 1, referenceId: 'c2' });
    expect(run.componentsConsumed.map((c) => c.materialSku)).toEqual([flour, sugar]);
  });
});

describe('a plan made on a remembered copy showing more stock than there is', () => {
  test('an optional component another process emptied is left out, and the run goes through', async () => {
    const flour = await material('FLOUR3');
    const sugar = await material('SUGAR3');
    const store = new StockStore(new TenantDb(deps.db, tenantId), 'material');
    await store.receive(flour, { actor: 'test', locationId: A, quantity: 10 });
    await store.receive(sugar, { actor: 'test', locationId: A, quantity: 5 }); // remembered here: 5 kg
    const p = await product('CAKE3', [
      { materialSku: flour, quantity: 1, unit: 'kg' },
      { materialSku: sugar, quantity: 1, unit: 'kg', required: false },
    ]);
    const other = await api.post('/locations', { name: `Other ${P}`, type: 'location' });
    // the API moves all the sugar away: none left at A, unseen by this process
    const moved = await api.post('/products/materials/transfer', {
      materialSku: sugar,
      fromLocationId: A,
      toLocationId: other.body.id,
      quantity: 5,
    });
    expect(moved.status).toBe(200);
    const here = new ConsumptionService(new TenantDb(deps.db, tenantId), 'test-process');
    const run = await here.runBom(p, { quantity: 1, referenceId: 'o1' }).catch((e: unknown) => e);
    // the sugar is optional: the run should go through without it
    const r = run as { code?: string; componentsConsumed?: { materialSku: string }[] };
    expect({ code: r.code, skus: r.componentsConsumed?.map((c) => c.materialSku) }).toEqual({
      code: undefined,
      skus: [flour],
    });
  });

  test('a primary another process emptied gives way to its substitute (allowSubstitutes)', async () => {
    const butter = await material('BUTTER4');
    const marg = await material('MARG4');
    const store = new StockStore(new TenantDb(deps.db, tenantId), 'material');
    await store.receive(butter, { actor: 'test', locationId: A, quantity: 2 }); // remembered here: 2 kg
    await store.receive(marg, { actor: 'test', locationId: A, quantity: 10 });
    const p = await product('CROISSANT4', [
      { materialSku: butter, quantity: 1, unit: 'kg', substitutes: [{ materialSku: marg, conversionFactor: 1 }] },
    ]);
    const other = await api.post('/locations', { name: `Other2 ${P}`, type: 'location' });
    const moved = await api.post('/products/materials/transfer', {
      materialSku: butter,
      fromLocationId: A,
      toLocationId: other.body.id,
      quantity: 2,
    });
    expect(moved.status).toBe(200);
    const here = new ConsumptionService(new TenantDb(deps.db, tenantId), 'test-process');
    const run = await here
      .runBom(p, { quantity: 1, referenceId: 's1', allowSubstitutes: true })
      .catch((e: unknown) => e);
    const r = run as { code?: string; componentsConsumed?: { materialSku: string }[] };
    expect({ code: r.code, skus: r.componentsConsumed?.map((c) => c.materialSku) }).toEqual({
      code: undefined,
      skus: [marg],
    });
  });
});

describe('lots', () => {
  test('a receipt whose lot expirationDate is a leap second keeps a real expiry or is refused with 400', async () => {
    const sku = await material('LEAP', { lotTrackingEnabled: true });
    const res = await api.post(`/products/materials/${sku}/stock/${A}`, {
      quantity: 5,
      lot: { lotNumber: 'L1', costPerUnit: 1, expirationDate: '2030-06-30T23:59:60Z' },
    });
    const stock = await api.get(`/products/materials/${sku}/stock/${A}`);
    const raw = await deps.db.collection('material_stock').findOne({ _id: `${tenantId}:${sku}` } as never);
    const lot = (raw as any)?.locations?.[0]?.lots?.[0];
    // either refused as bad input, or stored with the date sent, 5 kg available
    expect({
      status: res.status,
      storedExpiry: lot?.expirationDate?.toISOString?.() ?? String(lot?.expirationDate),
      available: stock.body.available,
      shown: res.body.lots?.[0]?.expirationDate,
    }).toEqual({ status: 400, storedExpiry: 'undefined', available: undefined, shown: undefined });
  });
});

describe('consume route keys', () => {
  test('one referenceId used for two products (one order, two lines): the second is refused 409, never answered as the first', async () => {
    const m1 = await material('M1');
    const m2 = await material('M2');
    await receive(m1, 5);
    await receive(m2, 5);
    const p1 = await product('P1', [{ materialSku: m1, quantity: 1, unit: 'kg' }]);
    const p2 = await product('P2', [{ materialSku: m2, quantity: 1, unit: 'kg' }]);
    const options = { referenceId: `order-${P}`, referenceType: 'order' };
    const r1 = await api.post('/products/materials/consumption/consume', { productSku: p1, locationId: A, options });
    const r2 = await api.post('/products/materials/consumption/consume', { productSku: p2, locationId: A, options });
    expect(r1.status).toBe(200);
    expect([r2.status, r2.body.code]).toEqual([409, 'conflict']);
    expect(r2.body.message).toContain(p1);
    expect([await onHand(m1), await onHand(m2)]).toEqual([4, 5]);
    // the first product's retry is still answered as it was
    const again = await api.post('/products/materials/consumption/consume', { productSku: p1, locationId: A, options });
    expect([again.status, again.body.replayed]).toEqual([200, true]);
  });
});

import { ApiClient, type HttpResult } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * Material receipts: a retry under its Idempotency-Key names the first receipt; a receipt without
 * a lot joins the location's newest lot only when that is a layer of ours with its terms, so cost
 * layers keep their time order for LIFO and FIFO.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let A: string;
let B: string;
const P = `MRL${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey(undefined, 'materials receipt layers');
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key);
  A = systemLocationId(tenantId);
  const second = await api.post('/locations', { name: `Store ${P}`, type: 'location' });
  expect(second.status).toBe(201);
  B = second.body.id;
});
afterAll(() => deps.close());

type Body = Record<string, unknown>;
const alertsOff = { minStock: 0, reorderPoint: 0, reorderQuantity: 0, alertEnabled: false };

async function material(tag: string, extra: Body = {}): Promise<string> {
  const sku = `${P}-${tag}-${++n}`.toUpperCase();
  const res = await api.post('/products/materials', {
    sku,
    title: `Material ${tag}`,
    baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
    stockAlerts: alertsOff,
    ...extra,
  });
  expect(res.status).toBe(201);
  return sku;
}

const withKey = (key?: string) => (key ? { headers: { 'idempotency-key': key } } : undefined);
const receive = (sku: string, body: unknown, location = A, key?: string) =>
  api.post(`/products/materials/${sku}/stock/${location}`, body, withKey(key));
const at = (sku: string, location = A) => api.get(`/products/materials/${sku}/stock/${location}`);

async function ok(res: Promise<HttpResult> | HttpResult, status = 200): Promise<HttpResult> {
  const r = await res;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text}`);
  return r;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('receipt retried with its Idempotency-Key', () => {
  // docs/materials.md: "an `Idempotency-Key` maps to one movement id, so a retry answers the first
  // result (`replayed: true`) and moves nothing"
  test('names the first receipt (replayed: true, its movementId, 3 received) with the stock as it stands', async () => {
    const sku = await material('rcv-replay');
    const key = `${P}-rcv-replay`;
    const first = await ok(receive(sku, { quantity: 3 }, A, key));
    expect(first.body).toMatchObject({ quantity: 3, received: { quantity: 3, unit: 'kg' }, replayed: false });
    await ok(receive(sku, { quantity: 2 })); // another receipt, no key
    const again = await ok(receive(sku, { quantity: 3 }, A, key));
    // nothing moved again: the location holds 5
    expect((await ok(at(sku))).body.quantity).toBe(5);
    expect(again.body).toMatchObject({
      quantity: 5,
      movementId: first.body.movementId,
      received: { quantity: 3, unit: 'kg' },
      replayed: true,
    });
  });
});

describe('cost layers of a material without lot tracking', () => {
  // docs/materials.md: "Other receipts become cost layers (`RCV-…`)" and "*Costing:* `currentCost`
  // ... LIFO the newest's"; lots leave "in the costing order (LIFO newest first, the other methods
  // oldest first)"
  test('lifo: the last receipt (10 kg @ 2, after a named lot @ 4) is the newest layer: currentCost 2, and it leaves first', async () => {
    const sku = await material('lifo-layer', { costingMethod: 'lifo', initialCost: 1 });
    await ok(receive(sku, { quantity: 10, lot: { costPerUnit: 2 } }));
    await sleep(5);
    await ok(receive(sku, { quantity: 10, lot: { lotNumber: 'X', costPerUnit: 4 } }));
    await sleep(5);
    await ok(receive(sku, { quantity: 10, lot: { costPerUnit: 2 } }));
    const rec = await ok(api.get(`/products/materials/${sku}`));
    expect(rec.body.costing.currentCost.value).toBe(2);
    const moved = await ok(
      api.post('/products/materials/transfer', { materialSku: sku, fromLocationId: A, toLocationId: B, quantity: 10 }),
    );
    // LIFO: the 10 kg received last (@ 2) leave, not lot X (@ 4) received before them
    expect((moved.body.lots as { costPerUnit: number }[]).map((l) => l.costPerUnit)).toEqual([2]);
  });

  test('fifo: 25 kg leave as 10 @ 2 (first), 10 @ 4 (second), 5 @ 2 (third): the origin keeps 5 kg worth 10', async () => {
    const sku = await material('fifo-layer', { costingMethod: 'fifo', initialCost: 1 });
    await ok(receive(sku, { quantity: 10, lot: { costPerUnit: 2 } }));
    await sleep(5);
    await ok(receive(sku, { quantity: 10, lot: { lotNumber: 'X', costPerUnit: 4 } }));
    await sleep(5);
    await ok(receive(sku, { quantity: 10, lot: { costPerUnit: 2 } }));
    await ok(
      api.post('/products/materials/transfer', { materialSku: sku, fromLocationId: A, toLocationId: B, quantity: 25 }),
    );
    // what stays at A is the last 5 kg received (@ 2): worth 10, not lot X's 5 kg @ 4 = 20
    expect((await ok(at(sku))).body.valuation.totalValue).toBe(10);
  });
});

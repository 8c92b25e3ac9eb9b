import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * A lot put back by a cancelled order, or moved by a transfer, joins a lot of the same number at
 * its location only when cost, currency and expiry agree (docs/materials.md "Lots"); otherwise it
 * stays a lot of its own, at its own cost. Before, applyReturn and applyTransfer found the lot by
 * number only, so the 5 kg of L1 @ 1.00 an order had taken went back into a newer L1 @ 2.00
 * (received after the old L1 had been pruned) and were valued at 2.00 (16 instead of 11); a
 * transfer merged the same way at its destination.
 */
let deps: TestDeps;
let api: ApiClient;
let A: string;
let B: string;
const P = `MLT${Date.now().toString(36).toUpperCase()}`;
let n = 0;
beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'lot terms kept');
  api = new ApiClient(t.key);
  A = systemLocationId(t.tenantId);
  const second = await api.post('/locations', { name: `Store ${P}`, type: 'location' });
  expect(second.status).toBe(201);
  B = second.body.id;
});
afterAll(() => deps.close());

const alertsOff = { minStock: 0, reorderPoint: 0, reorderQuantity: 0, alertEnabled: false };
const receive = (sku: string, body: unknown, loc = A) => api.post(`/products/materials/${sku}/stock/${loc}`, body);
const at = async (sku: string, loc = A) => (await api.get(`/products/materials/${sku}/stock/${loc}`)).body;
const transfer = (sku: string, from: string, to: string, quantity: number) =>
  api.post('/products/materials/transfer', { materialSku: sku, fromLocationId: from, toLocationId: to, quantity });
const live = (stock: any) =>
  stock.lots
    .filter((l: any) => l.quantity > 0)
    .map((l: any) => ({ lotNumber: l.lotNumber, quantity: l.quantity, costPerUnit: l.costPerUnit }));

/**
 * A lot-tracked material whose lot L1 @ 1.00 (5 kg) an accepted order consumed at A; then three
 * later lots depleted at A (moved to B, 1 kg @ 3.00 each), so L1 is pruned from the document.
 * Answers the material and the order.
 */
async function consumedAndPruned(tag: string) {
  const m = `${P}-${tag}-${++n}`;
  const made = await api.post('/products/materials', {
    sku: m,
    title: tag,
    baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
    stockAlerts: alertsOff,
    lotTrackingEnabled: true,
    costingMethod: 'fifo',
  });
  expect(made.status).toBe(201);
  expect((await receive(m, { quantity: 5, lot: { lotNumber: 'L1', costPerUnit: 1 } })).status).toBe(200);
  const pieSku = `${P}-PIE-${++n}`;
  const pie = await api.post('/products', {
    sku: pieSku,
    title: { value: 'Pie' },
    price: 10,
    productType: 'service',
    billOfMaterials: {
      consumptionMode: 'on_sale',
      yield: { quantity: 1, unit: 'pza' },
      components: [{ materialSku: m, quantity: 5, unit: 'kg' }],
    },
  });
  expect(pie.status).toBe(201);
  const o = await api.post('/orders', {
    externalId: `${P}-o${++n}`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: pieSku, quantity: 1 }],
  });
  expect(o.status).toBe(201);
  const id = o.body.data._id as string;
  expect((await api.post(`/orders/${id}/accept`)).status).toBe(200);
  for (const lot of ['L2', 'L3', 'L4']) {
    expect((await receive(m, { quantity: 1, lot: { lotNumber: lot, costPerUnit: 3 } })).status).toBe(200);
    expect((await transfer(m, A, B, 1)).status).toBe(200);
  }
  return { m, id };
}

test('a cancelled order gives its lot back at the lot’s own cost, not merged into a newer lot of that number', async () => {
  const { m, id } = await consumedAndPruned('RET');
  expect((await receive(m, { quantity: 3, lot: { lotNumber: 'L1', costPerUnit: 2 } })).status).toBe(200);
  expect((await api.post(`/orders/${id}/cancel`, { reason: 'customer left' })).status).toBe(200);
  const stock = await at(m);
  expect(stock.quantity).toBe(8);
  expect(live(stock)).toEqual(
    expect.arrayContaining([
      { lotNumber: 'L1', quantity: 5, costPerUnit: 1 },
      { lotNumber: 'L1', quantity: 3, costPerUnit: 2 },
    ]),
  );
  expect(stock.valuation.totalValue).toBe(11);
});

test('a transfer joins a lot of the same number at its destination only on the same terms', async () => {
  const { m, id } = await consumedAndPruned('TRF');
  // L1 received again at B, at another cost: the document no longer knows the old L1
  expect((await receive(m, { quantity: 3, lot: { lotNumber: 'L1', costPerUnit: 2 } }, B)).status).toBe(200);
  expect((await api.post(`/orders/${id}/cancel`, { reason: 'customer left' })).status).toBe(200);
  expect(live(await at(m))).toEqual([{ lotNumber: 'L1', quantity: 5, costPerUnit: 1 }]);
  expect((await transfer(m, A, B, 5)).status).toBe(200);
  const there = await at(m, B);
  expect(there.quantity).toBe(11);
  expect(live(there)).toEqual(
    expect.arrayContaining([
      { lotNumber: 'L1', quantity: 5, costPerUnit: 1 },
      { lotNumber: 'L1', quantity: 3, costPerUnit: 2 },
    ]),
  );
  // 5 × 1 + 3 × 2 + 3 × 3 (L2–L4); merged into L1 @ 2 it was 25
  expect(there.valuation.totalValue).toBe(20);
  // more of L1 at the same terms as one of them still joins that one
  expect((await transfer(m, B, A, 3)).status).toBe(200); // FIFO: the oldest, L1 @ 1, leaves first
  expect((await transfer(m, A, B, 3)).status).toBe(200);
  const back = live(await at(m, B)).filter((l: any) => l.lotNumber === 'L1');
  expect(back).toEqual(
    expect.arrayContaining([
      { lotNumber: 'L1', quantity: 5, costPerUnit: 1 },
      { lotNumber: 'L1', quantity: 3, costPerUnit: 2 },
    ]),
  );
  expect(back).toHaveLength(2);
});

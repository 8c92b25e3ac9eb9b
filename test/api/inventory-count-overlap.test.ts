import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { Ledger } from '../../shared/inventory/ledger';
import { systemLocationId } from '../../shared/locations/locations';

/** A count corrects what was on the shelf when it counted, once: a later correction of the same balance wins. */
let deps: TestDeps;
let api: ApiClient;
let ledger: Ledger;
let main: string;
const P = `OVC${Date.now().toString(36).toUpperCase()}`;
let n = 0;

async function stockedSku(stock: number): Promise<string> {
  const sku = `${P}-S${++n}`;
  const res = await api.post('/products', { title: { value: sku }, price: 10, sku, cost: 2 });
  if (res.status !== 201) throw new Error(`product → ${res.status} ${res.text}`);
  await ledger.apply({ sku, locationId: main, delta: stock, reason: 'restock', actor: 'test' });
  return sku;
}
async function openCount(): Promise<string> {
  const res = await api.post('/inventory/counts', { name: `C${++n}`, locationId: main, countType: 'spot' });
  if (res.status !== 201) throw new Error(`count → ${res.status} ${res.text}`);
  return res.body.id;
}

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'overlapping counts');
  api = new ApiClient(t.key);
  ledger = new Ledger(new TenantDb(deps.db, t.tenantId));
  main = systemLocationId(t.tenantId);
  await api.get('/locations');
});
afterAll(() => deps.close());

async function counted(sku: string, quantity: number): Promise<string> {
  const id = await openCount();
  const res = await api.put(`/inventory/counts/${id}/items`, { countItems: [{ sku, countedQuantity: quantity }] });
  expect(res.status).toBe(200);
  return id;
}
const complete = async (id: string) => {
  const res = await api.post(`/inventory/counts/${id}/complete`);
  expect(res.status).toBe(200);
  return res.body;
};

test('two open counts that both found the same 3 missing units: completing both leaves the counted 7, not 4', async () => {
  const sku = await stockedSku(10); // the shelf really holds 7
  const a = await counted(sku, 7);
  const b = await counted(sku, 7);
  expect((await complete(a)).summary.superseded).toEqual([]);
  expect(await ledger.onHand(sku, main)).toBe(7);
  const second = await complete(b);
  expect(await ledger.onHand(sku, main)).toBe(7);
  // the second count's correction is recorded as left undone, naming the correction that came after its count
  expect(second.summary.superseded).toEqual([sku]);
  const adj = (await api.get(`/inventory/adjustments/${second.summary.adjustments[0]}`)).body;
  expect(adj).toMatchObject({ applied: true, appliedDelta: 0, quantityAfter: 7, movementId: null });
  expect(adj.supersededBy).toBe(`cnt:${a}:${sku}`);
});

test('a stock PUT after the count wins over the count (it saw the shelf later)', async () => {
  const sku = await stockedSku(10);
  const id = await counted(sku, 7);
  const put = await api.put(`/inventory/location/${main}/product/${sku}`, { stock: 9 });
  expect(put.status).toBe(200);
  expect((await complete(id)).summary.superseded).toEqual([sku]);
  expect(await ledger.onHand(sku, main)).toBe(9);
});

test('control: a sale after the count stays counted (10 on record, 7 counted, 2 sold since → 5)', async () => {
  const sku = await stockedSku(10);
  const id = await counted(sku, 7);
  await ledger.apply({ sku, locationId: main, delta: -2, reason: 'sale', actor: 'test' });
  expect((await complete(id)).summary.superseded).toEqual([]);
  expect(await ledger.onHand(sku, main)).toBe(5);
});

test('control: a correction made before the SKU was counted does not supersede it', async () => {
  const sku = await stockedSku(10);
  expect((await api.put(`/inventory/location/${main}/product/${sku}`, { stock: 8 })).status).toBe(200);
  const id = await counted(sku, 7);
  expect((await complete(id)).summary.superseded).toEqual([]);
  expect(await ledger.onHand(sku, main)).toBe(7);
});

test('two overlapping counts completed at once apply the discrepancy once', async () => {
  for (let round = 0; round < 5; round++) {
    const sku = await stockedSku(10);
    const a = await counted(sku, 7);
    const b = await counted(sku, 7);
    const [ra, rb] = await Promise.all([complete(a), complete(b)]);
    expect(await ledger.onHand(sku, main)).toBe(7);
    expect([...ra.summary.superseded, ...rb.summary.superseded]).toEqual([sku]);
  }
});

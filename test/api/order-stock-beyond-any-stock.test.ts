import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * An order needing more of a material than any stock can hold is short of it: its accept is 409
 * orders:insufficient_stock naming the material (with every other SKU short), nothing taken, the
 * order still pending. Before, the consumption planner's refusal for a BOM run (400 `bad-request`
 * "produce less at a time", a code the orders area does not define) leaked into the order's answer.
 */
let deps: TestDeps;
let api: ApiClient;
let A: string;
const P = `OBS${Date.now().toString(36).toUpperCase()}`;
let n = 0;
beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'order beyond any stock');
  api = new ApiClient(t.key);
  A = systemLocationId(t.tenantId);
});
afterAll(() => deps.close());

async function material(tag: string) {
  const sku = `${P}-${tag}-${++n}`;
  const r = await api.post('/products/materials', {
    sku,
    title: tag,
    baseUnit: { code: 'kg', name: 'Kilogram', precision: 6 },
    stockAlerts: { minStock: 0, reorderPoint: 0, reorderQuantity: 0, alertEnabled: false },
  });
  expect(r.status).toBe(201);
  expect((await api.post(`/products/materials/${sku}/stock/${A}`, { quantity: 5 })).status).toBe(200);
  return sku;
}
async function product(components: unknown[]) {
  const sku = `${P}-P-${++n}`;
  const r = await api.post('/products', {
    sku,
    title: { value: 'Big' },
    price: 10,
    productType: 'service',
    billOfMaterials: { consumptionMode: 'on_sale', yield: { quantity: 1, unit: 'pza' }, components },
  });
  if (r.status !== 201) throw new Error(r.text);
  return sku;
}
const at = async (sku: string) => (await api.get(`/products/materials/${sku}/stock/${A}`)).body.quantity;
async function accept(items: unknown[]) {
  const o = await api.post('/orders', { externalId: `${P}-o${++n}`, customerInfo: { name: 'Ana' }, items });
  if (o.status !== 201) throw new Error(o.text);
  const id = o.body.data._id as string;
  return { id, res: await api.post(`/orders/${id}/accept`) };
}

test('an order needing more of a material than any stock can hold is refused 409 orders:insufficient_stock', async () => {
  const big = await material('BIG');
  const small = await material('SMALL');
  const p = await product([
    { materialSku: big, quantity: 1000000, unit: 'kg' },
    { materialSku: small, quantity: 0.001, unit: 'kg' },
  ]);
  const q = await product([{ materialSku: small, quantity: 6, unit: 'kg' }]);
  const { id, res } = await accept([
    { sku: p, quantity: 100000 },
    { sku: q, quantity: 1 },
  ]);
  expect([res.status, res.body.error?.code]).toEqual([409, 'orders:insufficient_stock']);
  // the orders envelope names every SKU short in its message
  expect(res.body.error.message).toContain(big);
  expect(res.body.error.message).toContain(small);
  expect((await api.get(`/orders/${id}`)).body.data.orderStatus).toBe('pending');
  expect(await at(big)).toBe(5);
  expect(await at(small)).toBe(5);
});

test('lines that each fit but together need more than any stock can hold are short of it too', async () => {
  const big = await material('SUM');
  const p = await product([{ materialSku: big, quantity: 600000000, unit: 'kg' }]);
  // each line 6e8 kg = 6e14 steps (a stock holds up to ~1e15); the two together do not fit
  const { id, res } = await accept([
    { sku: p, quantity: 1 },
    { sku: p, quantity: 1 },
  ]);
  expect([res.status, res.body.error?.code]).toEqual([409, 'orders:insufficient_stock']);
  expect(res.body.error.message).toContain(big);
  expect((await api.get(`/orders/${id}`)).body.data.orderStatus).toBe('pending');
  expect(await at(big)).toBe(5);
});

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * An order's lines share the stock of its location, and, as within one BOM (docs/materials.md:
 * "required needs ... are planned first, so an optional part is what gives way"), the required
 * needs of every line are planned before any line's optional parts; the order's materials stay
 * one consumption, all or nothing. Before, OrderStock.plan planned line by line, so an earlier
 * line's optional component took the stock a later line required and the accept was refused
 * 409 orders:insufficient_stock.
 */
let deps: TestDeps;
let api: ApiClient;
let A: string;
const P = `OOP${Date.now().toString(36).toUpperCase()}`;
let n = 0;
beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'order optional parts');
  api = new ApiClient(t.key);
  A = systemLocationId(t.tenantId);
});
afterAll(() => deps.close());

async function material(tag: string) {
  const sku = `${P}-${tag}-${++n}`;
  const r = await api.post('/products/materials', {
    sku,
    title: tag,
    baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
    stockAlerts: { minStock: 0, reorderPoint: 0, reorderQuantity: 0, alertEnabled: false },
  });
  expect(r.status).toBe(201);
  return sku;
}
async function product(tag: string, components: unknown[]) {
  const sku = `${P}-${tag}-${++n}`;
  const r = await api.post('/products', {
    sku,
    title: { value: tag },
    price: 10,
    productType: 'service',
    billOfMaterials: { consumptionMode: 'on_sale', yield: { quantity: 1, unit: 'pza' }, components },
  });
  if (r.status !== 201) throw new Error(r.text);
  return sku;
}
const receive = (sku: string, quantity: number) => api.post(`/products/materials/${sku}/stock/${A}`, { quantity });
const at = async (sku: string) => (await api.get(`/products/materials/${sku}/stock/${A}`)).body.quantity;
async function accept(items: unknown[]) {
  const o = await api.post('/orders', { externalId: `${P}-o${++n}`, customerInfo: { name: 'Ana' }, items });
  if (o.status !== 201) throw new Error(o.text);
  const id = o.body.data._id as string;
  const r = await api.post(`/orders/${id}/accept`);
  return { id, status: r.status, error: r.body.error };
}

test('an optional component of one line gives way to another line’s required need of the same material', async () => {
  const sugar = await material('SUGAR');
  expect((await receive(sugar, 5)).status).toBe(200);
  const x = await product('X', [{ materialSku: sugar, quantity: 5, unit: 'kg', required: false }]);
  const y = await product('Y', [{ materialSku: sugar, quantity: 5, unit: 'kg' }]);
  const r = await accept([
    { sku: x, quantity: 1 },
    { sku: y, quantity: 1 },
  ]);
  expect({ status: r.status, error: r.error }).toEqual({ status: 200, error: undefined });
  expect(await at(sugar)).toBe(0);
  const log = (await api.get(`/orders/${r.id}/activity-log?limit=200`)).body.data as any[];
  const taken = log.find((e) => e.type === 'stock_changed' && e.details.effect === 'taken');
  expect(taken.details.materials).toEqual([{ sku: sugar, quantity: 5, unit: 'kg' }]);
});

test('optional parts take what the required needs leave, line after line; enough stock takes them all', async () => {
  const sugar = await material('SUGAR');
  expect((await receive(sugar, 8)).status).toBe(200);
  const x = await product('X', [{ materialSku: sugar, quantity: 2, unit: 'kg', required: false }]);
  const y = await product('Y', [{ materialSku: sugar, quantity: 5, unit: 'kg' }]);
  // 5 required, then the first optional 2 fit (7) and the second does not (9 > 8): left out
  expect(
    (
      await accept([
        { sku: x, quantity: 1 },
        { sku: x, quantity: 1 },
        { sku: y, quantity: 1 },
      ])
    ).status,
  ).toBe(200);
  expect(await at(sugar)).toBe(1);
  expect((await receive(sugar, 6)).status).toBe(200);
  expect(
    (
      await accept([
        { sku: x, quantity: 1 },
        { sku: y, quantity: 1 },
      ])
    ).status,
  ).toBe(200);
  expect(await at(sugar)).toBe(0);
});

test('required needs of all lines beyond the stock are still refused, nothing taken', async () => {
  const sugar = await material('SUGAR');
  expect((await receive(sugar, 5)).status).toBe(200);
  const x = await product('X', [{ materialSku: sugar, quantity: 1, unit: 'kg', required: false }]);
  const y = await product('Y', [{ materialSku: sugar, quantity: 3, unit: 'kg' }]);
  const r = await accept([
    { sku: x, quantity: 1 },
    { sku: y, quantity: 1 },
    { sku: y, quantity: 1 },
  ]);
  expect([r.status, r.error?.code]).toEqual([409, 'orders:insufficient_stock']);
  expect(await at(sugar)).toBe(5);
});

import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import { locations, systemLocationId } from '../../shared/locations/locations';
import { TenantDb } from '../../shared/db/tenant-db';
import { putsStockBack } from '../../shared/orders/moves';
import { MoveNeedsStock, Orders } from '../../shared/orders/service';

/**
 * Orders move stock, through HTTP on the real API and worker: accepting an order takes each line's
 * product (a `sale` movement) at the order's location, the materials of BOMs consumed on sale and
 * of the selected modifiers; cancelling an accepted order puts all of it back. Short stock refuses
 * the acceptance (409 naming the SKUs, nothing taken) unless the product sells when out of stock.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let A: string;
let B: string;
const P = `OS${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key);
  A = systemLocationId(tenant.tenantId);
  const second = await api.post('/locations', { name: `Store ${P}`, type: 'location' });
  expect(second.status).toBe(201);
  B = second.body.id;
});
afterAll(() => deps.close());

type Body = Record<string, unknown>;
const sku = (tag: string) => `${P}-${tag}-${++n}`.toUpperCase();

async function product(tag: string, extra: Body = {}): Promise<any> {
  const res = await api.post('/products', { sku: sku(tag), title: { value: tag }, price: 10, ...extra });
  if (res.status !== 201) throw new Error(`${res.status} ${res.text}`);
  return res.body;
}

async function material(tag: string, quantity: number, location = A): Promise<string> {
  const s = sku(tag);
  expect(
    (await api.post('/products/materials', { sku: s, title: tag, baseUnit: { code: 'kg', name: 'kg', precision: 3 } }))
      .status,
  ).toBe(201);
  if (quantity > 0)
    expect(
      (await api.post(`/products/materials/${s}/stock/${location}`, { quantity, lot: { costPerUnit: 2 } })).status,
    ).toBe(200);
  return s;
}

const setStock = async (s: string, stock: number, location = A) =>
  expect((await api.put(`/inventory/location/${location}/product/${s}`, { stock })).status).toBe(200);
const stockOf = async (s: string, location = A) =>
  (await api.get(`/inventory/location/${location}/product/${s}`)).body.onHand ?? 0;
const materialAt = async (s: string, location = A) => {
  const res = await api.get(`/products/materials/${s}/stock/${location}`);
  return res.status === 404 ? 0 : res.body.quantity;
};

async function order(items: Body[], extra: Body = {}): Promise<string> {
  const res = await api.post('/orders', {
    externalId: `${P}-${++n}`,
    customerInfo: { name: 'Ana' },
    items,
    ...extra,
  });
  if (res.status !== 201) throw new Error(`${res.status} ${res.text}`);
  return res.body.data._id;
}

const accept = (id: string) => api.post(`/orders/${id}/accept`);
const cancel = (id: string) => api.post(`/orders/${id}/cancel`, { reason: 'customer changed their mind' });
const log = async (id: string) => (await api.get(`/orders/${id}/activity-log?limit=200`)).body.data as any[];

describe('a cancel racing an acceptance', () => {
  it('a plain move that reads the order accepted with its stock refuses, so the cancel goes through the stock workflow', async () => {
    const mug = await product('RACE');
    await setStock(mug.sku, 5);
    const id = await order([{ sku: mug.sku, quantity: 2 }]);
    expect((await accept(id)).status).toBe(200);
    expect(await stockOf(mug.sku)).toBe(3);
    // what a cancel does that read the order pending, lost its guarded update to the acceptance,
    // and reads it again: the plain update must not cancel an order holding stock
    const tenantDb = new TenantDb(deps.db, tenantId);
    await expect(
      new Orders(deps.db, tenantDb, 'test').move(id, 'cancelled', 'api', 'race', (o) => !putsStockBack(o, 'cancelled')),
    ).rejects.toBeInstanceOf(MoveNeedsStock);
    expect((await api.get(`/orders/${id}`)).body.data.orderStatus).toBe('accepted');
    expect(await stockOf(mug.sku)).toBe(3);
    // the cancel as a client makes it decides again and puts the stock back
    expect((await cancel(id)).status).toBe(200);
    expect(await stockOf(mug.sku)).toBe(5);
  });
});

describe('accepting an order takes its stock; cancelling it puts it back', () => {
  it('sells each line at the default location, consumes on-sale BOMs, and returns everything on cancel', async () => {
    const flour = await material('FLOUR', 5);
    const bread = await product('BREAD', {
      billOfMaterials: {
        consumptionMode: 'on_sale',
        yield: { quantity: 1, unit: 'pza' },
        components: [{ materialSku: flour, quantity: 0.5, unit: 'kg' }],
      },
    });
    const mug = await product('MUG');
    await setStock(bread.sku, 10);
    await setStock(mug.sku, 3);
    const id = await order([
      { sku: bread.sku, quantity: 2 },
      { sku: mug.sku, quantity: 3 },
    ]);
    const res = await accept(id);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ _id: id, orderStatus: 'accepted', previousStatus: 'pending' });
    expect(await stockOf(bread.sku)).toBe(8);
    expect(await stockOf(mug.sku)).toBe(0);
    expect(await materialAt(flour)).toBe(4);
    const read = (await api.get(`/orders/${id}`)).body.data;
    expect(read.stock).toMatchObject({
      locationId: A,
      sales: [
        { sku: bread.sku, quantity: 2 },
        { sku: mug.sku, quantity: 3 },
      ],
    });
    const taken = (await log(id)).find((e) => e.type === 'stock_changed');
    expect(taken.details).toMatchObject({
      effect: 'taken',
      locationId: A,
      sales: [
        { sku: bread.sku, quantity: 2, reason: 'sale' },
        { sku: mug.sku, quantity: 3, reason: 'sale' },
      ],
      materials: [{ sku: flour, quantity: 1, unit: 'kg' }],
    });

    const cancelled = await cancel(id);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data).toMatchObject({ orderStatus: 'cancelled', previousStatus: 'accepted' });
    expect(await stockOf(bread.sku)).toBe(10);
    expect(await stockOf(mug.sku)).toBe(3);
    expect(await materialAt(flour)).toBe(5);
    const effects = (await log(id)).filter((e) => e.type === 'stock_changed').map((e) => e.details.effect);
    expect(effects).toEqual(['taken', 'returned']);
    const movements = (await api.get(`/products/materials/${flour}/movements`)).body.data.map((m: any) => m.type);
    expect(movements).toEqual(['return', 'consumption', 'receipt']);
  });

  it('refuses with 409 naming every SKU short, and takes nothing', async () => {
    const sugar = await material('SUGAR', 0.1);
    const cake = await product('CAKE', {
      billOfMaterials: {
        consumptionMode: 'on_sale',
        yield: { quantity: 1, unit: 'pza' },
        components: [{ materialSku: sugar, quantity: 0.25, unit: 'kg' }],
      },
    });
    const tea = await product('TEA');
    const jam = await product('JAM');
    await setStock(cake.sku, 5);
    await setStock(tea.sku, 1);
    await setStock(jam.sku, 9);
    const id = await order([
      { sku: cake.sku, quantity: 1 },
      { sku: tea.sku, quantity: 2 },
      { sku: jam.sku, quantity: 1 },
    ]);
    const res = await accept(id);
    expectError(res, 409, 'orders:insufficient_stock', 'orders');
    expect(res.body.error.message).toContain(tea.sku);
    expect(res.body.error.message).toContain(sugar);
    expect(res.body.error.message).not.toContain(jam.sku);
    expect((await api.get(`/orders/${id}`)).body.data.orderStatus).toBe('pending');
    expect([await stockOf(cake.sku), await stockOf(tea.sku), await stockOf(jam.sku)]).toEqual([5, 1, 9]);
    expect(await materialAt(sugar)).toBe(0.1);
    // restocked, the same order is accepted
    await setStock(tea.sku, 2);
    expect((await api.post(`/products/materials/${sugar}/stock/${A}`, { quantity: 1 })).status).toBe(200);
    expect((await accept(id)).status).toBe(200);
    expect([await stockOf(cake.sku), await stockOf(tea.sku), await stockOf(jam.sku)]).toEqual([4, 0, 8]);
    expect(await materialAt(sugar)).toBe(0.85);
  });

  it('sums what every line needs before deciding: two lines of one material short together are refused', async () => {
    const oil = await material('OIL', 1);
    const bom = {
      consumptionMode: 'on_sale',
      yield: { quantity: 1, unit: 'pza' },
      components: [{ materialSku: oil, quantity: 0.6, unit: 'kg' }],
    };
    const fries = await product('FRIES', { billOfMaterials: bom, productType: 'service' });
    const chips = await product('CHIPS', { billOfMaterials: bom, productType: 'service' });
    const id = await order([
      { sku: fries.sku, quantity: 1 },
      { sku: chips.sku, quantity: 1 },
    ]);
    const res = await accept(id);
    expectError(res, 409, 'orders:insufficient_stock', 'orders');
    expect(res.body.error.details?.materials ?? res.body.error.message).toBeTruthy();
    expect(await materialAt(oil)).toBe(1);
  });

  it('a product that sells when out of stock goes below zero; a service holds no stock', async () => {
    const pre = await product('PREORDER', { sellIfOutOfStock: true });
    const svc = await product('REPAIR', { productType: 'service' });
    const id = await order([
      { sku: pre.sku, quantity: 2 },
      { sku: svc.sku, quantity: 1 },
    ]);
    expect((await accept(id)).status).toBe(200);
    expect(await stockOf(pre.sku)).toBe(-2);
    expect(await stockOf(svc.sku)).toBe(0);
    expect((await cancel(id)).status).toBe(200);
    expect(await stockOf(pre.sku)).toBe(0);
  });

  it('lines sharing an optional component it has for one: accepted, the optional part left out of the other', async () => {
    const flour = await material('FLOUR', 10);
    const sugar = await material('SUGAR', 1);
    const bom = {
      consumptionMode: 'on_sale',
      yield: { quantity: 1, unit: 'pza' },
      components: [
        { materialSku: flour, quantity: 1, unit: 'kg' },
        { materialSku: sugar, quantity: 1, unit: 'kg', required: false },
      ],
    };
    const bun = await product('BUN', { billOfMaterials: bom, productType: 'service' });
    const roll = await product('ROLL', { billOfMaterials: bom, productType: 'service' });
    const id = await order([
      { sku: bun.sku, quantity: 1 },
      { sku: roll.sku, quantity: 1 },
    ]);
    expect((await accept(id)).status).toBe(200);
    expect(await materialAt(flour)).toBe(8);
    expect(await materialAt(sugar)).toBe(0);
    expect((await cancel(id)).status).toBe(200);
    expect([await materialAt(flour), await materialAt(sugar)]).toEqual([10, 1]);
  });

  it('a variant follows its own sellIfOutOfStock, not its product’s', async () => {
    const shoe = await product('SHOE', {
      sellIfOutOfStock: true,
      variants: [
        { sku: sku('SHOE-42'), title: { value: '42' }, price: 40, position: 0, sellIfOutOfStock: false },
        { sku: sku('SHOE-43'), title: { value: '43' }, price: 40, position: 1, sellIfOutOfStock: true },
      ],
    });
    const [strict, lenient] = shoe.variants.map((v: { sku: string }) => v.sku);
    await setStock(strict, 1);
    const refused = await accept(await order([{ sku: strict, quantity: 3 }]));
    expectError(refused, 409, 'orders:insufficient_stock', 'orders');
    expect(refused.body.error.message).toContain(strict);
    expect(await stockOf(strict)).toBe(1);
    expect((await accept(await order([{ sku: lenient, quantity: 2 }]))).status).toBe(200);
    expect(await stockOf(lenient)).toBe(-2);
  });

  it('a location open orders take or return stock at cannot be deleted; once they are done, it can', async () => {
    const loc = (await api.post('/locations', { name: `Kiosk ${P}`, type: 'location' })).body.id as string;
    const lamp = await product('LAMP-K', { sellIfOutOfStock: true });
    const pending = await order([{ sku: lamp.sku, quantity: 1 }], { locationId: loc });
    const refused = await api.delete(`/locations/${loc}`);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain(pending);
    expect((await accept(pending)).status).toBe(200);
    expect((await api.delete(`/locations/${loc}`)).status).toBe(400); // accepted: a cancel returns its stock here
    expect((await cancel(pending)).status).toBe(200);
    expect((await api.delete(`/locations/${loc}`)).status).toBe(200);
  });

  it('an order whose location is gone all the same is refused on accept (400), taking nothing', async () => {
    const loc = (await api.post('/locations', { name: `Stall ${P}`, type: 'location' })).body.id as string;
    const lamp = await product('LAMP-S', { sellIfOutOfStock: true });
    const id = await order([{ sku: lamp.sku, quantity: 1 }], { locationId: loc });
    // as if a delete had passed its check just before the order was made
    await new TenantDb(deps.db, tenantId).collection(locations).deleteById(loc);
    const res = await accept(id);
    expectError(res, 400, 'validation:invalid_input', 'orders');
    expect(res.body.error.message).toContain(loc);
    expect(await stockOf(lamp.sku, loc)).toBe(0);
    expect((await api.get(`/orders/${id}`)).body.data.orderStatus).toBe('pending');
  });

  it('takes stock at the order’s location; an unknown location is refused at creation', async () => {
    const lamp = await product('LAMP');
    await setStock(lamp.sku, 4, B);
    const id = await order([{ sku: lamp.sku, quantity: 1 }], { locationId: B });
    expect((await accept(id)).status).toBe(200);
    expect(await stockOf(lamp.sku, B)).toBe(3);
    const bad = await api.post('/orders', {
      externalId: `${P}-bad-loc`,
      customerInfo: { name: 'Ana' },
      items: [{ sku: lamp.sku, quantity: 1 }],
      locationId: 'loc_nowhere',
    });
    expectError(bad, 400, 'validation:invalid_input', 'orders');
  });

  it('accepting through PUT /status and cancelling through /transition move stock the same way', async () => {
    const cup = await product('CUP');
    await setStock(cup.sku, 2);
    const id = await order([{ sku: cup.sku, quantity: 2 }]);
    expect((await api.put(`/orders/${id}/status`, { status: 'accepted' })).status).toBe(200);
    expect(await stockOf(cup.sku)).toBe(0);
    expect((await api.post(`/orders/${id}/prepare`)).status).toBe(200);
    expect((await api.post(`/orders/${id}/transition`, { to: 'cancelled', reason: 'broken' })).status).toBe(200);
    expect(await stockOf(cup.sku)).toBe(2);
  });

  it('concurrent accepts of one order take its stock once', async () => {
    const pen = await product('PEN');
    await setStock(pen.sku, 10);
    const id = await order([{ sku: pen.sku, quantity: 3 }]);
    const all = await Promise.all(Array.from({ length: 6 }, () => accept(id)));
    expect(all.filter((r) => r.status === 200)).toHaveLength(1);
    expect(all.filter((r) => r.status === 409)).toHaveLength(5);
    expect(await stockOf(pen.sku)).toBe(7);
  });

  it('lines carry selected modifiers: validated and priced at creation, their materials taken on accept', async () => {
    const cheese = await material('CHEESE', 1);
    const pizza = await product('PIZZA', { productType: 'service' });
    const config = await api.put(`/products/${pizza.sku}/modifiers`, {
      enabled: true,
      groups: [
        {
          name: 'Size',
          selectionRule: { minSelections: 1, maxSelections: 1, exactlyOne: true },
          modifiers: [{ name: 'Regular' }, { name: 'Large', priceAdjustment: { type: 'percentage', value: 25 } }],
        },
        {
          name: 'Extras',
          selectionRule: { minSelections: 0, maxSelections: 3, allowDuplicates: true, maxPerModifier: 2 },
          modifiers: [
            {
              name: 'Extra cheese',
              priceAdjustment: { type: 'fixed', value: 1.5 },
              inventoryConsumption: { materialSku: cheese, quantity: 0.08, unit: 'kg' },
            },
          ],
        },
      ],
    });
    if (config.status !== 200) throw new Error(config.text);
    const [size, extras] = config.body.modifiersConfig.groups;
    const large = size.modifiers[1].id;
    const extra = extras.modifiers[0].id;
    const res = await api.post('/orders', {
      externalId: `${P}-mod-1`,
      customerInfo: { name: 'Ana' },
      items: [
        {
          sku: pizza.sku,
          quantity: 2,
          selectedModifiers: [
            { groupId: size.id, modifierId: large },
            { groupId: extras.id, modifierId: extra, quantity: 2 },
          ],
        },
      ],
    });
    expect(res.status).toBe(201);
    // 10.00 + 25 % (2.50) + 2 × 1.50 = 15.50 a pizza
    expect(res.body.data.items[0]).toMatchObject({ price: 15.5, lineTotal: 31 });
    expect(res.body.data.items[0].selectedModifiers).toEqual([
      expect.objectContaining({ modifierId: large, quantity: 1, priceAdjustment: 2.5 }),
      expect.objectContaining({ modifierId: extra, quantity: 2, priceAdjustment: 3 }),
    ]);
    expect((await accept(res.body.data._id)).status).toBe(200);
    // 2 pizzas × 2 × 80 g
    expect(await materialAt(cheese)).toBe(0.68);

    const missingSize = await api.post('/orders', {
      externalId: `${P}-mod-2`,
      customerInfo: { name: 'Ana' },
      items: [{ sku: pizza.sku, quantity: 1, selectedModifiers: [{ groupId: extras.id, modifierId: extra }] }],
    });
    expectError(missingSize, 400, 'validation:invalid_input', 'orders');
    expect(missingSize.body.error.message).toContain('minSelections');
  });
});

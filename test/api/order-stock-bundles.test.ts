import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * An order of a bundle moves stock as the bundle's inventoryMode says: a `calculated` bundle (the
 * default) has no stock of its own, so accepting sells its components (each as many times as the
 * bundle holds it) and cancelling puts them back; a `reserved` bundle sells its own SKU's stock.
 */
let deps: TestDeps;
let api: ApiClient;
let A: string;
const P = `RVB${Date.now().toString(36).toUpperCase()}`;
beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'bundle accept');
  api = new ApiClient(t.key);
  A = systemLocationId(t.tenantId);
});
afterAll(() => deps.close());

const stockOf = async (s: string) => (await api.get(`/inventory/location/${A}/product/${s}`)).body.onHand ?? 0;

test('accepting an order of a calculated bundle takes its components; cancelling puts them back', async () => {
  const cup = `${P}-CUP`;
  const saucer = `${P}-SAUCER`;
  for (const sku of [cup, saucer]) {
    expect((await api.post('/products', { sku, title: { value: sku }, price: 5 })).status).toBe(201);
    expect((await api.put(`/inventory/location/${A}/product/${sku}`, { stock: 10 })).status).toBe(200);
  }
  const set = `${P}-SET`;
  const made = await api.post('/products', {
    sku: set,
    title: { value: 'Tea set' },
    price: 18,
    productType: 'bundle',
    bundleConfig: {
      components: [
        { productSku: cup, quantity: 2 },
        { productSku: saucer, quantity: 2 },
      ],
    },
  });
  expect(made.status).toBe(201);
  const res = await api.post('/orders', {
    externalId: `${P}-1`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: set, quantity: 1 }],
  });
  expect(res.status).toBe(201);
  const id = res.body.data._id;
  const accepted = await api.post(`/orders/${id}/accept`);
  expect({ status: accepted.status, error: accepted.body.error }).toEqual({ status: 200, error: undefined });
  expect([await stockOf(cup), await stockOf(saucer)]).toEqual([8, 8]);
  expect((await api.post(`/orders/${id}/cancel`, { reason: 'changed mind' })).status).toBe(200);
  expect([await stockOf(cup), await stockOf(saucer)]).toEqual([10, 10]);
});

test('a calculated bundle whose component is short is refused 409 naming the component, nothing taken', async () => {
  const pot = `${P}-POT`;
  const lid = `${P}-LID`;
  for (const [sku, stock] of [
    [pot, 5],
    [lid, 1],
  ] as const) {
    expect((await api.post('/products', { sku, title: { value: sku }, price: 5 })).status).toBe(201);
    expect((await api.put(`/inventory/location/${A}/product/${sku}`, { stock })).status).toBe(200);
  }
  const kit = `${P}-KIT`;
  expect(
    (
      await api.post('/products', {
        sku: kit,
        title: { value: 'Pot and lid' },
        price: 30,
        productType: 'bundle',
        bundleConfig: { components: [{ productSku: pot }, { productSku: lid }] },
      })
    ).status,
  ).toBe(201);
  const res = await api.post('/orders', {
    externalId: `${P}-2`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: kit, quantity: 2 }],
  });
  const accepted = await api.post(`/orders/${res.body.data._id}/accept`);
  expect([accepted.status, accepted.body.error?.code]).toEqual([409, 'orders:insufficient_stock']);
  expect(accepted.body.error.message).toContain(lid);
  expect(accepted.body.error.message).not.toContain(pot);
  expect([await stockOf(pot), await stockOf(lid)]).toEqual([5, 1]);
});

test('a reserved bundle sells its own stock, not its components', async () => {
  const mug = `${P}-MUG`;
  expect((await api.post('/products', { sku: mug, title: { value: mug }, price: 5 })).status).toBe(201);
  expect((await api.put(`/inventory/location/${A}/product/${mug}`, { stock: 4 })).status).toBe(200);
  const gift = `${P}-GIFT`;
  expect(
    (
      await api.post('/products', {
        sku: gift,
        title: { value: 'Gift box' },
        price: 12,
        productType: 'bundle',
        bundleConfig: { inventoryMode: 'reserved', components: [{ productSku: mug }] },
      })
    ).status,
  ).toBe(201);
  expect((await api.put(`/inventory/location/${A}/product/${gift}`, { stock: 3 })).status).toBe(200);
  const res = await api.post('/orders', {
    externalId: `${P}-3`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: gift, quantity: 1 }],
  });
  expect((await api.post(`/orders/${res.body.data._id}/accept`)).status).toBe(200);
  expect([await stockOf(gift), await stockOf(mug)]).toEqual([2, 4]);
});

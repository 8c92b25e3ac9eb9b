import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * An order of a bundle moves stock as the bundle's inventoryMode says: a `calculated` bundle (the
 * default) has no stock of its own, so accepting sells its components (each as many times as the
 * bundle holds it) and cancelling puts them back; a `reserved` bundle sells its own SKU's stock.
 * A calculated bundle is therefore never a component, and a variant whose own productType is
 * digital holds no stock, as a digital product does.
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

test('a variant whose own productType is digital holds no stock: its order is accepted, nothing taken', async () => {
  const sku = `${P}-TICKET`;
  const made = await api.post('/products', {
    sku,
    title: { value: 'Ticket' },
    price: 10,
    variants: [
      { sku: `${sku}-PAPER`, title: { value: 'Paper' }, price: 10, position: 0 },
      { sku: `${sku}-E`, title: { value: 'E-ticket' }, price: 8, position: 1, productType: 'digital' },
    ],
  });
  expect(made.status).toBe(201);
  const res = await api.post('/orders', {
    externalId: `${P}-E`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: `${sku}-E`, quantity: 2 }],
  });
  const accepted = await api.post(`/orders/${res.body.data._id}/accept`);
  expect({ status: accepted.status, error: accepted.body.error }).toEqual({ status: 200, error: undefined });
  expect(await stockOf(`${sku}-E`)).toBe(0);
  // the paper variant still holds stock: its order is refused while it has none
  const paper = await api.post('/orders', {
    externalId: `${P}-PAPER`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: `${sku}-PAPER`, quantity: 1 }],
  });
  expect((await api.post(`/orders/${paper.body.data._id}/accept`)).status).toBe(409);
});

test('a calculated bundle is never a component: a bundle naming one, or a component becoming one, is 400', async () => {
  const fork = `${P}-FORK`;
  expect((await api.post('/products', { sku: fork, title: { value: fork }, price: 2 })).status).toBe(201);
  const inner = `${P}-INNER`;
  const innerMade = await api.post('/products', {
    sku: inner,
    title: { value: 'Inner' },
    price: 4,
    productType: 'bundle',
    bundleConfig: { components: [{ productSku: fork }] },
  });
  expect(innerMade.status).toBe(201);
  const outer = { sku: `${P}-OUTER`, title: { value: 'Outer' }, price: 9, productType: 'bundle' };
  const nested = await api.post('/products', { ...outer, bundleConfig: { components: [{ productSku: inner }] } });
  expect([nested.status, nested.body.code, nested.body.field]).toEqual([
    400,
    'validation-error',
    'bundleConfig.components.0.productSku',
  ]);
  // a reserved bundle holds its own stock: it may be a component, but not turn calculated while it is one
  const innerAs = (inventoryMode: string) => ({
    sku: inner,
    title: { value: 'Inner' },
    price: 4,
    productType: 'bundle',
    bundleConfig: { inventoryMode, components: [{ productSku: fork }] },
  });
  const reserved = await api.put(`/products/${innerMade.body.id}`, innerAs('reserved'));
  expect(reserved.status).toBe(200);
  const made = await api.post('/products', { ...outer, bundleConfig: { components: [{ productSku: inner }] } });
  expect(made.status).toBe(201);
  const back = await api.put(`/products/${innerMade.body.id}`, innerAs('calculated'));
  expect([back.status, back.body.details?.reason]).toEqual([400, 'in-use']);
  expect((await api.get(`/products/${innerMade.body.id}`)).body.bundleConfig.inventoryMode).toBe('reserved');
});

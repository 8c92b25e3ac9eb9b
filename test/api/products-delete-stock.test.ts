import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A product whose SKUs hold stock is not deleted: the stock would stay under a SKU no inventory
 * write can name, so it could never be cleared nor its location deleted, and a product given the
 * SKU later would inherit it. 400 validation-error (details.reason has-stock, where it is); once
 * its stock is set to zero, the delete goes through and a new product with the SKU starts at 0.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `PDS${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'products delete stock')).key);
});
afterAll(() => deps.close());

async function productWithStockAt(sku: string, variants: unknown[] = []) {
  const made = await api.post('/products', { sku, title: { value: 'x' }, price: 10, variants });
  expect(made.status).toBe(201);
  const loc = (await api.post('/locations', { name: `Held ${sku}`, type: 'location' })).body.id as string;
  return { id: made.body.id as string, loc };
}

test('a product holding stock: delete 400 has-stock naming it; zeroed, deleted, and the location too', async () => {
  const sku = `${P}-A`;
  const { id, loc } = await productWithStockAt(sku);
  expect((await api.put(`/inventory/location/${loc}/product/${sku}`, { stock: 5 })).status).toBe(200);
  const refused = await api.delete(`/products/${id}`);
  expect(refused.status).toBe(400);
  expect(refused.body).toMatchObject({
    code: 'validation-error',
    details: { reason: 'has-stock', stock: [{ sku, locationId: loc, onHand: 5 }] },
  });
  expect((await api.get(`/products/${id}`)).status).toBe(200);
  expect((await api.put(`/inventory/location/${loc}/product/${sku}`, { stock: 0 })).status).toBe(200);
  expect((await api.delete(`/products/${id}`)).status).toBe(200);
  expect((await api.delete(`/locations/${loc}`)).status).toBe(200);
  const again = await api.post('/products', { sku, title: { value: 'a new one' }, price: 3 });
  expect(again.status).toBe(201);
  expect((await api.get(`/products/${again.body.id}?extend=inventory`)).body.inventory.total).toBe(0);
});

test("a variant's stock holds its product too", async () => {
  const sku = `${P}-B`;
  const { id, loc } = await productWithStockAt(sku, [
    { sku: `${sku}-S`, title: { value: 'S' }, price: 10, position: 0 },
  ]);
  expect((await api.put(`/inventory/location/${loc}/product/${sku}-S`, { stock: 2 })).status).toBe(200);
  const refused = await api.delete(`/products/${id}`);
  expect(refused.status).toBe(400);
  expect(refused.body.details.stock).toEqual([{ sku: `${sku}-S`, locationId: loc, onHand: 2 }]);
});

test('a write giving up a SKU that holds stock (a rename, a dropped variant) is refused the same way', async () => {
  const sku = `${P}-C`;
  const { id, loc } = await productWithStockAt(sku, [
    { sku: `${sku}-S`, title: { value: 'S' }, price: 10, position: 0 },
  ]);
  expect((await api.put(`/inventory/location/${loc}/product/${sku}`, { stock: 3 })).status).toBe(200);
  expect((await api.put(`/inventory/location/${loc}/product/${sku}-S`, { stock: 2 })).status).toBe(200);
  const read = (await api.get(`/products/${id}`)).body;
  const { id: _i, createdAt: _c, updatedAt: _u, tenantId: _t, ...editable } = read;
  // the variants' parentSku/productSku follow the product's SKU: sent without them
  editable.variants = editable.variants.map(({ parentSku: _p, productSku: _s, ...v }: Record<string, unknown>) => v);

  const renamed = await api.put(`/products/${id}`, { ...editable, sku: `${sku}-NEW` });
  expect(renamed.status).toBe(400);
  expect(renamed.body.details).toMatchObject({ reason: 'has-stock', stock: [{ sku, locationId: loc, onHand: 3 }] });
  const dropped = await api.put(`/products/${id}`, { ...editable, variants: [] });
  expect(dropped.status).toBe(400);
  expect(dropped.body.details).toMatchObject({ reason: 'has-stock', stock: [{ sku: `${sku}-S`, onHand: 2 }] });
  expect((await api.get(`/products/${id}`)).body).toMatchObject({ sku, variants: [{ sku: `${sku}-S` }] });

  // zeroed, the rename goes through and the old SKU is free with nothing under it
  expect((await api.put(`/inventory/location/${loc}/product/${sku}`, { stock: 0 })).status).toBe(200);
  expect((await api.put(`/products/${id}`, { ...editable, sku: `${sku}-NEW` })).status).toBe(200);
});

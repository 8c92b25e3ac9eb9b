import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * A calculated bundle's variants are sold as the bundle's components (an order of a variant SKU
 * sells the bundle's components), so a balance on a variant SKU is never sold: each variant shows
 * what the components make up, and the product's total counts that once, not once per variant.
 */
let api: ApiClient;
let deps: TestDeps;
let A: string;
const P = `RBV${Date.now().toString(36).toUpperCase()}`;
const cup = `${P}-CUP`;
const set = `${P}-SET`;
const setV = `${P}-SET-BIG`;
let setId: string;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'bundle variant stock');
  api = new ApiClient(t.key);
  A = systemLocationId(t.tenantId);
  expect((await api.post('/products', { sku: cup, title: { value: cup }, price: 5 })).status).toBe(201);
  const made = await api.post('/products', {
    sku: set,
    title: { value: 'Tea set' },
    price: 18,
    productType: 'bundle',
    variants: [{ sku: setV, title: { value: 'Big' }, price: 20, position: 0 }],
    bundleConfig: { components: [{ productSku: cup, quantity: 2 }] },
  });
  expect(made.status).toBe(201);
  setId = made.body.id;
  // no cups at all: the components make up no set. The variant SKU gets a balance nobody sells from.
  expect((await api.put(`/inventory/location/${A}/product/${setV}`, { stock: 5 })).status).toBe(200);
  // precondition: an order of the variant sells the components (none), not the variant's 5
  const res = await api.post('/orders', {
    externalId: `${P}-1`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: setV, quantity: 1 }],
  });
  expect(res.status).toBe(201);
  const accepted = await api.post(`/orders/${res.body.data._id}/accept`);
  expect([accepted.status, accepted.body.error?.code]).toEqual([409, 'orders:insufficient_stock']);
});
afterAll(() => deps.close());

test("a calculated bundle's variant shows what its components make up (0), not its SKU's ledger balance", async () => {
  const res = await api.get(`/products/${setId}?extend=inventory`);
  expect(res.status).toBe(200);
  expect({
    total: res.body.inventory.total,
    variantStock: (res.body.variants as { sku: string; stock: number }[]).find((v) => v.sku === setV)?.stock,
  }).toEqual({ total: 0, variantStock: 0 });
});

test('availableAt does not list a calculated bundle whose components make none there', async () => {
  const listed = ((await api.get(`/products?availableAt=${A}&limit=200`)).body.data as { sku: string }[]).map(
    (p) => p.sku,
  );
  expect(listed).not.toContain(set);
});

test("the inventory read of the variant's SKU shows what the components make up", async () => {
  const res = await api.get(`/inventory/location/${A}/product/${setV}`);
  expect(res.status).toBe(200);
  expect(res.body.onHand).toBe(0);
});

test('with 3 cups at A, the bundle and its variant each show 1 set, and the product 1 in all', async () => {
  expect((await api.put(`/inventory/location/${A}/product/${cup}`, { stock: 3 })).status).toBe(200);
  const res = await api.get(`/products/${setId}?extend=inventory`);
  expect({
    total: res.body.inventory.total,
    variantStock: (res.body.variants as { sku: string; stock: number }[]).find((v) => v.sku === setV)?.stock,
  }).toEqual({ total: 1, variantStock: 1 });
  expect((await api.get(`/inventory/location/${A}/product/${setV}`)).body).toMatchObject({
    onHand: 1,
    calculated: true,
  });
  const listed = ((await api.get(`/products?availableAt=${A}&limit=200`)).body.data as { sku: string }[]).map(
    (p) => p.sku,
  );
  expect(listed).toContain(set);
});

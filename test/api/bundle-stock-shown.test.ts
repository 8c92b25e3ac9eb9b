import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * A calculated bundle (the default inventoryMode) has no stock of its own: an order of it sells
 * its components. So everywhere a product's stock is shown, the bundle shows what its components
 * make up: at each location the fewest whole bundles any component allows (a digital or service
 * component holds no stock and does not count), summed over locations; a balance set on the
 * bundle's own SKU is not counted. A reserved bundle shows its own SKU's balance.
 */
let api: ApiClient;
let deps: TestDeps;
let A: string;
let B: string;
const P = `BSS${Date.now().toString(36).toUpperCase()}`;
const cup = `${P}-CUP`;
const saucer = `${P}-SAUCER`;
const card = `${P}-ECARD`;
const set = `${P}-SET`;
const box = `${P}-BOX`;
let setId: string;

const put = async (loc: string, sku: string, stock: number) =>
  expect((await api.put(`/inventory/location/${loc}/product/${sku}`, { stock })).status).toBe(200);

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'bundle stock shown');
  api = new ApiClient(t.key);
  A = systemLocationId(t.tenantId);
  B = (await api.post('/locations', { name: `Second ${P}`, type: 'location' })).body.id;
  for (const sku of [cup, saucer])
    expect((await api.post('/products', { sku, title: { value: sku }, price: 5 })).status).toBe(201);
  expect(
    (await api.post('/products', { sku: card, title: { value: 'Card' }, price: 1, productType: 'digital' })).status,
  ).toBe(201);
  const made = await api.post('/products', {
    sku: set,
    title: { value: 'Tea set' },
    price: 18,
    productType: 'bundle',
    // a lower-case component SKU names the same product
    bundleConfig: {
      components: [{ productSku: cup.toLowerCase(), quantity: 2 }, { productSku: saucer }, { productSku: card }],
    },
  });
  expect(made.status).toBe(201);
  setId = made.body.id;
  expect(
    (
      await api.post('/products', {
        sku: box,
        title: { value: 'Gift box' },
        price: 12,
        productType: 'bundle',
        bundleConfig: { inventoryMode: 'reserved', components: [{ productSku: cup }] },
      })
    ).status,
  ).toBe(201);
  // at A: 10 cups make 5 sets, 7 saucers 7: 5 sets. At B: 4 cups make 2, 1 saucer 1: 1 set.
  await put(A, cup, 10);
  await put(A, saucer, 7);
  await put(B, cup, 4);
  await put(B, saucer, 1);
  // the set's own SKU holds a balance nobody sells from; the box's is what it has
  await put(A, set, 99);
  await put(A, box, 3);
});
afterAll(() => deps.close());

test('the product with extend=inventory shows what the components make up at each location', async () => {
  const res = await api.get(`/products/${setId}?extend=inventory`);
  expect(res.status).toBe(200);
  expect(res.body.inventory).toEqual({
    total: 6,
    byLocation: [
      { locationId: A, onHand: 5 },
      { locationId: B, onHand: 1 },
    ].sort((x, y) => x.locationId.localeCompare(y.locationId)),
  });
  const list = await api.get(`/products?q=${P}&extend=inventory&limit=50`);
  const shown = Object.fromEntries(
    (list.body as { sku: string; inventory: { total: number } }[]).map((p) => [p.sku, p.inventory.total]),
  );
  expect(shown).toMatchObject({ [set]: 6, [box]: 3, [cup]: 14 });
});

test("the inventory reads of the bundle's SKU show the same, marked calculated", async () => {
  const all = await api.get(`/inventory/items/${set}`);
  expect(all.status).toBe(200);
  expect(all.body).toMatchObject({ sku: set, total: 6, calculated: true });
  const atA = await api.get(`/inventory/location/${A}/product/${set}`);
  expect(atA.body).toMatchObject({ sku: set, locationId: A, onHand: 5, calculated: true });
  const reserved = await api.get(`/inventory/location/${A}/product/${box}`);
  expect(reserved.body.onHand).toBe(3);
  expect(reserved.body).not.toHaveProperty('calculated');
  const view = await api.get(`/products/inventory?locationId=${B}&limit=200`);
  expect((view.body as { sku: string; stock: number }[]).find((p) => p.sku === set)?.stock).toBe(1);
});

test('availableAt lists the bundle where its components make one up, and not elsewhere', async () => {
  const at = async (loc: string) =>
    ((await api.get(`/products?availableAt=${loc}&limit=200`)).body.data as { sku: string }[]).map((p) => p.sku);
  expect(await at(B)).toContain(set);
  // one cup at B makes no set (two per set), whatever the saucers
  await put(B, cup, 1);
  expect(await at(B)).not.toContain(set);
  expect(await at(A)).toContain(set);
  expect((await api.get(`/products/${setId}?extend=inventory`)).body.inventory.total).toBe(5);
});

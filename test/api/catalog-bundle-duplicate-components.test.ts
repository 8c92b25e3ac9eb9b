import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * A bundle names a component SKU once (here once in lower case, once in upper case: the same
 * product once normalised): the repeat is 400 naming its field. Before, it was stored, and the
 * stock shown for the calculated bundle counted each entry on its own (3) while an order sold
 * every entry (2 per bundle), so an order for the stock the bundle showed was refused.
 */
let deps: TestDeps;
let api: ApiClient;
let location: string;
const P = `RBD${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'review bundle duplicate components');
  api = new ApiClient(t.key);
  location = systemLocationId(t.tenantId);
});
afterAll(() => deps.close());

test('a bundle naming one component twice shows the stock an order can actually take', async () => {
  const part = `${P}-CUP`;
  expect((await api.post('/products', { sku: part, title: { value: 'cup' }, price: 1 })).status).toBe(201);
  expect((await api.put(`/inventory/location/${location}/product/${part}`, { stock: 3 })).status).toBe(200);

  const made = await api.post('/products', {
    sku: `${P}-PAIR`,
    title: { value: 'pair of cups' },
    price: 5,
    productType: 'bundle',
    bundleConfig: { components: [{ productSku: part.toLowerCase() }, { productSku: part }] },
  });
  if (made.status === 400) {
    // fixed by refusing the repeated component: nothing stored
    expect(made.body.code).toBe('validation-error');
    expect((await api.get(`/products/sku/${P}-PAIR/exists`)).body.exists).toBe(false);
    return;
  }
  expect(made.status).toBe(201);

  const shown = (await api.get(`/products/${made.body.id}?extend=inventory`)).body.inventory.total;
  // what an order really takes: a bundle sells every component entry, 2 cups per pair
  const order = await api.post('/orders', {
    externalId: `${P}-O`,
    customerInfo: { name: 'n' },
    shippingAddress: { street: 's', city: 'c', state: 's', zipCode: '1', country: 'MX' },
    items: [{ sku: `${P}-PAIR`, quantity: shown }],
  });
  expect(order.status).toBe(201);
  const accept = await api.post(`/orders/${order.body.data._id}/accept`, {});
  expect({ shown, accept: accept.status, error: accept.body?.error?.code }).toEqual({
    shown: 1,
    accept: 200,
    error: undefined,
  });
});

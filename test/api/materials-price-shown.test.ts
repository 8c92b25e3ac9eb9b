import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * Spec, "Material and supply records returned by the REST surface":
 *   | Material | sku, title {value}, baseUnit, alternativeUnits[], costing {...}, price, currency, expiration {...}, ... |
 *   | Supply   | sku, title, supplyCategory, consumptionUnit, price, currency, tags[], status, stockAlerts. |
 * `price` is one of the record's fields: answered null when unset, on create, read and list, so a
 * record has one shape. Before, the key was left out when the create body gave none. A record
 * read and sent back (price null) is accepted, and PATCH price null clears it.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `RSM${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'review material records');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

const stockAlerts = { minStock: 1, reorderPoint: 2, reorderQuantity: 5 };

test('a material created without a price still answers the price field (create, read, list)', async () => {
  const sku = `${P}-MAT`;
  const made = await api.post('/products/materials', {
    sku,
    title: { value: 'Flour' },
    baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
    costingMethod: 'fifo',
    initialCost: 2,
    currency: 'USD',
    lotTrackingEnabled: false,
    stockAlerts,
  });
  expect(made.status).toBe(201);
  expect(Object.keys(made.body)).toContain('price');
  const read = await api.get(`/products/materials/${sku}`);
  expect(read.status).toBe(200);
  expect(Object.keys(read.body)).toContain('price');
  const list = await api.get('/products/materials', { query: { term: sku } });
  expect(list.status).toBe(200);
  expect(list.body.data).toHaveLength(1);
  expect(Object.keys(list.body.data[0])).toContain('price');
});

// the spec's supply create body lists price: refusing a create without one also conforms
test('a supply created without a price answers the price field, or the create is refused', async () => {
  const sku = `${P}-SUP`;
  const made = await api.post('/products/supplies', {
    sku,
    title: { value: 'Box' },
    supplyCategory: 'packaging',
    consumptionUnit: 'pza',
    currency: 'USD',
    stockAlerts,
  });
  if (made.status === 400) return expect(made.body.code).toBe('validation-error');
  expect(made.status).toBe(201);
  expect(Object.keys(made.body)).toContain('price');
  const read = await api.get(`/products/supplies/${sku}`);
  expect(read.status).toBe(200);
  expect(Object.keys(read.body)).toContain('price');
});

test('a supply read and sent back (price null) is accepted; PATCH price null clears a price', async () => {
  const sku = `${P}-ROUND`;
  const made = await api.post('/products/supplies', {
    sku,
    title: 'Round trip',
    supplyCategory: 'packaging',
    consumptionUnit: 'pza',
    price: 2.5,
  });
  expect(made.status).toBe(201);
  const cleared = await api.patch(`/products/supplies/${sku}`, { price: null });
  expect(cleared.status).toBe(200);
  expect(cleared.body.price).toBeNull();
  expect((await api.get(`/products/supplies/${sku}`)).body.price).toBeNull();
  const again = await api.patch(`/products/supplies/${sku}`, { price: cleared.body.price, tags: ['box'] });
  expect(again.status).toBe(200);
  expect(again.body).toMatchObject({ price: null, tags: ['box'] });
});

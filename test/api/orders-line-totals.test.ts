import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/** A line's total is its unit price times its quantity, rounded once to the cent (half up). */
let deps: TestDeps;
let api: ApiClient;
let n = 0;
const P = `LT${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'line totals');
  api = new ApiClient(t.key);
  const tee = { sku: `${P}-TEE`, title: { value: 'Tee' }, price: 10, sellIfOutOfStock: true, taxable: false };
  expect((await api.post('/products', tee)).status).toBe(201);
});
afterAll(() => deps.close());

test.each([
  // [quantity, unit price, line total]
  [100, 0.005, 0.5], // not 100 × 0.01: the price is not rounded up to a cent before multiplying
  [3, 19.99, 59.97],
  [1, 1.005, 1.01], // half up, although 1.005 × 100 is 100.4999… in binary floating point
  [7, 0.333333, 2.33],
  [1, 0.004, 0],
  [100000, 0.015, 1500],
])('%i × %d totals %d, and the stored order says the same', async (quantity, price, lineTotal) => {
  const res = await api.post('/orders', {
    externalId: `${P}-ext-${++n}`,
    customerInfo: { name: 'Ana', email: 'ana@example.com' },
    items: [{ sku: `${P}-TEE`, quantity, price }],
  });
  expect(res.status).toBe(201);
  const order = res.body.data;
  expect({ price: order.items[0].price, lineTotal: order.items[0].lineTotal, subtotal: order.subtotal }).toEqual({
    price,
    lineTotal,
    subtotal: lineTotal,
  });
  const read = (await api.get(`/orders/${order._id}`)).body.data;
  expect(read.items[0].lineTotal).toBe(lineTotal);
  expect(read.subtotal).toBe(lineTotal);
});

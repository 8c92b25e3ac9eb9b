import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

let deps: TestDeps;
let api: ApiClient;
let n = 0;
const P = `OU${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey();
  api = new ApiClient(t.key);
  const tee = { sku: `${P}-TEE`, title: { value: 'Tee' }, price: 10, sellIfOutOfStock: true };
  expect((await api.post('/products', tee)).status).toBe(201);
});
afterAll(() => deps.close());

async function createOrder(o: Record<string, unknown> = {}) {
  const res = await api.post('/orders', {
    externalId: `${P}-ext-${++n}`,
    customerInfo: { name: 'Ana', email: 'ana@example.com' },
    items: [{ sku: `${P}-TEE`, quantity: 1 }],
    ...o,
  });
  expect(res.status).toBe(201);
  return res.body.data;
}
const activity = async (id: string) => (await api.get(`/orders/${id}/activity-log?limit=200`)).body.data as any[];

describe('PUT /orders/{id} that changes nothing', () => {
  test.each([
    ['customerInfo with the values it already has', { customerInfo: { name: 'Ana', email: 'ana@example.com' } }],
    ['customerId: null on an order linked to no customer', { customerId: null }],
    ['notes with the value they already have', { notes: 'same' }],
    ['externalId it already has', 'own externalId'],
  ])('%s: 200 with the order, no `updated` event, updatedAt kept', async (_name, body) => {
    const order = await createOrder({ notes: 'same' });
    const sent = body === 'own externalId' ? { externalId: order.externalId } : body;
    const res = await api.put(`/orders/${order._id}`, sent);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ _id: order._id, externalId: order.externalId, updatedAt: order.updatedAt });
    expect((await activity(order._id)).map((e) => [e.type, e.details])).toEqual([
      ['created', { externalId: order.externalId }],
    ]);
    expect((await api.get(`/orders/${order._id}`)).body.data).toEqual(order);
  });

  test('a body that changes one field of two names only that one in its event', async () => {
    const order = await createOrder({ notes: 'same' });
    const res = await api.put(`/orders/${order._id}`, { notes: 'same', customerInfo: { name: 'Ana', phone: '555' } });
    expect(res.status).toBe(200);
    expect(res.body.data.customerInfo).toEqual({ name: 'Ana', email: 'ana@example.com', phone: '555' });
    const events = await activity(order._id);
    expect(events.map((e) => [e.type, e.details])).toEqual([
      ['created', { externalId: order.externalId }],
      ['updated', { fields: ['customerInfo'] }],
    ]);
  });
});

describe('PUT /orders/{id} shippingAddress on an order without an address', () => {
  test('a lone country is 400 naming what is missing, and no address is stored', async () => {
    const order = await createOrder(); // no shippingAddress
    const res = await api.put(`/orders/${order._id}`, { shippingAddress: { country: 'MX' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation:invalid_input');
    expect(res.body.error.message).toContain('street, city, zipCode');
    expect((await api.get(`/orders/${order._id}`)).body.data.shippingAddress).toBeUndefined();
    expect((await activity(order._id)).map((e) => e.type)).toEqual(['created']);
  });

  test('a whole address is stored; then a lone part merges into it', async () => {
    const order = await createOrder();
    const whole = { street: '1 Main St', city: 'Monterrey', zipCode: '64000', country: 'MX' };
    expect((await api.put(`/orders/${order._id}`, { shippingAddress: whole })).status).toBe(200);
    const res = await api.put(`/orders/${order._id}`, { shippingAddress: { zipCode: '64001' } });
    expect(res.status).toBe(200);
    expect(res.body.data.shippingAddress).toEqual({ ...whole, zipCode: '64001' });
  });
});

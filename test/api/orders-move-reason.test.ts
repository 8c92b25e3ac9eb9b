import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

let deps: TestDeps;
let api: ApiClient;
let n = 0;
const P = `RV${Date.now().toString(36).toUpperCase()}`;

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

describe('the reason of a move is kept in its audit event, whichever move', () => {
  test.each([
    ['POST /accept', (id: string) => api.post(`/orders/${id}/accept`, { reason: 'paid by wire' })],
    [
      'PUT /status accepted',
      (id: string) => api.put(`/orders/${id}/status`, { status: 'accepted', reason: 'paid by wire' }),
    ],
    [
      'POST /transition accepted',
      (id: string) => api.post(`/orders/${id}/transition`, { to: 'accepted', reason: 'paid by wire' }),
    ],
  ])(
    '%s with a reason: 200, and the status_changed event carries it (as prepare/cancel/reject do)',
    async (_n, send) => {
      const order = await createOrder();
      const res = await send(order._id);
      expect(res.status).toBe(200);
      const ev = (await activity(order._id)).find((e) => e.type === 'status_changed');
      expect(ev.details).toEqual({ from: 'pending', to: 'accepted', via: expect.any(String), reason: 'paid by wire' });
    },
  );

  test('cancelling an accepted order (which puts its stock back) keeps the reason', async () => {
    const order = await createOrder();
    expect((await api.post(`/orders/${order._id}/accept`)).status).toBe(200);
    expect((await api.post(`/orders/${order._id}/cancel`, { reason: 'customer changed mind' })).status).toBe(200);
    const ev = (await activity(order._id)).filter((e) => e.type === 'status_changed').pop();
    expect(ev.details).toEqual({
      from: 'accepted',
      to: 'cancelled',
      via: expect.any(String),
      reason: 'customer changed mind',
    });
  });

  test('a move without a reason records none (no null reason)', async () => {
    const order = await createOrder();
    expect((await api.post(`/orders/${order._id}/accept`)).status).toBe(200);
    const ev = (await activity(order._id)).find((e) => e.type === 'status_changed');
    expect(ev.details).toEqual({ from: 'pending', to: 'accepted', via: expect.any(String) });
  });

  test('control: prepare with a reason keeps it', async () => {
    const order = await createOrder();
    expect((await api.post(`/orders/${order._id}/accept`)).status).toBe(200);
    expect((await api.post(`/orders/${order._id}/prepare`, { reason: 'kitchen ready' })).status).toBe(200);
    const ev = (await activity(order._id)).filter((e) => e.type === 'status_changed').pop();
    expect(ev.details).toEqual({ from: 'accepted', to: 'preparing', via: 'prepare', reason: 'kitchen ready' });
  });
});

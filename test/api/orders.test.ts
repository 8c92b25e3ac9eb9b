import { expectError } from '../helpers/expect-error';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { NAMED_MOVES, NEXT, ORDER_STATES, type OrderState } from '../../shared/orders/lifecycle';

/** Orders through HTTP on the real API process: create, read, partial updates, comments, activity log, lifecycle. */
let deps: TestDeps;
let api: ApiClient;
let key: string;
let keyId: string;
let n = 0;
const P = `O${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenancy.createTenant('orders tenant', { taxRate: 0.16 });
  const issued = await deps.tenancy.issueKey(tenant._id, [
    'orders:read',
    'orders:create',
    'orders:update',
    'products:create',
  ]);
  key = issued.key;
  keyId = issued.keyId;
  api = new ApiClient(key);
  const products = [
    {
      sku: `${P}-TEE`,
      title: { value: 'Tee' },
      price: 10,
      // lifecycle tests need acceptances that never lack stock (test/api/order-stock.test.ts has the stock cases)
      sellIfOutOfStock: true,
      variants: [{ sku: `${P}-TEE-L`, title: { value: 'Tee L' }, price: 12.5, position: 0, sellIfOutOfStock: true }],
    },
    { sku: `${P}-GIFT`, title: { value: 'Gift card' }, price: 50, taxable: false, productType: 'digital' },
    { sku: `${P}-GOLD`, title: { value: 'Gold bar' }, price: 1e11, sellIfOutOfStock: true },
  ];
  for (const body of products) expect((await api.post('/products', body)).status).toBe(201);
  const flour = { sku: `${P}-FLOUR`, title: 'Flour', baseUnit: { code: 'kg', name: 'kg', precision: 3 } };
  expect((await api.post('/products/materials', flour)).status).toBe(201);
});
afterAll(() => deps.close());

const orderBody = (o: Record<string, unknown> = {}) => ({
  externalId: `${P}-ext-${++n}`,
  customerInfo: { name: 'Ana López', email: 'ana@example.com' },
  shippingAddress: { street: 'Av. Reforma 1', city: 'CDMX', state: 'CDMX', zipCode: '06600', country: 'MX' },
  notes: 'leave at the door',
  items: [{ sku: `${P}-TEE`, quantity: 2 }],
  ...o,
});

async function createOrder(o: Record<string, unknown> = {}) {
  const res = await api.post('/orders', orderBody(o));
  expect(res.status).toBe(201);
  return res.body.data;
}

/** An order brought to `state` through the lifecycle endpoints. */
async function orderIn(state: OrderState) {
  const order = await createOrder();
  const path: Record<OrderState, OrderState[]> = {
    pending: [],
    accepted: ['accepted'],
    preparing: ['accepted', 'preparing'],
    ready: ['accepted', 'preparing', 'ready'],
    shipped: ['accepted', 'preparing', 'ready', 'shipped'],
    delivered: ['accepted', 'preparing', 'ready', 'shipped', 'delivered'],
    rejected: ['rejected'],
    cancelled: ['cancelled'],
  };
  for (const status of path[state]) {
    const res = await api.put(`/orders/${order._id}/status`, { status, reason: 'test' });
    if (res.status !== 200) throw new Error(`${status}: ${res.status} ${res.text}`);
  }
  return order;
}

const activity = async (id: string) => (await api.get(`/orders/${id}/activity-log?limit=200`)).body.data as any[];

describe('create and read', () => {
  test('prices come from the catalog (product or variant) or the line; tax is the tenant rate on taxable lines', async () => {
    const order = await createOrder({
      items: [
        { sku: `${P}-tee`, quantity: 2 },
        { sku: `${P}-TEE-L`, quantity: 1 },
        { sku: `${P}-GIFT`, quantity: 1 },
        { sku: `${P}-TEE`, quantity: 1, price: 7.33 },
      ],
    });
    expect(order._id).toMatch(/^[0-9a-f]{24}$/);
    expect(order.orderStatus).toBe('pending');
    expect(order.items).toEqual([
      { sku: `${P}-TEE`, name: 'Tee', quantity: 2, price: 10, taxable: true, lineTotal: 20 },
      { sku: `${P}-TEE-L`, name: 'Tee L', quantity: 1, price: 12.5, taxable: true, lineTotal: 12.5 },
      { sku: `${P}-GIFT`, name: 'Gift card', quantity: 1, price: 50, taxable: false, lineTotal: 50 },
      { sku: `${P}-TEE`, name: 'Tee', quantity: 1, price: 7.33, taxable: true, lineTotal: 7.33 },
    ]);
    expect(order).toMatchObject({ subtotal: 89.83, tax: 6.37, total: 96.2, taxRate: 0.16, currency: 'USD' });
    expect(order._links).toEqual({
      self: `/orders/${order._id}`,
      prepare: `/orders/${order._id}/prepare`,
      cancel: `/orders/${order._id}/cancel`,
    });
    const read = await api.get(`/orders/${order._id}`);
    expect(read.body).toEqual({ data: order });
  });

  test('a repeated externalId is 409, so a retried create cannot make a second order', async () => {
    const body = orderBody();
    expect((await api.post('/orders', body)).status).toBe(201);
    const again = await api.post('/orders', body);
    expectError(again, 409, 'orders:duplicate_external_id', 'orders');
    const list = await api.get(`/orders?externalId=${body.externalId}`);
    expect(list.body.meta.total).toBe(1);
  });

  test.each([
    ['customer name missing', { customerInfo: { email: 'a@b.co' } }],
    ['country not ISO 3166 alpha-2', { shippingAddress: { street: 's', city: 'c', zipCode: '1', country: 'MEX' } }],
    ['country unknown', { shippingAddress: { street: 's', city: 'c', zipCode: '1', country: 'XX' } }],
    ['no items', { items: [] }],
    ['quantity 0', { items: [{ sku: `${P}-TEE`, quantity: 0 }] }],
    ['SKU not in the catalog', { items: [{ sku: 'NOPE-404', quantity: 1 }] }],
    ['SKU of a material', { items: [{ sku: `${P}-FLOUR`, quantity: 1 }] }],
    ['line price beyond the maximum', { items: [{ sku: `${P}-TEE`, quantity: 2, price: 1e308 }] }],
    ['line total beyond exact cents', { items: [{ sku: `${P}-GOLD`, quantity: 100000 }] }],
    ['order total beyond exact cents', { items: Array(100).fill({ sku: `${P}-GOLD`, quantity: 100 }) }],
    ['computed fields sent', { total: 5 }],
    ['status sent', { orderStatus: 'accepted' }],
  ])('invalid create: %s → 400, nothing stored', async (_name, o) => {
    const body = orderBody(o);
    expectError(await api.post('/orders', body), 400, 'validation:invalid_input', 'orders');
    expect(await deps.db.collection('orders').countDocuments({ externalId: body.externalId })).toBe(0);
  });

  test('list: filters, newest first, meta', async () => {
    const a = await orderIn('accepted');
    const b = await createOrder();
    const accepted = await api.get('/orders?status=accepted&limit=200');
    expect(accepted.body.data.map((o: { _id: string }) => o._id)).toContain(a._id);
    expect(accepted.body.data.every((o: { orderStatus: string }) => o.orderStatus === 'accepted')).toBe(true);
    const byExt = await api.get(`/orders?externalId=${b.externalId}`);
    expect(byExt.body).toEqual({ data: [b], meta: { page: 1, limit: 50, total: 1 } });
    const future = await api.get(`/orders?from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    expect(future.body.data).toEqual([]);
    const page = await api.get('/orders?limit=1&page=1');
    expect(page.body.data).toHaveLength(1);
    expect(page.body.meta.total).toBeGreaterThanOrEqual(2);
    expectError(await api.get('/orders?status=lost'), 400, 'validation:invalid_input', 'orders');
  });

  test('page or limit beyond any finite number → 400 on both lists', async () => {
    const order = await createOrder();
    for (const path of ['/orders', `/orders/${order._id}/activity-log`]) {
      for (const query of [{ page: '1e309' }, { limit: '1e309' }, { page: '-1e309' }]) {
        const res = await api.get(path, { query });
        expectError(res, 400, 'validation:invalid_input', 'orders');
        expect({ path, query, message: res.body.error.message }).toEqual({
          path,
          query,
          message: expect.stringContaining(Object.keys(query)[0]),
        });
      }
    }
  });

  test("not found, including another tenant's order and a malformed id", async () => {
    const order = await createOrder();
    const other = await deps.tenantWithKey();
    expectError(await api.as(other.key).get(`/orders/${order._id}`), 404, 'orders:not_found', 'orders');
    expectError(await api.as(other.key).put(`/orders/${order._id}`, { notes: 'x' }), 404, 'orders:not_found', 'orders');
    expectError(
      await api.as(other.key).post(`/orders/${order._id}/comments`, { comment: 'x' }),
      404,
      'orders:not_found',
      'orders',
    );
    expectError(await api.as(other.key).post(`/orders/${order._id}/accept`), 404, 'orders:not_found', 'orders');
    expectError(await api.get('/orders/xyz'), 404, 'orders:not_found', 'orders');
  });
});

describe('PUT /orders/{orderId}', () => {
  test('partial: only the properties sent change; the response carries them, plus _id, externalId, orderStatus, updatedAt, _links', async () => {
    const order = await createOrder();
    const res = await api.put(`/orders/${order._id}`, { notes: 'ring twice', customerInfo: { phone: '+52 55 0000' } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data).sort()).toEqual([
      '_id',
      '_links',
      'customerInfo',
      'externalId',
      'notes',
      'orderStatus',
      'updatedAt',
    ]);
    expect(res.body.data).toMatchObject({
      _id: order._id,
      externalId: order.externalId,
      orderStatus: 'pending',
      notes: 'ring twice',
      customerInfo: { name: 'Ana López', email: 'ana@example.com', phone: '+52 55 0000' },
      _links: {
        self: `/orders/${order._id}`,
        prepare: `/orders/${order._id}/prepare`,
        cancel: `/orders/${order._id}/cancel`,
      },
    });
    const read = (await api.get(`/orders/${order._id}`)).body.data;
    expect(read).toEqual({
      ...order,
      notes: 'ring twice',
      customerInfo: res.body.data.customerInfo,
      updatedAt: res.body.data.updatedAt,
    });
  });

  test.each(['orderStatus', 'items', 'subtotal', 'tax', 'total', '_id', 'updatedAt'])(
    '%s is refused with a message naming it and the lifecycle endpoint; nothing written',
    async (field) => {
      const order = await createOrder();
      const value = {
        orderStatus: 'delivered',
        items: [],
        subtotal: 0,
        tax: 0,
        total: 0,
        _id: 'abc',
        updatedAt: new Date().toISOString(),
      }[field];
      const res = await api.put(`/orders/${order._id}`, { notes: 'sneaky', [field]: value });
      expectError(res, 400, 'validation:invalid_input', 'orders');
      expect(res.body.error.message).toContain(field);
      if (['orderStatus', 'subtotal', 'tax', 'total'].includes(field))
        expect(res.body.error.message).toContain('/orders/{orderId}/transition');
      expect((await api.get(`/orders/${order._id}`)).body.data).toEqual(order);
    },
  );

  test('empty body, empty nested object, unknown field, bad country: 400, and nothing recorded', async () => {
    const order = await createOrder();
    for (const body of [
      {},
      { customerInfo: {} },
      { shippingAddress: {}, notes: 'with nothing to merge' },
      { colour: 'red' },
      { shippingAddress: { country: 'Mexico' } },
      { customerInfo: { name: '' } },
    ]) {
      expectError(await api.put(`/orders/${order._id}`, body), 400, 'validation:invalid_input', 'orders');
    }
    expect((await api.get(`/orders/${order._id}`)).body.data).toEqual(order);
    expect((await activity(order._id)).map((e) => e.type)).toEqual(['created']);
  });

  test("externalId changed to another order's: 409 orders:duplicate_external_id, and neither order changes", async () => {
    const taken = await createOrder();
    const order = await createOrder();
    const res = await api.put(`/orders/${order._id}`, { externalId: taken.externalId, notes: 'moved' });
    expectError(res, 409, 'orders:duplicate_external_id', 'orders');
    expect(res.body.error.message).toContain(taken.externalId);
    expect((await api.get(`/orders/${order._id}`)).body.data).toEqual(order);
    expect((await api.get(`/orders/${taken._id}`)).body.data).toEqual(taken);
    expect((await activity(order._id)).map((e) => e.type)).toEqual(['created']);
    // its own externalId again is no conflict
    const same = await api.put(`/orders/${order._id}`, { externalId: order.externalId });
    expect(same.status).toBe(200);
  });

  test('customer update replaces customerInfo; name required; _links self only', async () => {
    const order = await createOrder();
    const res = await api.put(`/orders/${order._id}/customer`, { name: 'Luis', phone: '1' });
    expect(res.body).toEqual({
      data: {
        _id: order._id,
        externalId: order.externalId,
        customerInfo: { name: 'Luis', phone: '1' },
        updatedAt: expect.any(String),
        _links: { self: `/orders/${order._id}` },
      },
    });
    expectError(
      await api.put(`/orders/${order._id}/customer`, { phone: '2' }),
      400,
      'validation:invalid_input',
      'orders',
    );
    expectError(
      await api.put(`/orders/${order._id}/customer`, { name: '' }),
      400,
      'validation:invalid_input',
      'orders',
    );
  });
});

describe('comments and activity log', () => {
  test('comments are append-only events that survive every update and move; the log is in time order with actors', async () => {
    const order = await createOrder();
    const c = await api.post(`/orders/${order._id}/comments`, { comment: 'customer called' });
    expect(c.body).toEqual({ data: { success: true, orderId: order._id } });
    await api.put(`/orders/${order._id}`, { notes: 'new notes' });
    await api.post(`/orders/${order._id}/accept`);
    await api.post(`/orders/${order._id}/comments`, { comment: 'packed' });
    await api.put(`/orders/${order._id}/customer`, { name: 'Ana' });
    const log = await activity(order._id);
    expect(log.map((e) => e.type)).toEqual([
      'created',
      'comment',
      'updated',
      'status_changed',
      'stock_changed',
      'comment',
      'customer_updated',
    ]);
    expect(log.every((e) => e.actor === keyId)).toBe(true);
    expect(log[1].details).toEqual({ comment: 'customer called' });
    expect(log[3].details).toMatchObject({ from: 'pending', to: 'accepted', via: 'accept' });
    const times = log.map((e) => Date.parse(e.timestamp));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    const page2 = await api.get(`/orders/${order._id}/activity-log?limit=4&page=2`);
    expect(page2.body).toEqual({ data: log.slice(4), meta: { page: 2, limit: 4, total: 7 } });
  });

  test('a comment retried with the same Idempotency-Key is stored once; a missing comment is 400', async () => {
    const order = await createOrder();
    for (let i = 0; i < 3; i++) {
      expect(
        (
          await api.post(
            `/orders/${order._id}/comments`,
            { comment: 'once' },
            { headers: { 'idempotency-key': 'k-1' } },
          )
        ).status,
      ).toBe(200);
    }
    expect((await activity(order._id)).filter((e) => e.type === 'comment')).toHaveLength(1);
    expectError(await api.post(`/orders/${order._id}/comments`, {}), 400, 'validation:invalid_input', 'orders');
    expectError(
      await api.post(`/orders/${order._id}/comments`, { comment: '' }),
      400,
      'validation:invalid_input',
      'orders',
    );
  });
});

describe('lifecycle', () => {
  type Move = { name: string; to: OrderState; send: (id: string) => Promise<any> };
  const moves: Move[] = [
    ...Object.entries(NAMED_MOVES).map(([name, to]) => ({
      name,
      to,
      send: (id: string) => api.post(`/orders/${id}/${name}`, { reason: 'r' }),
    })),
    ...ORDER_STATES.map((to) => ({
      name: `status→${to}`,
      to,
      send: (id: string) => api.put(`/orders/${id}/status`, { status: to, reason: 'r' }),
    })),
    ...ORDER_STATES.map((to) => ({
      name: `transition→${to}`,
      to,
      send: (id: string) => api.post(`/orders/${id}/transition`, { to, reason: 'r' }),
    })),
  ];

  test.each(ORDER_STATES)('from %s: every move is allowed exactly when the state machine says so', async (from) => {
    // each move on its own order in that state, all at once
    await Promise.all(
      moves.map(async (move) => {
        const order = await orderIn(from);
        const before = (await activity(order._id)).filter((e) => e.type === 'status_changed').length;
        const res = await move.send(order._id);
        const after = await activity(order._id);
        if (NEXT[from].includes(move.to)) {
          expect({ move: move.name, status: res.status }).toEqual({ move: move.name, status: 200 });
          expect(res.body.data).toMatchObject({ _id: order._id, orderStatus: move.to, previousStatus: from });
          expect(after.filter((e) => e.type === 'status_changed')).toHaveLength(before + 1);
        } else {
          expect({ move: move.name, status: res.status, code: res.body.error?.code }).toEqual({
            move: move.name,
            status: 409,
            code: 'orders:invalid_transition',
          });
          expect(res.body.error.message).toContain(`is ${from}`);
          expect(after.filter((e) => e.type === 'status_changed')).toHaveLength(before);
          expect((await api.get(`/orders/${order._id}`)).body.data.orderStatus).toBe(from);
        }
      }),
    );
  });

  test('reject and cancel need a reason, stored in the audit event', async () => {
    const order = await createOrder();
    expectError(await api.post(`/orders/${order._id}/reject`), 400, 'validation:invalid_input', 'orders');
    expectError(
      await api.put(`/orders/${order._id}/status`, { status: 'cancelled' }),
      400,
      'validation:invalid_input',
      'orders',
    );
    await api.post(`/orders/${order._id}/cancel`, { reason: 'out of stock' });
    const ev = (await activity(order._id)).find((e) => e.type === 'status_changed');
    expect(ev.details).toEqual({ from: 'pending', to: 'cancelled', via: 'cancel', reason: 'out of stock' });
    expectError(
      await api.put(`/orders/${order._id}/status`, { status: 'lost' }),
      400,
      'validation:invalid_input',
      'orders',
    );
  });

  test('20 concurrent conflicting moves: exactly one wins, exactly one audit event', async () => {
    const order = await createOrder();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0
          ? api.post(`/orders/${order._id}/accept`)
          : api.post(`/orders/${order._id}/reject`, { reason: 'no' }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(19);
    const events = (await activity(order._id)).filter((e) => e.type === 'status_changed');
    expect(events).toHaveLength(1);
    const winner = results.find((r) => r.status === 200)!.body.data.orderStatus;
    expect((await api.get(`/orders/${order._id}`)).body.data.orderStatus).toBe(winner);
  });
});

describe('auth', () => {
  test('read needs orders:read, writes need orders:update, create needs orders:create; bad keys are 401', async () => {
    const order = await createOrder();
    const tenantId = (await deps.db.collection('api_keys').findOne({ _id: keyId as never }))!.tenantId;
    const noRead = (await deps.tenancy.issueKey(tenantId, ['orders:update'])).key;
    const noUpdate = (await deps.tenancy.issueKey(tenantId, ['orders:read'])).key;
    expectError(await api.as(noRead).get(`/orders/${order._id}`), 403, 'auth:permission_denied', 'orders');
    expectError(await api.as(noRead).get(`/orders/${order._id}/activity-log`), 403, 'auth:permission_denied', 'orders');
    expectError(
      await api.as(noUpdate).put(`/orders/${order._id}`, { notes: 'x' }),
      403,
      'auth:permission_denied',
      'orders',
    );
    expectError(
      await api.as(noUpdate).put(`/orders/${order._id}/customer`, { name: 'x' }),
      403,
      'auth:permission_denied',
      'orders',
    );
    expectError(
      await api.as(noUpdate).post(`/orders/${order._id}/comments`, { comment: 'x' }),
      403,
      'auth:permission_denied',
      'orders',
    );
    expectError(await api.as(noUpdate).post('/orders', orderBody()), 403, 'auth:permission_denied', 'orders');
    expectError(await api.as(null).put(`/orders/${order._id}`, { notes: 'x' }), 401, 'auth:invalid_token', 'orders');
    expectError(
      await api.as('bok_revokedOrUnknownKeyxxxxxxxxxxx').post(`/orders/${order._id}/comments`, { comment: 'x' }),
      401,
      'auth:invalid_token',
      'orders',
    );
  });
});

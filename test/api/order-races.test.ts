import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { Held, type HoldAt } from '../helpers/held-tenant-db';
import { REDACTED_NAME, REDACTED_VALUE } from '../../shared/customers/redaction';
import { systemLocationId } from '../../shared/locations/locations';
import { Orders } from '../../shared/orders/service';

/**
 * Races of an order's update with other requests that land between its read and its write. The
 * update runs in this process on the real database, its first write of the order held until the
 * other requests (over HTTP, on the real API and worker) are done: the interleaving that a busy
 * server produces now and then, made every time.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
const P = `OR${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key);
});
afterAll(() => deps.close());

/** `Orders` of the tenant whose call `at` (by default its first write of an order) waits (see Held). */
function heldOrders(at: HoldAt = { collection: 'orders', method: 'findOneAndUpdate', call: 1 }) {
  const held = new Held(deps.db, tenantId, at);
  return { orders: new Orders(deps.db, held, 'race-test'), held };
}

const log = async (id: string) =>
  (await api.get(`/orders/${id}/activity-log?limit=200`)).body.data as { type: string }[];

async function customer(): Promise<string> {
  const res = await api.post('/customers', { name: `${P} Ana ${++n}` });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function product(stock: number): Promise<string> {
  const sku = `${P}-MUG-${++n}`;
  expect((await api.post('/products', { sku, title: { value: 'Mug' }, price: 10 })).status).toBe(201);
  expect((await api.put(`/inventory/location/${defaultLocation()}/product/${sku}`, { stock })).status).toBe(200);
  return sku;
}

const defaultLocation = () => systemLocationId(tenantId);
const stockOf = async (sku: string) =>
  (await api.get(`/inventory/location/${defaultLocation()}/product/${sku}`)).body.onHand ?? 0;

async function order(sku: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await api.post('/orders', {
    externalId: `${P}-${++n}`,
    customerInfo: { name: 'Ana López', email: 'ana@example.com', phone: '+52 55 1234' },
    shippingAddress: { street: 'Av. Reforma 1', city: 'CDMX', state: 'CDMX', zipCode: '06600', country: 'MX' },
    items: [{ sku, quantity: 2 }],
    ...extra,
  });
  expect(res.status).toBe(201);
  return res.body.data._id;
}

describe('an update of customer fields that the customer’s redaction overtakes', () => {
  const ERASED = {
    customerInfo: { name: REDACTED_NAME, email: REDACTED_VALUE, phone: REDACTED_VALUE },
    shippingAddress: {
      street: REDACTED_VALUE,
      city: REDACTED_VALUE,
      state: REDACTED_VALUE,
      zipCode: REDACTED_VALUE,
      country: 'MX',
    },
  };

  it.each([
    [
      'PUT /orders/{id}',
      (o: Orders, id: string) =>
        o.update(id, {
          customerInfo: { name: 'Ana again', phone: '+1 555 0100' },
          shippingAddress: { street: 'Back 1' },
        }),
    ],
    ['PUT /orders/{id}/customer', (o: Orders, id: string) => o.updateCustomer(id, { name: 'Ana again' })],
  ])(
    '%s checked the customer before the redaction: it is refused 409 customer-redacted and writes no personal data back',
    async (_route, change) => {
      const c = await customer();
      const id = await order(await product(5), { customerId: c });
      const { orders, held } = heldOrders();
      const updating = change(orders, id);
      // read and checked (the customer was not redacted), its write not yet sent
      await held.reached;
      expect((await api.post(`/customers/${c}/redact`)).status).toBe(200);
      held.release();
      await expect(updating).rejects.toMatchObject({ status: 409, code: 'customer-redacted' });
      const stored = (await api.get(`/orders/${id}`)).body.data;
      expect({ customerInfo: stored.customerInfo, shippingAddress: stored.shippingAddress }).toEqual(ERASED);
      // and the order still takes what is not personal
      expect((await api.put(`/orders/${id}`, { notes: 'ring twice' })).status).toBe(200);
    },
  );
});

describe('an order redacted for one customer, relinked to another whose redaction overtakes an update', () => {
  test('the update is refused 409 customer-redacted and writes no personal data back', async () => {
    const first = await customer();
    const id = await order(await product(5), { customerId: first });
    expect((await api.post(`/customers/${first}/redact`)).status).toBe(200);
    // its fields now look redacted; it is relinked to another customer, then edited for them
    const second = await customer();
    expect((await api.put(`/orders/${id}`, { customerId: second })).status).toBe(200);
    const { orders, held } = heldOrders();
    const updating = orders.updateCustomer(id, { name: 'Bea Ruiz', email: 'bea@example.com' });
    // read and checked (the second customer was not redacted), its write not yet sent
    await held.reached;
    expect((await api.post(`/customers/${second}/redact`)).status).toBe(200);
    held.release();
    await expect(updating).rejects.toMatchObject({ status: 409, code: 'customer-redacted' });
    const stored = (await api.get(`/orders/${id}`)).body.data;
    expect(stored.customerInfo).toEqual({ name: REDACTED_NAME, email: REDACTED_VALUE, phone: REDACTED_VALUE });
    expect(stored).not.toHaveProperty('redaction');
    // each customer's redaction is in the order's trail, once
    const redactions = (await log(id)).filter((e) => e.type === 'customer_updated');
    expect(redactions).toHaveLength(2);
    expect((await api.post(`/customers/${second}/redact`)).status).toBe(200);
    expect((await log(id)).filter((e) => e.type === 'customer_updated')).toHaveLength(2);
  });
});

describe('an update naming a customer deleted meanwhile, undone after a status move', () => {
  it('puts back only what it wrote: the acceptance made meanwhile, and the stock it took, stay', async () => {
    const sku = await product(5);
    const id = await order(sku, { notes: 'leave at the door' });
    const c = await customer();
    const { orders, held } = heldOrders();
    const updating = orders.update(id, { customerId: c, notes: 'for Ana' });
    // the customer was checked; before the update's write the customer is deleted and the order accepted
    await held.reached;
    expect((await api.delete(`/customers/${c}`)).status).toBe(200);
    const accepted = await api.post(`/orders/${id}/accept`);
    expect(accepted.status).toBe(200);
    expect(await stockOf(sku)).toBe(3);
    held.release();
    // the write lands, the check after it finds the customer gone, and the update is undone
    await expect(updating).rejects.toMatchObject({ status: 400, code: 'validation:invalid_input' });
    const stored = (await api.get(`/orders/${id}`)).body.data;
    expect(stored).toMatchObject({
      orderStatus: 'accepted',
      notes: 'leave at the door',
      stock: { sales: [{ sku, quantity: 2 }] },
    });
    expect(stored.customerId).toBeUndefined();
    // its events too, and the undo's own
    expect((await log(id)).map((e) => e.type)).toEqual([
      'created',
      'updated',
      'status_changed',
      'stock_changed',
      'updated',
    ]);
    // cancelling it gives the stock back, as for any accepted order
    expect((await api.post(`/orders/${id}/cancel`, { reason: 'changed their mind' })).status).toBe(200);
    expect(await stockOf(sku)).toBe(5);
  });
});

describe('an update naming a customer that goes away before its check after the write', () => {
  it('puts the order back as it was read when nothing else changed it', async () => {
    // without a shipping address: the one the update adds goes as a whole
    const id = await order(await product(5), { shippingAddress: undefined });
    const before = (await api.get(`/orders/${id}`)).body.data;
    expect(before.shippingAddress).toBeUndefined();
    const c = await customer();
    const { orders, held } = heldOrders();
    const updating = orders.update(id, {
      customerId: c,
      customerInfo: { phone: '+1 555 0100', taxId: 'XAXX010101000' },
      shippingAddress: { street: 'Back 1', city: 'Mérida', zipCode: '97000', country: 'MX' },
      notes: 'for Ana',
    });
    await held.reached;
    expect((await api.delete(`/customers/${c}`)).status).toBe(200);
    held.release();
    await expect(updating).rejects.toMatchObject({ status: 400, code: 'validation:invalid_input' });
    expect((await api.get(`/orders/${id}`)).body.data).toEqual(before);
    expect((await log(id)).map((e) => e.type)).toEqual(['created']);
  });

  it('a redaction that rewrote what it wrote: the redacted customer is unlinked, its data stays erased', async () => {
    const id = await order(await product(5));
    const c = await customer();
    // the customer check after the write (the first read of a customer is the check before it) waits
    const { orders, held } = heldOrders({ collection: 'customers', method: 'findOne', call: 2 });
    const updating = orders.update(id, { customerId: c, customerInfo: { phone: '+1 555 0100' } });
    await held.reached;
    // the order now names the customer: its redaction erases the order's customer fields too
    expect((await api.post(`/customers/${c}/redact`)).status).toBe(200);
    held.release();
    await expect(updating).rejects.toMatchObject({ status: 400, code: 'validation:invalid_input' });
    const stored = (await api.get(`/orders/${id}`)).body.data;
    expect(stored.customerId).toBeUndefined();
    expect(stored.customerInfo).toEqual({
      name: REDACTED_NAME,
      email: REDACTED_VALUE,
      phone: REDACTED_VALUE,
    });
    expect((await api.get(`/customers/${c}/orders`)).body).toMatchObject({ orders: [], totalCount: 0 });
  });
});

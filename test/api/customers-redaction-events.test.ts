import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { WebhookReceiver } from '../helpers/webhook-receiver';
import { waitFor } from '../../scripts/stack/process';

/**
 * A redaction reaches the webhook events kept for resend and recover: neither the customer's
 * events nor its orders' hand its personal data out again.
 */
let deps: TestDeps;
let api: ApiClient;
let receiver: WebhookReceiver;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'redaction reaches events');
  api = new ApiClient(t.key);
  receiver = await new WebhookReceiver().start();
});
afterAll(async () => {
  await receiver.close();
  await deps.close();
});

const SKU = `RDE${Date.now().toString(36).toUpperCase()}`;

test('after a redaction, resending the customer’s and its order’s events carries no personal data', async () => {
  const endpoint = await api.post('/webhooks', {
    url: receiver.url,
    eventTypes: ['customer.created', 'order.created'],
  });
  expect(endpoint.status).toBe(201);
  receiver.secrets = [endpoint.body.secret];
  const id = endpoint.body.id as string;

  const mail = `maria.${Date.now()}@private.example.com`;
  const customer = await api.post('/customers', {
    name: 'María Privada',
    email: mail,
    phone: '+52 55 9999 0000',
    taxId: 'PRIV800101XX1',
  });
  expect(customer.status).toBe(201);
  expect(
    (await api.post('/products', { sku: SKU, title: { value: 'Tee' }, price: 10, sellIfOutOfStock: true })).status,
  ).toBe(201);
  const order = await api.post('/orders', {
    externalId: `${SKU}-1`,
    customerId: customer.body.id,
    customerInfo: { name: 'María Privada', email: mail },
    shippingAddress: { street: 'Calle Secreta 7', city: 'Mérida', zipCode: '97000', country: 'MX' },
    items: [{ sku: SKU, quantity: 1 }],
  });
  expect(order.status).toBe(201);

  await waitFor('both events delivered', async () => receiver.received.length === 2, { timeoutMs: 30_000 });
  // control: the first deliveries did carry the data
  expect(receiver.received.map((r) => r.body).join()).toContain(mail);
  const deliveries = (await api.get(`/webhooks/${id}/deliveries`)).body.deliveries as { id: string }[];
  expect(deliveries).toHaveLength(2);

  const redacted = await api.post(`/customers/${customer.body.id}/redact`);
  expect(redacted.status).toBe(200);

  for (const d of deliveries) {
    const resent = await api.post(`/webhooks/${id}/deliveries/${encodeURIComponent(d.id)}/resend`);
    expect(resent.status).toBe(202);
  }
  await waitFor('the resends arrive', async () => receiver.received.length >= 4, { timeoutMs: 30_000 });
  const again = receiver.received.slice(2).map((r) => r.body);
  expect(again).toHaveLength(2);
  for (const body of again) {
    for (const secret of [mail, 'María Privada', 'PRIV800101XX1', '9999 0000', 'Calle Secreta'])
      expect(body).not.toContain(secret);
  }
  // the events keep what is not personal: the ids, the order's country and totals
  const payloads = again.map((b) => JSON.parse(b));
  const orderEvent = payloads.find((p) => p.type === 'order.created');
  expect(orderEvent.data.id).toBe(order.body.data._id);
  expect(orderEvent.data.resource.shippingAddress.country).toBe('MX');
  expect(orderEvent.data.resource.total).toBe(order.body.data.total);
  expect(payloads.find((p) => p.type === 'customer.created').data.resource.name).toBe('Redacted customer');
});

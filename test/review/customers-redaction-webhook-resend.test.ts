import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { WebhookReceiver } from '../helpers/webhook-receiver';
import { waitFor } from '../../scripts/stack/process';

/**
 * docs/customers.md: `POST /customers/{id}/redact` replaces the customer's personal data (name
 * "Redacted customer"; email, phone, taxId, addresses, notes removed). docs/webhooks.md: events are
 * kept 30 days and `resend` sends "that event again". After a redaction, the service still holds
 * the customer's personal data in its stored events and hands it out again on resend.
 */
let deps: TestDeps;
let api: ApiClient;
let receiver: WebhookReceiver;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'review redaction resend');
  api = new ApiClient(t.key);
  receiver = await new WebhookReceiver().start();
});
afterAll(async () => {
  await receiver.close();
  await deps.close();
});

test('a redacted customer’s personal data is not sent again by a resend of its customer.created event', async () => {
  const endpoint = await api.post('/webhooks', { url: receiver.url, eventTypes: ['customer.created'] });
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

  await waitFor('customer.created delivered', async () => receiver.events('customer.created').length === 1, {
    timeoutMs: 30_000,
  });
  const deliveries = (await api.get(`/webhooks/${id}/deliveries`)).body.deliveries;
  expect(deliveries).toHaveLength(1);

  const redacted = await api.post(`/customers/${customer.body.id}/redact`);
  expect(redacted.status).toBe(200);
  expect(JSON.stringify(redacted.body)).not.toContain(mail);

  const resent = await api.post(`/webhooks/${id}/deliveries/${encodeURIComponent(deliveries[0].id)}/resend`);
  expect(resent.status).toBe(202);
  await waitFor('the resend arrives', async () => receiver.received.length >= 2, { timeoutMs: 30_000 });

  const again = receiver.received[receiver.received.length - 1].body;
  expect(again).not.toContain(mail);
  expect(again).not.toContain('María Privada');
  expect(again).not.toContain('PRIV800101XX1');
});

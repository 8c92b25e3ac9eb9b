import { allRoutes } from '../../api/routes';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { startWorker } from '../helpers/worker';
import { WebhookReceiver } from '../helpers/webhook-receiver';
import { waitFor, type Proc } from '../../scripts/stack/process';

/**
 * A change and a DELETE of one customer made at once: the delete is guarded by the version it
 * read, so when both succeed each is announced under its own event (docs/webhooks.md: one change,
 * one event; no event is lost).
 */
const QUEUE = `customer-event-races-${Date.now()}`;
let deps: TestDeps;
let app: { url: string; close: () => Promise<void> };
let worker: Proc;
let api: ApiClient;
let receiver: WebhookReceiver;

beforeAll(async () => {
  deps = await TestDeps.open();
  worker = startWorker(QUEUE, 'customer-event-races-worker', undefined, {
    WEBHOOK_TARGETS: 'loopback',
    WEBHOOK_ALLOW_HTTP: 'true',
  });
  app = await deps.serveApp(allRoutes, {
    taskQueue: QUEUE,
    webhooks: { ...deps.config.webhooks, targets: 'loopback', allowHttp: true },
  });
  api = new ApiClient((await deps.tenantWithKey()).key, app.url);
  receiver = await new WebhookReceiver().start();
  const res = await api.post('/webhooks', {
    url: receiver.url,
    eventTypes: ['customer.updated', 'customer.deleted', 'customer.redacted'],
  });
  expect(res.status).toBe(201);
  receiver.secrets = [res.body.secret];
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await app?.close();
  await worker?.stop();
  await deps?.close();
});

const later = <T>(ms: number, fn: () => Promise<T>) =>
  new Promise<T>((resolve, reject) => setTimeout(() => void fn().then(resolve, reject), ms));

test('a PATCH and a DELETE of one customer that both succeed are both announced', async () => {
  // control: one after the other, both changes are announced
  const control = await api.post('/customers', { name: 'Control' });
  expect((await api.patch(`/customers/${control.body.id}`, { phone: '555' })).status).toBe(200);
  expect((await api.delete(`/customers/${control.body.id}`)).status).toBe(200);
  await waitFor(
    'control events',
    async () =>
      receiver.events('customer.updated').some((e) => e.data.id === control.body.id) &&
      receiver.events('customer.deleted').some((e) => e.data.id === control.body.id),
    { timeoutMs: 30_000 },
  );

  const both: string[] = [];
  for (let round = 0; round < 40 && both.length < 5; round++) {
    const c = await api.post('/customers', { name: `Race ${round}` });
    expect(c.status).toBe(201);
    const [patched, deleted] = await Promise.all([
      api.patch(`/customers/${c.body.id}`, { phone: `555-${round}` }),
      later(round % 8, () => api.delete(`/customers/${c.body.id}`)),
    ]);
    if (patched.status === 200 && deleted.status === 200) both.push(c.body.id);
  }
  // every customer that was deleted is announced as deleted; every one patched as updated
  await waitFor(
    'events of the raced customers',
    async () => both.every((id) => receiver.events('customer.deleted').some((e) => e.data.id === id)),
    { timeoutMs: 20_000 },
  ).catch(() => undefined);
  const missing = both.flatMap((id) => {
    const types = receiver
      .events()
      .filter((e) => e.data.id === id)
      .map((e) => e.type);
    return ['customer.updated', 'customer.deleted'].filter((t) => !types.includes(t)).map((t) => `${id} ${t}`);
  });
  const ids = receiver.received.map((r) => r.headers['webhook-id']);
  expect({ raced: both.length > 0, missing }).toEqual({ raced: true, missing: [] });
  expect(new Set(ids).size).toBe(ids.length);
});

test('a redaction and a DELETE of one customer that both succeed are both announced', async () => {
  const both: string[] = [];
  for (let round = 0; round < 40 && both.length < 5; round++) {
    const c = await api.post('/customers', { name: `Redact race ${round}` });
    expect(c.status).toBe(201);
    const [redacted, deleted] = await Promise.all([
      api.post(`/customers/${c.body.id}/redact`),
      later(round % 8, () => api.delete(`/customers/${c.body.id}`)),
    ]);
    if (redacted.status === 200 && deleted.status === 200) both.push(c.body.id);
  }
  await waitFor(
    'events of the raced customers',
    async () => both.every((id) => receiver.events('customer.deleted').some((e) => e.data.id === id)),
    { timeoutMs: 20_000 },
  ).catch(() => undefined);
  const missing = both.flatMap((id) => {
    const types = receiver
      .events()
      .filter((e) => e.data.id === id)
      .map((e) => e.type);
    return ['customer.redacted', 'customer.deleted'].filter((t) => !types.includes(t)).map((t) => `${id} ${t}`);
  });
  expect({ raced: both.length > 0, missing }).toEqual({ raced: true, missing: [] });
});

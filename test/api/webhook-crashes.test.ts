import { Client } from '@temporalio/client';
import { ObjectId } from 'mongodb';
import { allRoutes } from '../../api/routes';
import { customers } from '../../shared/customers/collections';
import { TenantDb } from '../../shared/db/tenant-db';
import { webhookDeliveries, webhookEndpoints, webhookOutbox } from '../../shared/webhooks/collections';
import { WebhookDeliveries } from '../../shared/webhooks/deliveries';
import { eventIdOf, recordAround } from '../../shared/webhooks/events';
import { signalDeliveries } from '../../shared/webhooks/fan-out';
import { relayOutbox } from '../../shared/webhooks/relay';
import { installWebhookRuntime, webhookRuntime } from '../../shared/webhooks/runtime';
import { waitFor, type Proc } from '../../scripts/stack/process';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { startWorker } from '../helpers/worker';
import { WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * What a process that dies (or whose Temporal call fails) half-way through a webhook step leaves
 * is still delivered, and nothing is delivered for a change that never happened. The API runs in
 * this process, a worker runs the endpoint workflows, and a receiver verifies every delivery with
 * the `standardwebhooks` library. A crash is the state the dead process leaves: the lower-level
 * step is called and stopped where the process would have stopped.
 */
const QUEUE = `webhook-crashes-${Date.now()}`;
const SCALE = 0.00001;
let deps: TestDeps;
let app: { url: string; close: () => Promise<void> };
let worker: Proc;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  deps = await TestDeps.open();
  worker = startWorker(QUEUE, 'webhook-crashes-worker', undefined, {
    WEBHOOK_TARGETS: 'loopback',
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_RETRY_SCALE: String(SCALE),
  });
  app = await deps.serveApp(allRoutes, {
    taskQueue: QUEUE,
    webhooks: { ...deps.config.webhooks, targets: 'loopback', allowHttp: true, retryScale: SCALE },
  });
}, 120_000);

afterAll(async () => {
  for (const r of receivers) await r.close();
  await app?.close();
  await worker?.stop();
  await deps?.close();
});

const until = (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000) =>
  waitFor(what, async () => !!(await check()), { timeoutMs });

/** A fresh tenant with one endpoint (every event type) pointing at a new receiver. */
async function tenantWithEndpoint() {
  const { key, tenantId } = await deps.tenantWithKey();
  const api = new ApiClient(key, app.url);
  const r = await new WebhookReceiver().start();
  receivers.push(r);
  const res = await api.post('/webhooks', { url: r.url, eventTypes: ['*'] });
  expect(res.status).toBe(201);
  r.secrets = [res.body.secret];
  return { api, r, endpointId: res.body.id as string, tenantDb: new TenantDb(deps.db, tenantId) };
}

/** A customer created while the endpoint is disabled: its delivery is `failed`, never attempted. */
async function failedDelivery(api: ApiClient, endpointId: string) {
  expect((await api.patch(`/webhooks/${endpointId}`, { status: 'disabled' })).status).toBe(200);
  const customer = await api.post('/customers', { name: 'Kept for later' });
  expect(customer.status).toBe(201);
  await until('the failed delivery', async () => {
    const res = await api.get(`/webhooks/${endpointId}/deliveries?status=failed`);
    return res.body.deliveries.length === 1;
  });
  expect((await api.patch(`/webhooks/${endpointId}`, { status: 'enabled' })).status).toBe(200);
  const [delivery] = (await api.get(`/webhooks/${endpointId}/deliveries?status=failed`)).body.deliveries;
  return { customerId: customer.body.id as string, deliveryId: delivery.id as string };
}

describe('recover', () => {
  test('a recover whose hand-over to the endpoint workflow fails leaves the delivery for the next recover', async () => {
    const { api, r, endpointId, tenantDb } = await tenantWithEndpoint();
    const since = new Date(Date.now() - 60_000);
    const { customerId } = await failedDelivery(api, endpointId);
    const endpoint = (await tenantDb.collection(webhookEndpoints).findOne({ _id: endpointId }))!;

    // the recover's signal fails (a Temporal namespace that does not exist answers NOT_FOUND)
    const working = webhookRuntime()!;
    installWebhookRuntime({
      ...working,
      temporal: new Client({ connection: deps.temporal.connection, namespace: 'no-such-namespace' }),
    });
    try {
      await expect(new WebhookDeliveries(tenantDb).recover(endpoint, since, new Date())).rejects.toThrow();
    } finally {
      installWebhookRuntime(working);
    }

    // the operator tries again: the delivery is found and sent
    const again = await api.post(`/webhooks/${endpointId}/recover`, { since: since.toISOString() });
    expect(again.status).toBe(202);
    expect(again.body.recovered).toBe(1);
    await until('delivered', () => r.events('customer.created').some((e) => e.data.id === customerId));
    await until('recorded delivered', async () => {
      const [d] = (await api.get(`/webhooks/${endpointId}/deliveries`)).body.deliveries;
      return d.status === 'delivered';
    });
  });

  test('a recover whose process died right after telling the workflow: the workflow starts the round and sends it', async () => {
    const { api, r, endpointId, tenantDb } = await tenantWithEndpoint();
    const { customerId, deliveryId } = await failedDelivery(api, endpointId);
    const before = (await tenantDb.collection(webhookDeliveries).findOne({ _id: deliveryId }))!;

    // the signal is all that the dead process did: the delivery itself is still failed
    await signalDeliveries(webhookRuntime()!, tenantDb.tenantId, endpointId, [{ deliveryId, round: before.round + 1 }]);

    await until('delivered', () => r.events('customer.created').some((e) => e.data.id === customerId));
    await until('recorded delivered', async () => {
      const d = await tenantDb.collection(webhookDeliveries).findOne({ _id: deliveryId });
      return d?.status === 'delivered';
    });
    const after = await tenantDb.collection(webhookDeliveries).findOne({ _id: deliveryId });
    expect(after).toMatchObject({ round: before.round + 1, attempts: [expect.objectContaining({ statusCode: 200 })] });
  });
});

describe('relay', () => {
  /**
   * What PATCH /customers/{id} leaves when its process dies after recording its event pending and
   * before its write: the change's key is the version it makes (as customers/service.ts keys it),
   * and the change names that version as the sequence the customer must reach (AroundChange.sequence,
   * which customers/service.ts does not pass yet).
   */
  async function diedBeforeItsWrite(tenantDb: TenantDb, customerId: string, version: number): Promise<string> {
    const key = `customer:${customerId}:v${version}`;
    void recordAround(
      tenantDb,
      { type: 'customer.updated', key, kind: 'customer', id: customerId, sequence: version },
      () => new Promise<never>(() => undefined),
      () => ({ id: customerId, sequence: version, resource: null }),
    );
    const eventId = eventIdOf(tenantDb.tenantId, key);
    const outbox = tenantDb.collection(webhookOutbox);
    await until('the pending entry', async () => !!(await outbox.findOne({ _id: eventId })));
    // the process died a minute ago: past the relay's lease
    await outbox.updateById(eventId, { $set: { createdAt: new Date(Date.now() - 60_000) } });
    return eventId;
  }

  test('a change that never landed is not announced; its retry is, under its own webhook-id', async () => {
    const { api, r, tenantDb } = await tenantWithEndpoint();
    const created = await api.post('/customers', { name: 'Before' });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await until('created', () => r.events('customer.created').some((e) => e.data.id === id));

    const eventId = await diedBeforeItsWrite(tenantDb, id, 2);
    await relayOutbox(deps.db);
    await until(
      'the entry resolved',
      async () => !(await tenantDb.collection(webhookOutbox).findOne({ _id: eventId })),
    );

    // the client retries the change: it lands as version 2, and that is what is announced
    const renamed = await api.patch(`/customers/${id}`, { name: 'After' });
    expect(renamed.status).toBe(200);
    await until('updated', () => r.events('customer.updated').some((e) => e.data.id === id));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const updates = r.received.filter((x) => x.payload?.type === 'customer.updated');
    expect(updates.map((x) => x.payload!.data)).toEqual([
      expect.objectContaining({ id, sequence: 2, resource: expect.objectContaining({ name: 'After' }) }),
    ]);
    expect(updates[0].headers['webhook-id']).toBe(eventId);
  });

  test('a change that landed before its process died is announced once, with the resource as it is', async () => {
    const { api, r, tenantDb } = await tenantWithEndpoint();
    const created = await api.post('/customers', { name: 'Before' });
    const id = created.body.id as string;
    await until('created', () => r.events('customer.created').some((e) => e.data.id === id));

    const eventId = await diedBeforeItsWrite(tenantDb, id, 2);
    // ...except that its write did land (the customer reached version 2) before the process died
    await tenantDb
      .collection(customers)
      .updateById(new ObjectId(id), { $set: { name: 'Landed' }, $inc: { version: 1 } });
    await relayOutbox(deps.db);
    await until('updated', () => r.events('customer.updated').some((e) => e.data.id === id));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const updates = r.received.filter((x) => x.payload?.type === 'customer.updated');
    expect(updates.map((x) => x.payload!.data)).toEqual([
      expect.objectContaining({ id, sequence: 2, resource: expect.objectContaining({ name: 'Landed' }) }),
    ]);
    expect(updates[0].headers['webhook-id']).toBe(eventId);
  });
});

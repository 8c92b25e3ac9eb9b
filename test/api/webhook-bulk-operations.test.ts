import { allRoutes } from '../../api/routes';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { startWorker } from '../helpers/worker';
import { WebhookReceiver } from '../helpers/webhook-receiver';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';
import { waitFor, type Proc } from '../../scripts/stack/process';

/**
 * docs/webhooks.md: "No change goes unannounced". Bulk writes announce themselves once, by
 * bulk_operation.completed with the operation and its counts, rather than one product.* event per
 * product. Before, two product-changing calls announced nothing at all to an endpoint subscribed
 * to "*": the synchronous CSV import (no job) and the marketplace category assignment.
 */
const QUEUE = `review-unannounced-${Date.now()}`;
const P = `RU${Date.now().toString(36).toUpperCase()}`;
let deps: TestDeps;
let app: { url: string; close: () => Promise<void> };
let worker: Proc;
let api: ApiClient;
let receiver: WebhookReceiver;

beforeAll(async () => {
  deps = await TestDeps.open();
  worker = startWorker(QUEUE, 'review-unannounced', undefined, {
    WEBHOOK_TARGETS: 'loopback',
    WEBHOOK_ALLOW_HTTP: 'true',
  });
  app = await deps.serveApp(allRoutes, {
    taskQueue: QUEUE,
    webhooks: { ...deps.config.webhooks, targets: 'loopback', allowHttp: true },
  });
  api = new ApiClient((await deps.tenantWithKey()).key, app.url);
  receiver = await new WebhookReceiver().start();
  const ep = await api.post('/webhooks', { url: receiver.url, eventTypes: ['*'] });
  expect(ep.status).toBe(201);
  receiver.secrets = [ep.body.secret];
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await app?.close();
  await worker?.stop();
  await deps?.close();
});

const csv = (rows: Record<string, string | number>[]) =>
  toCsvText(
    nativeLayout.columns,
    rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, String(v)]))),
  );

/** Verified events whose body names any of `needles` (a product id, a SKU, an operation id). */
const mentioning = (...needles: string[]) =>
  receiver.received.filter((r) => r.payload && needles.some((n) => JSON.stringify(r.payload).includes(n)));

async function announced(...needles: string[]) {
  await waitFor('an event about the change', async () => mentioning(...needles).length > 0, {
    timeoutMs: 20_000,
  }).catch(() => undefined);
  return mentioning(...needles).map((r) => r.payload!.type);
}

test('a synchronous CSV import is announced by bulk_operation.completed with its counts', async () => {
  const sku = `${P}-SYNC`;
  const res = await api.post('/products/bulk/csv/import', {
    content: csv([{ sku, title: 'Imported', price: 3 }]),
    createIfNotExists: true,
  });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ created: 1 });
  const { productId } = (await api.get(`/products/sku/${sku}/exists`)).body;
  expect(productId).toBeTruthy();
  // control: the endpoint works (a single-product create is announced)
  const single = await api.post('/products', { sku: `${P}-ONE`, title: { value: 'One' }, price: 1 });
  expect(single.status).toBe(201);
  expect(await announced(single.body.id)).toContain('product.created');

  expect(await announced(res.body.operationId)).toEqual(['bulk_operation.completed']);
  const [event] = receiver.events('bulk_operation.completed').filter((e) => e.data.id === res.body.operationId);
  expect(event.data).toMatchObject({
    sequence: 1,
    resource: { id: res.body.operationId, type: 'csv-import', status: 'completed', counts: { created: 1 } },
  });
});

test('a marketplace category assignment is announced by bulk_operation.completed', async () => {
  const created = await api.post('/products', { sku: `${P}-CAT`, title: { value: 'Cat' }, price: 1 });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  await waitFor('product.created', async () => receiver.events('product.created').some((e) => e.data.id === id), {
    timeoutMs: 20_000,
  });
  const channel = await api.post('/channels', {
    name: 'ML',
    type: 'mercadolibre',
    settings: { endpointUrl: 'https://ml.example.com' },
  });
  const assigned = await api.post('/products/marketplace-categories', {
    skus: [`${P}-CAT`],
    channelId: channel.body.id,
    category: { id: 'MLM1055', name: 'Phones' },
  });
  expect(assigned.status).toBe(200);
  expect(assigned.body).toMatchObject({ assigned: 1 });
  expect(assigned.body.operationId).toEqual(expect.any(String));
  const about = () => receiver.events().filter((e) => e.data.id === assigned.body.operationId);
  await waitFor('an event about the assignment', async () => about().length > 0, { timeoutMs: 20_000 });
  expect(about().map((e) => [e.type, e.data.resource.type, e.data.resource.counts.updated])).toEqual([
    ['bulk_operation.completed', 'marketplace-category', 1],
  ]);
});

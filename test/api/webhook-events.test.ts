import { allRoutes } from '../../api/routes';
import { systemLocationId } from '../../shared/locations/locations';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';
import { TenantDb } from '../../shared/db/tenant-db';
import { isFinished, jobs } from '../../shared/jobs/collection';
import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { startWorker } from '../helpers/worker';
import { WebhookReceiver, type Received } from '../helpers/webhook-receiver';
import { waitFor, type Proc } from '../../scripts/stack/process';

/**
 * Every event of the catalog arrives, signed, at a subscribed endpoint when a client causes it the
 * way a client does: HTTP calls, a real import job, a publication cancelled, a rollback, stock
 * moving through transfers and sales. Each is checked for its type, its resource's id, its
 * sequence (rising with each change of the resource) and the resource's fields.
 */
const QUEUE = `webhook-events-${Date.now()}`;
const SECRET = 'webhook-events-channel-secret-0123';
const P = `WE${Date.now().toString(36).toUpperCase()}`;
let deps: TestDeps;
let app: { url: string; close: () => Promise<void> };
let worker: Proc;
let receiver: WebhookReceiver;
let channel: ChannelServer;
let api: ApiClient;
let tenantId: string;
let n = 0;

type Payload = NonNullable<Received['payload']>;

beforeAll(async () => {
  deps = await TestDeps.open();
  worker = startWorker(QUEUE, 'webhook-events', undefined, { WEBHOOK_TARGETS: 'loopback', WEBHOOK_ALLOW_HTTP: 'true' });
  app = await deps.serveApp(allRoutes, {
    taskQueue: QUEUE,
    publishSyncMax: 0,
    webhooks: { ...deps.config.webhooks, targets: 'loopback', allowHttp: true },
  });
  const tenant = await deps.tenantWithKey();
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key, app.url);
  receiver = await new WebhookReceiver().start();
  channel = await new ChannelServer(SECRET).start();
  const endpoint = await api.post('/webhooks', { url: receiver.url, eventTypes: ['*'] });
  expect(endpoint.status).toBe(201);
  receiver.secrets = [endpoint.body.secret];
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await channel?.close();
  await app?.close();
  await worker?.stop();
  await deps?.close();
});

/** The events of `type` about resource `id` received so far, in arrival order. */
const eventsOf = (type: string, id: string): Payload[] => receiver.events(type).filter((e) => e.data.id === id);

/** Waits for the `count`-th event of `type` about `id` (matching `where`, when given); answers them all. */
async function arrived(type: string, id: string, count = 1, where: (e: Payload) => boolean = () => true) {
  await waitFor(`${count} ${type} of ${id}`, async () => eventsOf(type, id).filter(where).length >= count, {
    timeoutMs: 60_000,
  });
  return eventsOf(type, id).filter(where);
}

async function ok<T = any>(res: Promise<{ status: number; body: T }>, status = 200): Promise<T> {
  const r = await res;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

async function product(extra: Record<string, unknown> = {}) {
  const sku = `${P}-${++n}`;
  const body = await ok(
    api.post('/products', {
      sku,
      title: { value: `Product ${n}` },
      price: 10,
      status: 'active',
      brand: 'Acme',
      category: { name: 'Tools', path: 'Home > Tools' },
      media: [{ src: `https://img.example.com/${n}.jpg`, name: 'front', alt: { value: 'front' }, position: 0 }],
      ...extra,
    }),
    201,
  );
  return { id: body.id as string, sku };
}

const setStock = (sku: string, stock: number, location = systemLocationId(tenantId)) =>
  ok(api.put(`/inventory/location/${location}/product/${sku}`, { stock }));

/** Each sequence higher than the one before. */
function expectRising(events: Payload[]) {
  const seqs = events.map((e) => e.data.sequence);
  for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1]);
}

test('every delivery is signed for the endpoint and carries {type, timestamp, data: {id, sequence, resource}}', async () => {
  const p = await product();
  const [created] = await arrived('product.created', p.id);
  const delivery = receiver.received.find((r) => r.payload === created)!;
  expect(delivery.headers['webhook-id']).toMatch(/^msg_/);
  expect(created).toEqual({
    type: 'product.created',
    timestamp: expect.any(String),
    data: { id: p.id, sequence: 1, resource: expect.objectContaining({ id: p.id, sku: p.sku }) },
  });
});

test('customers: created, updated, redacted and deleted, with the version as sequence', async () => {
  const c = await ok(api.post('/customers', { name: 'Ada', email: `${P.toLowerCase()}-ada@example.com` }), 201);
  await ok(api.patch(`/customers/${c.id}`, { phone: '+44 20 7946 0000' }));
  const [created] = await arrived('customer.created', c.id);
  const [updated] = await arrived('customer.updated', c.id);
  expect(created.data).toMatchObject({ sequence: 1, resource: { id: c.id, name: 'Ada', phone: null } });
  expect(updated.data).toMatchObject({ sequence: 2, resource: { id: c.id, phone: '+44 20 7946 0000' } });

  // redaction: the customer, and each of its orders' customer fields (order.updated)
  const p = await product();
  const order = await ok(
    api.post('/orders', {
      externalId: `${P}-redact`,
      customerId: c.id,
      customerInfo: { name: 'Ada' },
      items: [{ sku: p.sku, quantity: 1 }],
    }),
    201,
  );
  await ok(api.post(`/customers/${c.id}/redact`));
  const [redacted] = await arrived('customer.redacted', c.id);
  expect(redacted.data).toMatchObject({
    sequence: 3,
    resource: { id: c.id, name: 'Redacted customer', email: null, redactedAt: expect.any(String) },
  });
  const [orderRedacted] = await arrived('order.updated', order.data._id);
  expect(orderRedacted.data).toMatchObject({ sequence: 2, resource: { customerInfo: { name: 'Redacted customer' } } });

  const gone = await ok(api.post('/customers', { name: 'Temporary' }), 201);
  await ok(api.delete(`/customers/${gone.id}`));
  const [deleted] = await arrived('customer.deleted', gone.id);
  expect(deleted.data).toMatchObject({ sequence: 2, resource: { id: gone.id, name: 'Temporary' } });
});

test('products: created, updated (PUT, its bill of materials) and deleted; version as sequence', async () => {
  const p = await product();
  await ok(api.put(`/products/${p.id}`, { sku: p.sku, title: { value: 'Renamed' }, price: 12 }));
  const material = `${P}-FLOUR`;
  await ok(
    api.post('/products/materials', {
      sku: material,
      title: 'Flour',
      baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
    }),
    201,
  );
  await ok(
    api.put(`/products/${p.sku}/bom`, {
      consumptionMode: 'manual',
      yield: { quantity: 1, unit: 'kg' },
      components: [{ materialSku: material, quantity: 0.5, unit: 'kg' }],
    }),
  );
  const updates = await arrived('product.updated', p.id, 2);
  expect(updates.map((e) => e.data.sequence)).toEqual([2, 3]);
  expect(updates[0].data.resource).toMatchObject({ id: p.id, title: { value: 'Renamed' }, price: 12 });
  expect(updates[1].data.resource.billOfMaterials).toMatchObject({ components: [{ materialSku: material }] });

  await ok(api.delete(`/products/${p.id}`));
  const [deleted] = await arrived('product.deleted', p.id);
  expect(deleted.data).toMatchObject({ sequence: 4, resource: { id: p.id, sku: p.sku, title: { value: 'Renamed' } } });
});

test('orders: created, updated, status changes (accepting takes stock: stock.changed) and comments', async () => {
  const p = await product();
  await setStock(p.sku, 5);
  const order = await ok(
    api.post('/orders', {
      externalId: `${P}-order`,
      customerInfo: { name: 'Grace' },
      items: [{ sku: p.sku, quantity: 2 }],
    }),
    201,
  );
  const id = order.data._id as string;
  await ok(api.put(`/orders/${id}`, { notes: 'leave at the door' }));
  await ok(api.post(`/orders/${id}/accept`));
  await ok(api.post(`/orders/${id}/prepare`));
  await ok(api.post(`/orders/${id}/comments`, { comment: 'wrapped' }, { headers: { 'idempotency-key': `${P}-c1` } }));
  // retried with its key: one comment, one event
  await ok(api.post(`/orders/${id}/comments`, { comment: 'wrapped' }, { headers: { 'idempotency-key': `${P}-c1` } }));

  const [created] = await arrived('order.created', id);
  expect(created.data).toMatchObject({ sequence: 1, resource: { _id: id, orderStatus: 'pending', total: 20 } });
  const [updated] = await arrived('order.updated', id);
  expect(updated.data).toMatchObject({ sequence: 2, resource: { notes: 'leave at the door' } });
  const moves = await arrived('order.status_changed', id, 2);
  expect(moves.map((e) => e.data.resource.orderStatus)).toEqual(['accepted', 'preparing']);
  // accepting pushes its move and its stock effect: the sequence counts both
  expect(moves.map((e) => e.data.sequence)).toEqual([3, 5]);

  const commentsOf = () => receiver.events('order.comment_added').filter((e) => e.data.resource.orderId === id);
  await waitFor('the comment', async () => commentsOf().length > 0, { timeoutMs: 60_000 });
  const [comment] = commentsOf();
  expect(comment.data).toMatchObject({ sequence: 1, resource: { orderId: id, comment: 'wrapped' } });

  // the sale moved the ledger: 5 set, then -2
  const level = `${systemLocationId(tenantId)}:${p.sku}`;
  const stock = await arrived('stock.changed', level, 2);
  expect(stock.map((e) => e.data.resource.onHand)).toEqual([5, 3]);
  expect(stock[1].data.resource).toMatchObject({
    kind: 'product',
    sku: p.sku,
    locationId: systemLocationId(tenantId),
    movement: { delta: -2, reason: 'sale', reference: { type: 'order', id } },
  });
  expectRising(stock);
  // the comment retried with its Idempotency-Key was announced once
  expect(commentsOf()).toHaveLength(1);
});

test('transfers: created, approved, received (stock.changed at both ends), and cancelled', async () => {
  const p = await product();
  const origin = systemLocationId(tenantId);
  const dest = (await ok(api.post('/locations', { name: `Store ${P}`, type: 'location' }), 201)).id as string;
  await setStock(p.sku, 10);
  const t = await ok(
    api.post('/inventory/transfers', {
      originId: origin,
      destinationId: dest,
      productsList: [{ sku: p.sku, quantity: 4 }],
    }),
    201,
  );
  await ok(api.post(`/inventory/transfers/${t.id}/approve`));
  await ok(api.post(`/inventory/transfers/${t.id}/receive`));
  const [created] = await arrived('transfer.created', t.id);
  const [approved] = await arrived('transfer.approved', t.id);
  const [received] = await arrived('transfer.received', t.id);
  expect([created, approved, received].map((e) => e.data.resource.status)).toEqual(['pending', 'approved', 'received']);
  expectRising([created, approved, received]);
  expect(received.data.resource).toMatchObject({ id: t.id, originId: origin, destinationId: dest });

  const [out] = await arrived('stock.changed', `${origin}:${p.sku}`, 1, (e) => e.data.resource.movement.delta === -4);
  expect(out.data.resource).toMatchObject({ onHand: 6, movement: { reason: 'transfer_out' } });
  const [into] = await arrived('stock.changed', `${dest}:${p.sku}`);
  expect(into.data.resource).toMatchObject({ onHand: 4, movement: { delta: 4, reason: 'transfer_in' } });

  const other = await ok(
    api.post('/inventory/transfers', {
      originId: origin,
      destinationId: dest,
      productsList: [{ sku: p.sku, quantity: 1 }],
    }),
    201,
  );
  await ok(api.post(`/inventory/transfers/${other.id}/cancel`, { reason: 'not needed' }));
  const [cancelled] = await arrived('transfer.cancelled', other.id);
  expect(cancelled.data.resource).toMatchObject({ status: 'cancelled', cancelReason: 'not needed' });
});

test('adjustments: created, approved (the stock set: stock.changed) and rejected', async () => {
  const p = await product();
  const location = systemLocationId(tenantId);
  const a = await ok(
    api.post('/inventory/adjustments', { locationId: location, sku: p.sku, newQuantity: 7, reason: 'found' }),
    201,
  );
  await ok(api.post(`/inventory/adjustments/${a.id}/approve`));
  const [created] = await arrived('adjustment.created', a.id);
  const [approved] = await arrived('adjustment.approved', a.id);
  expect(created.data).toMatchObject({ sequence: 1, resource: { id: a.id, status: 'pending', newQuantity: 7 } });
  expect(approved.data).toMatchObject({
    sequence: 2,
    resource: { status: 'approved', applied: true, quantityAfter: 7 },
  });
  const [stock] = await arrived('stock.changed', `${location}:${p.sku}`);
  expect(stock.data.resource).toMatchObject({ onHand: 7, movement: { delta: 7, reason: 'found' } });

  const b = await ok(
    api.post('/inventory/adjustments', { locationId: location, sku: p.sku, newQuantity: 1, reason: 'damage' }),
    201,
  );
  await ok(api.post(`/inventory/adjustments/${b.id}/reject`, { reason: 'miscounted' }));
  const [rejected] = await arrived('adjustment.rejected', b.id);
  expect(rejected.data).toMatchObject({ sequence: 2, resource: { status: 'rejected', rejectionReason: 'miscounted' } });
});

test.each(['material', 'supply'] as const)(
  '%s stock: receipts announce stock.changed; an alert opens at the reorder point and closes when stock recovers',
  async (kind) => {
    const path = kind === 'material' ? 'materials' : 'supplies';
    const sku = `${P}-${kind.toUpperCase()}-${++n}`;
    await ok(
      api.post(`/products/${path}`, {
        sku,
        title: `A ${kind}`,
        ...(kind === 'material' ? { baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 } } : {}),
        stockAlerts: { minStock: 2, reorderPoint: 10, reorderQuantity: 20 },
      }),
      201,
    );
    const location = systemLocationId(tenantId);
    const first = await ok(api.post(`/products/${path}/${sku}/stock/${location}`, { quantity: 5 }));
    const alertId = first.alert.id as string;
    await ok(api.post(`/products/${path}/${sku}/stock/${location}`, { quantity: 20 }));

    const [opened] = await arrived(`${kind}.alert_opened`, alertId);
    const [closed] = await arrived(`${kind}.alert_closed`, alertId);
    expect(opened.data).toMatchObject({ sequence: 1, resource: { id: alertId, sku, kind, status: 'open' } });
    expect(closed.data).toMatchObject({
      sequence: 2,
      resource: { id: alertId, status: 'closed', availableAtClose: 25 },
    });

    const stock = await arrived('stock.changed', `${location}:${sku}`, 2);
    expect(stock.map((e) => e.data.resource.onHand)).toEqual([5, 25]);
    expect(stock[1].data.resource).toMatchObject({ kind, sku, movement: { delta: 20, reason: 'receipt' } });
    expectRising(stock);
  },
);

const csv = (rows: Record<string, string | number>[]) =>
  toCsvText(
    nativeLayout.columns,
    rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, String(v)]))),
  );

async function upload(content: string): Promise<string> {
  const res = await ok(api.post('/products/bulk/csv/upload-url'));
  const form = new FormData();
  for (const [name, value] of Object.entries(res.fields as Record<string, string>)) form.append(name, value);
  form.append('file', new Blob([content]), 'products.csv');
  const put = await fetch(res.url, { method: 'POST', body: form });
  expect(put.status).toBeLessThan(300);
  return res.s3Key;
}

test('jobs: an import completes (job.completed, and no product.* per row), its rollback too (bulk_operation.rolled_back)', async () => {
  const skus = [`${P}-IMP-1`, `${P}-IMP-2`];
  const started = await ok(
    api.post('/products/bulk/csv/import', {
      s3Key: await upload(csv(skus.map((sku) => ({ sku, title: sku, price: 1 })))),
      config: { createIfNotExists: true },
    }),
    202,
  );
  const [completed] = await arrived('job.completed', started.jobId);
  expect(completed.data).toMatchObject({
    sequence: 1,
    resource: { id: started.jobId, type: 'csv-import', status: 'completed', result: expect.any(Object) },
  });
  expect(completed.data.resource.input).not.toHaveProperty('s3Key');
  const imported = receiver.events('product.created').filter((e) => skus.includes(e.data.resource.sku));
  expect(imported).toEqual([]);

  // an import job records its products as the bulk operation named after it (shared/csv/async-jobs.ts)
  const operationId = `bop_${started.jobId}`;
  expect(completed.data.resource.result).toMatchObject({ created: 2 });
  expect(await ok(api.get(`/products/bulk/operations/${operationId}`))).toMatchObject({ canRollback: true });
  const rollback = await ok(api.post(`/products/bulk/operations/${operationId}/rollback`), 202);
  const [rolledBack] = await arrived('bulk_operation.rolled_back', operationId);
  expect(rolledBack.data).toMatchObject({
    resource: { id: operationId, type: 'csv-import', status: 'rolled_back', rolledBackBy: expect.any(String) },
  });
  const [rollbackDone] = await arrived('job.completed', rollback.jobId);
  expect(rollbackDone.data.resource).toMatchObject({ type: 'bulk-rollback', status: 'completed' });
});

test('jobs: a job whose workflow an operator terminated is announced failed when it settles', async () => {
  const rows = Array.from({ length: 2000 }, (_, i) => ({ sku: `${P}-BIG-${i}`, title: 'x', price: 1 }));
  const started = await ok(
    api.post('/products/bulk/csv/import', { s3Key: await upload(csv(rows)), config: { createIfNotExists: true } }),
    202,
  );
  const record = await new TenantDb(deps.db, tenantId).collection(jobs).findOne({ _id: started.jobId });
  await deps.temporal.workflow.getHandle(record!.workflowId).terminate('operator: stuck');
  await waitFor('the job to settle', async () =>
    isFinished((await ok(api.get(`/products/bulk/csv/import/${started.jobId}`))).status),
  );
  const [failed] = await arrived('job.failed', started.jobId);
  expect(failed.data.resource).toMatchObject({
    id: started.jobId,
    status: 'failed',
    error: expect.stringContaining('terminated'),
  });
});

test('jobs: a publication cancelled mid-run is announced cancelled', async () => {
  const ch = await ok(
    api.post('/channels', {
      name: `Channel ${P}`,
      type: 'custom',
      settings: { endpointUrl: channel.url },
      secret: SECRET,
    }),
    201,
  );
  const items = [await product(), await product(), await product()];
  channel.hold();
  try {
    const res = await ok(
      api.post('/products/export', { channelId: ch.id, mode: 'selected', productIds: items.map((i) => i.id) }),
      202,
    );
    await waitFor('a request held by the channel', async () => channel.received.length > 0, { timeoutMs: 60_000 });
    await ok(api.post(`/products/export/${res.jobId}/cancel`, { reason: 'wrong prices' }));
    channel.release();
    const [cancelled] = await arrived('job.cancelled', res.jobId);
    expect(cancelled.data.resource).toMatchObject({
      id: res.jobId,
      type: 'publication',
      status: 'cancelled',
      input: { channelId: ch.id, mode: 'selected' },
      result: { cancelReason: 'wrong prices' },
    });
  } finally {
    channel.release();
  }
});

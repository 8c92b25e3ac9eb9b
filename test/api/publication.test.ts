import { join } from 'node:path';
import { ChannelServer } from '../helpers/channel-server';
import { expectError } from '../helpers/expect-error';
import { http, TestDeps, testStack } from '../helpers/stack';
import { startNodeProcess, waitFor, type Proc } from '../../scripts/stack/process';
import { TenantDb } from '../../shared/db/tenant-db';
import { jobs } from '../../shared/jobs/collection';
import { Ledger } from '../../shared/inventory/ledger';
import { systemLocationId } from '../../shared/locations/locations';
import { MAX_PUBLICATION_PRODUCTS, OPTION_DEFAULTS } from '../../shared/publication/publication';
import { ObjectId } from 'mongodb';
import { publication, type PublicationInput } from '../../shared/publication/messages';
import { startWorkflow } from '../../shared/temporal/workflows';

/** Publication to a real HTTP channel server started here: sync and async, cancel, locks, errors, retail-group reads. */
const { apiUrl } = testStack();
const ROOT = join(__dirname, '..', '..');
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let key: string;
let tenantId: string;
let server: ChannelServer;
const P = `PB${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  ({ key, tenantId } = await deps.tenantWithKey());
  server = await new ChannelServer(SECRET).start();
});
afterAll(async () => {
  await server.close();
  await deps.close();
});

async function channel(
  o: { type?: string; status?: string; endpointUrl?: string; settings?: Record<string, unknown> } = {},
) {
  const res = await http(apiUrl, 'POST', '/channels', {
    key,
    body: {
      name: `Channel ${++n}`,
      type: o.type ?? 'custom',
      ...(o.status ? { status: o.status } : {}),
      settings: { endpointUrl: o.endpointUrl ?? server.url, ...o.settings },
      secret: SECRET,
    },
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function product(o: Record<string, unknown> = {}) {
  const sku = `${P}-${++n}`;
  const res = await http(apiUrl, 'POST', '/products', {
    key,
    body: {
      sku,
      title: { value: `Product ${n}` },
      price: 10,
      status: 'active',
      brand: 'Acme',
      category: { name: 'Tools', path: 'Home > Tools' },
      media: [{ src: `https://img.example.com/${n}.jpg`, name: 'front', alt: { value: 'front' }, position: 0 }],
      ...o,
    },
  });
  if (res.status !== 201) throw new Error(`product not created: ${JSON.stringify(res.body)}`);
  return res.body as { id: string; sku: string };
}

const publish = (body: Record<string, unknown>, headers?: Record<string, string>) =>
  http(apiUrl, 'POST', '/products/export', { key, body, headers });

async function finished(jobId: string) {
  for (let i = 0; i < 600; i++) {
    const res = await http(apiUrl, 'GET', `/products/export/${jobId}`, { key });
    expect(res.status).toBe(200);
    if (['completed', 'failed', 'cancelled'].includes(res.body.status)) return res.body;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('publication did not finish');
}

test('sync: a small selection answers 201 with a result per product; signed PUTs with a key per product and job; bindings record it', async () => {
  const ch = await channel();
  const variantSku = `${P}-VAR`;
  const items = [
    await product(),
    await product(),
    await product({ variants: [{ sku: variantSku, title: { value: 'L' }, price: 12, position: 0 }] }),
  ];
  const loc = systemLocationId(tenantId);
  await new Ledger(new TenantDb(deps.db, tenantId)).apply({
    sku: items[0].sku,
    locationId: loc,
    delta: 7,
    reason: 'restock',
    actor: 't',
  });
  const res = await publish({
    channelId: ch,
    mode: 'selected',
    productIds: [items[0].id, items[1].sku.toLowerCase(), items[2].sku],
    options: { locationId: loc },
  });
  expect(res.status).toBe(201);
  expect(res.body.jobId).toMatch(/^exp_/);
  expect(res.body.results).toEqual(items.map((i) => ({ sku: i.sku, success: true })));
  const got = server.received.filter((r) => items.some((i) => i.sku === r.sku));
  expect(got).toHaveLength(3);
  expect(got.every((r) => r.signatureValid)).toBe(true);
  expect(new Set(got.map((r) => r.idempotencyKey)).size).toBe(3);
  expect(got.every((r) => r.idempotencyKey.startsWith(`${res.body.jobId}:`))).toBe(true);
  expect(got.find((r) => r.sku === items[0].sku)!.body).toMatchObject({
    stock: 7,
    price: 10,
    images: [expect.any(String)],
  });
  expect(got.find((r) => r.sku === items[2].sku)!.body.variants).toEqual([
    { sku: variantSku, title: 'L', price: 12, stock: 0 },
  ]);
  const read = await http(apiUrl, 'GET', `/products/${items[0].id}`, { key });
  expect(read.body.bindings).toEqual([
    expect.objectContaining({
      channelId: ch,
      handle: `ch-${items[0].sku.toLowerCase()}`,
      type: 'custom',
      syncStatus: 'synced',
      lastError: null,
    }),
  ]);
  expect((await http(apiUrl, 'GET', `/products/export/${res.body.jobId}`, { key })).body).toMatchObject({
    status: 'completed',
    published: 3,
    failed: 0,
  });
});

test('rateLimitPerSecond spaces the PUTs to the channel, whatever the concurrency', async () => {
  const ch = await channel({ settings: { rateLimitPerSecond: 5, concurrency: 4 } });
  const items = [await product(), await product(), await product(), await product(), await product(), await product()];
  const res = await publish({ channelId: ch, mode: 'selected', productIds: items.map((i) => i.sku) });
  expect(res.status).toBe(201);
  expect(res.body.results.every((r: { success: boolean }) => r.success)).toBe(true);
  const at = server.received
    .filter((r) => items.some((i) => i.sku === r.sku))
    .map((r) => r.at)
    .sort((a, b) => a - b);
  expect(at).toHaveLength(6);
  // 5 per second: one every 200 ms (arrivals jitter by a few ms on a loaded machine)
  for (let i = 1; i < at.length; i++) expect(at[i] - at[i - 1]).toBeGreaterThanOrEqual(150);
  expect(at[5] - at[0]).toBeGreaterThanOrEqual(950);
});

test('a product the channel refuses: 400 PRODUCT_EXPORT_FAILED with the channel message per product; its binding keeps the error', async () => {
  const ch = await channel();
  const good = await product();
  const bad = await product();
  server.failSkus.set(bad.sku, { status: 422, message: 'category not allowed here' });
  const res = await publish({ channelId: ch, mode: 'selected', productIds: [good.sku, bad.sku] });
  expectError(res, 400, 'PRODUCT_EXPORT_FAILED');
  expect(res.body.details.results).toEqual([
    { sku: good.sku, success: true },
    { sku: bad.sku, success: false, error: 'category not allowed here' },
  ]);
  const read = await http(apiUrl, 'GET', `/products/${bad.id}`, { key });
  expect(read.body.bindings[0]).toMatchObject({
    channelId: ch,
    syncStatus: 'error',
    lastError: 'category not allowed here',
  });
});

test('429 with Retry-After is honoured; a 5xx is retried by Temporal; both end published', async () => {
  const ch = await channel();
  const p = await product();
  server.throttleNext = 1;
  server.errorNext = 1;
  const res = await publish({ channelId: ch, mode: 'single', productIds: [p.sku] });
  expect(res.status).toBe(201);
  expect(res.body.results).toEqual([{ sku: p.sku, success: true }]);
  expect(server.throttleNext + server.errorNext).toBe(0);
});

test('a product whose binding to the channel is inactive is not sent: CHANNEL_INACTIVE in its result', async () => {
  const ch = await channel();
  const p = await product();
  const put = await http(apiUrl, 'PUT', `/products/${p.id}`, {
    key,
    body: {
      sku: p.sku,
      title: { value: 'x' },
      price: 10,
      bindings: [{ channelId: ch, handle: 'h', type: 'custom', status: 'inactive' }],
    },
  });
  expect(put.status).toBe(200);
  const before = server.received.length;
  const res = await publish({ channelId: ch, mode: 'single', productIds: [p.id] });
  expect(res.status).toBe(201);
  expect(res.body.results).toEqual([{ sku: p.sku, success: false, error: 'CHANNEL_INACTIVE' }]);
  expect(server.received.length).toBe(before);
});

test('async: a larger selection is a job (202 exp_…) polled to completion; the list shows the newest first', async () => {
  const ch = await channel();
  const items: { id: string; sku: string }[] = [];
  for (let i = 0; i < 14; i++) items.push(await product());
  const res = await publish({ channelId: ch, selectionMode: 'selected', productIds: items.map((i) => i.sku) });
  expect(res.status).toBe(202);
  expect(res.body).toEqual({ jobId: expect.stringMatching(/^exp_/), metadata: { async: true } });
  const job = await finished(res.body.jobId);
  expect(job).toMatchObject({ status: 'completed', total: 14, published: 14, failed: 0, skipped: 0, percent: 100 });
  const list = await http(apiUrl, 'GET', '/products/export', { key });
  expect(list.body.jobs[0].jobId).toBe(res.body.jobId);
  expect(list.body.jobs.length).toBeLessThanOrEqual(20);
});

test('cancel mid-run: the job ends cancelled with its reason, nothing is sent after the cancel; a second publication meanwhile is 409', async () => {
  const ch = await channel();
  const items: { id: string; sku: string }[] = [];
  for (let i = 0; i < 30; i++) items.push(await product());
  server.hold();
  const res = await publish({ channelId: ch, mode: 'selected', productIds: items.map((i) => i.id) });
  expect(res.status).toBe(202);
  await waitFor(
    'requests held by the channel',
    async () => server.received.some((r) => items.some((i) => i.sku === r.sku)),
    { timeoutMs: 60_000 },
  );
  expectError(await publish({ channelId: ch, mode: 'single', productIds: [items[0].sku] }), 409, 'EXPORT_IN_PROGRESS');
  const cancel = await http(apiUrl, 'POST', `/products/export/${res.body.jobId}/cancel`, {
    key,
    body: { reason: 'wrong prices' },
  });
  expect(cancel.status).toBe(200);
  expect(cancel.body).toMatchObject({ success: true, message: expect.any(String) });
  const cancelledAt = Date.now();
  // already being cancelled (the job has not ended yet): 400, as for a cancelled one
  expectError(
    await http(apiUrl, 'POST', `/products/export/${res.body.jobId}/cancel`, { key, body: { reason: 'twice' } }),
    400,
    'cancel-failed',
  );
  server.release();
  const job = await finished(res.body.jobId);
  expect(job).toMatchObject({ status: 'cancelled', cancelReason: 'wrong prices' });
  await new Promise((r) => setTimeout(r, 1500));
  const sent = server.received.filter((r) => items.some((i) => i.sku === r.sku));
  expect(sent.filter((r) => r.at > cancelledAt)).toEqual([]);
  expect(sent.length).toBeLessThan(30);
  expect(job.published + job.failed).toBeLessThan(30);
  expectError(
    await http(apiUrl, 'POST', `/products/export/${res.body.jobId}/cancel`, { key, body: { reason: 'again' } }),
    400,
    'cancel-failed',
  );
  // the channel is free again
  expect((await publish({ channelId: ch, mode: 'single', productIds: [items[0].sku] })).status).toBe(201);
});

test('a publication whose workflow an operator terminated frees its channel: the next one is not 409', async () => {
  const ch = await channel();
  const items: { id: string; sku: string }[] = [];
  for (let i = 0; i < 30; i++) items.push(await product());
  server.hold();
  try {
    const res = await publish({ channelId: ch, mode: 'selected', productIds: items.map((i) => i.id) });
    expect(res.status).toBe(202);
    await waitFor(
      'requests held by the channel',
      async () => server.received.some((r) => items.some((i) => i.sku === r.sku)),
      { timeoutMs: 60_000 },
    );
    expectError(
      await publish({ channelId: ch, mode: 'single', productIds: [items[0].sku] }),
      409,
      'EXPORT_IN_PROGRESS',
    );
    const job = await new TenantDb(deps.db, tenantId).collection(jobs).findOne({ _id: res.body.jobId });
    await deps.temporal.workflow.getHandle(job!.workflowId).terminate('operator: channel stuck');
  } finally {
    server.release();
  }
  expect((await publish({ channelId: ch, mode: 'single', productIds: [items[0].sku] })).status).toBe(201);
});

test('errors: CHANNEL_NOT_FOUND, CHANNEL_INACTIVE, NO_PRODUCTS, bad-request; unknown and foreign jobs 404', async () => {
  const p = await product();
  expectError(
    await publish({ channelId: '0123456789abcdef01234567', mode: 'single', productIds: [p.sku] }),
    404,
    'CHANNEL_NOT_FOUND',
  );
  const inactive = await channel({ status: 'inactive' });
  expectError(await publish({ channelId: inactive, mode: 'single', productIds: [p.sku] }), 400, 'CHANNEL_INACTIVE');
  const ch = await channel();
  expectError(
    await publish({ channelId: ch, mode: 'filtered', filters: { brands: ['NoSuchBrand'] } }),
    400,
    'NO_PRODUCTS',
  );
  // filters are typed before they reach a query: no operator, no crash
  for (const filters of [
    { q: 5 },
    { category: { $ne: null } },
    { channelId: { $exists: true } },
    { minPrice: '10' },
    { brands: [{ $gt: '' }] },
  ]) {
    const res = await publish({ channelId: ch, mode: 'filtered', filters });
    expectError(res, 400, 'bad-request');
    expect(res.body.field).toMatch(/^filters\./);
  }
  expectError(await publish({ mode: 'single', productIds: [p.sku] }), 400, 'bad-request');
  expectError(await http(apiUrl, 'POST', '/products/export', { key }), 400, 'bad-request'); // no body at all
  expectError(await http(apiUrl, 'POST', '/products/export/validate', { key }), 400, 'bad-request');
  expectError(
    await publish({ channelId: ch, mode: 'single', productIds: [p.sku], options: { locationId: 'loc_nowhere' } }),
    404,
    'not-found/location',
  );
  expectError(await publish({ channelId: ch, mode: 'some' }), 400, 'bad-request');
  expectError(await publish({ channelId: ch, selectionMode: 'sideways' }), 400, 'bad-request');
  expectError(await publish({ channelId: ch, mode: 'selected' }), 400, 'bad-request');
  expectError(await publish({ channelId: ch, mode: 'filtered' }), 400, 'bad-request');
  expectError(await publish({ channelId: ch, mode: 'selected', productIds: [`${P}-NOPE`] }), 400, 'bad-request');
  expectError(await http(apiUrl, 'GET', '/products/export/exp_NOPE', { key }), 404, 'not-found');
  expectError(await http(apiUrl, 'POST', '/products/export/exp_NOPE/cancel', { key }), 404, 'not-found');
  const done = await publish({ channelId: ch, mode: 'single', productIds: [p.sku] });
  expect(done.status).toBe(201);
  const other = await deps.tenantWithKey();
  expectError(await http(apiUrl, 'GET', `/products/export/${done.body.jobId}`, { key: other.key }), 404, 'not-found');
  expectError(
    await http(apiUrl, 'POST', `/products/export/${done.body.jobId}/cancel`, { key: other.key }),
    404,
    'not-found',
  );
  expectError(
    await http(apiUrl, 'POST', '/products/export', {
      key: other.key,
      body: { channelId: ch, mode: 'single', productIds: [p.sku] },
    }),
    404,
    'CHANNEL_NOT_FOUND',
  );
  expectError(await http(apiUrl, 'POST', `/products/export/${done.body.jobId}/cancel`, { key }), 400, 'cancel-failed');
});

test('validate pages through a selection larger than a publication may take (all, filtered)', async () => {
  const t = await deps.tenantWithKey();
  const ch = await http(apiUrl, 'POST', '/channels', {
    key: t.key,
    body: { name: 'Big', type: 'custom', settings: { endpointUrl: server.url }, secret: SECRET },
  });
  expect(ch.status).toBe(201);
  const base = Date.now();
  const count = MAX_PUBLICATION_PRODUCTS + 1;
  await deps.db.collection('products').insertMany(
    Array.from({ length: count }, (_, i) => ({
      _id: new ObjectId(),
      tenantId: t.tenantId,
      sku: `BIG-${i}`,
      title: { value: `Big ${i}` },
      brand: 'Bulk',
      price: 5,
      status: 'active',
      media: [],
      bindings: [],
      variants: [],
      createdAt: new Date(base + i),
      updatedAt: new Date(base + i),
    })),
  );
  for (const body of [{ selectionMode: 'all' }, { selectionMode: 'filtered', filters: { brands: ['Bulk'] } }]) {
    const res = await http(apiUrl, 'POST', '/products/export/validate', {
      key: t.key,
      body: { channelId: ch.body.id, ...body, page: 101, limit: 50 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ page: 101, limit: 50, total: count });
    const listed = [...res.body.published, ...res.body.ready, ...res.body.needs_review, ...res.body.rejected];
    expect(listed.map((p: { sku: string }) => p.sku)).toEqual([`BIG-${count - 1}`]);
  }
  const far = await http(apiUrl, 'POST', '/products/export/validate', {
    key: t.key,
    body: { channelId: ch.body.id, selectionMode: 'all', page: 1e20 },
  });
  expectError(far, 400, 'bad-request');
  // a null filter is no filter
  const nulls = await http(apiUrl, 'POST', '/products/export/validate', {
    key: t.key,
    body: {
      channelId: ch.body.id,
      selectionMode: 'filtered',
      filters: { brands: ['Bulk'], category: null, minPrice: null },
      limit: 1,
    },
  });
  expect(nulls.body.total).toBe(count);
  // a publication itself is capped: a clear 400
  expectError(
    await http(apiUrl, 'POST', '/products/export', { key: t.key, body: { channelId: ch.body.id, mode: 'all' } }),
    400,
    'bad-request',
  );
});

test('validate: published, ready, needs_review and rejected with reasons', async () => {
  const ch = await channel({ type: 'mercado-libre' });
  const ready = await product();
  const noCategory = await product({ category: undefined });
  const zero = await product({ price: 0 });
  const published = await product();
  expect((await publish({ channelId: ch, mode: 'single', productIds: [published.sku] })).status).toBe(201);
  // the marketplace mapper: the site the spec gives as this type's default
  expect(server.received.filter((r) => r.sku === published.sku).at(-1)!.body).toMatchObject({
    site_id: 'MLM',
    listing_type_id: 'gold_special',
  });
  const res = await http(apiUrl, 'POST', '/products/export/validate', {
    key,
    body: { channelId: ch, selectionMode: 'selected', skus: [ready.sku, noCategory.sku, zero.sku, published.sku] },
  });
  expect(res.status).toBe(200);
  const skus = (k: string) => res.body[k].map((x: { sku: string }) => x.sku);
  expect(skus('ready')).toEqual([ready.sku]);
  expect(skus('needs_review')).toEqual([noCategory.sku]);
  expect(res.body.needs_review[0].reasons).toEqual(['no category for mercadolibre']);
  expect(skus('rejected')).toEqual([zero.sku]);
  expect(res.body.rejected[0].reasons).toContain('zero price');
  expect(skus('published')).toEqual([published.sku]);
  expectError(
    await http(apiUrl, 'POST', '/products/export/validate', { key, body: { channelId: ch } }),
    400,
    'bad-request',
  );
  expectError(
    await http(apiUrl, 'POST', '/products/export/validate', {
      key,
      body: { channelId: ch, selectionMode: 'selected' },
    }),
    400,
    'bad-request',
  );
});

test('pending feeds: a product not in sync on channels of the destination type; sku required', async () => {
  const ch = await channel({ type: 'walmart' });
  const p = await product();
  server.failSkus.set(p.sku, { status: 400, message: 'missing GTIN' });
  expect((await publish({ channelId: ch, mode: 'single', productIds: [p.sku] })).status).toBe(400);
  const res = await http(apiUrl, 'GET', `/products/export/pending-feeds?sku=${p.sku}`, { key });
  expect(res.body).toMatchObject({
    sku: p.sku,
    destination: 'walmart',
    feeds: [{ channelId: ch, syncStatus: 'error', lastError: 'missing GTIN' }],
  });
  expectError(await http(apiUrl, 'GET', '/products/export/pending-feeds', { key }), 400, 'bad-request');
});

test('retail-group reads: catalog with sync status, bound, eligible; their errors', async () => {
  const t1 = await channel({ type: 't1' });
  const p = await product();
  expect((await publish({ channelId: t1, mode: 'single', productIds: [p.sku] })).status).toBe(201);
  server.catalog = [
    { id: `ch-${p.sku.toLowerCase()}`, title: 'theirs' },
    { id: 'other', title: 'not ours' },
  ];
  const cat = await http(apiUrl, 'GET', `/products/channel/${t1}/catalog?limit=5`, { key });
  expect(cat.status).toBe(200);
  expect(cat.body.products).toEqual([
    expect.objectContaining({ sku: p.sku, syncStatus: 'synced' }),
    expect.objectContaining({ id: 'other', syncStatus: 'unlinked' }),
  ]);
  expect((await http(apiUrl, 'GET', `/products/channel/${t1}/t1?limit=5`, { key })).status).toBe(200);
  const bound = await http(apiUrl, 'GET', `/products/channel/${t1}/bound`, { key });
  expect(bound.body.products.map((x: { sku: string }) => x.sku)).toEqual([p.sku]);
  const eligible = await http(apiUrl, 'GET', `/products/channel/${t1}/eligible?inStock=false`, { key });
  expect(eligible.body.products.find((x: { sku: string }) => x.sku === p.sku)).toMatchObject({
    hasBinding: true,
    stock: 0,
  });
  server.catalogStatus = 500;
  expectError(await http(apiUrl, 'GET', `/products/channel/${t1}/catalog`, { key }), 500, 't1-api-error');
  server.catalogStatus = 200;
  const down = await channel({ type: 't1', endpointUrl: 'http://127.0.0.1:9' });
  expectError(await http(apiUrl, 'GET', `/products/channel/${down}/catalog`, { key }), 500, 't1-integration-error');
  const custom = await channel();
  expectError(await http(apiUrl, 'GET', `/products/channel/${custom}/bound`, { key }), 400, 'invalid-channel-type');
  expectError(
    await http(apiUrl, 'GET', '/products/channel/0123456789abcdef01234567/catalog', { key }),
    404,
    'channel-not-found',
  );
});

test('the worker killed mid-publication: the job finishes, every product published, resends carry the same key', async () => {
  const ch = await channel();
  const items: { id: string; sku: string }[] = [];
  for (let i = 0; i < 40; i++) items.push(await product());
  const taskQueue = `publish-kill-${Date.now()}`;
  const { env, dataDir } = testStack();
  const worker = (name: string): Proc =>
    startNodeProcess(name, join(ROOT, 'worker', 'main.ts'), {
      cwd: ROOT,
      logDir: join(dataDir, 'logs'),
      env: { ...process.env, ...env, TEMPORAL_TASK_QUEUE: taskQueue },
    });
  server.delayMs = 100;
  const jobId = `exp_KILL${Date.now()}`;
  const input: PublicationInput = {
    tenantId,
    jobId,
    channelId: ch,
    productIds: items.map((i) => i.id),
    options: { ...OPTION_DEFAULTS },
    targetMarketplaces: [],
    batchSize: 25,
    collectResults: false,
  };
  let w: Proc = worker('worker-publish-1');
  try {
    const handle = await startWorkflow(deps.temporal, publication, input, {
      taskQueue,
      workflowId: `${tenantId}/${jobId}`,
    });
    const mine = () => server.received.filter((r) => r.idempotencyKey.startsWith(`${jobId}:`));
    await waitFor('publication under way', async () => mine().length >= 8, { timeoutMs: 120_000, proc: w });
    w.child.kill('SIGKILL');
    await w.exited;
    w = worker('worker-publish-2');
    const result = await handle.result();
    server.delayMs = 0;
    expect(result).toMatchObject({ status: 'completed', published: 40, failed: 0 });
    const got = mine();
    expect(new Set(got.map((r) => r.sku))).toEqual(new Set(items.map((i) => i.sku)));
    for (const sku of new Set(got.map((r) => r.sku)))
      expect(new Set(got.filter((r) => r.sku === sku).map((r) => r.idempotencyKey)).size).toBe(1);
  } finally {
    server.delayMs = 0;
    await w.stop();
  }
});

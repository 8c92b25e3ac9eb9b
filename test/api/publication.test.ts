import { ObjectId } from 'mongodb';
import { ChannelServer } from '../helpers/channel-server';
import { ApiClient, type HttpResult } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import { waitFor } from '../../scripts/stack/process';
import { TenantDb } from '../../shared/db/tenant-db';
import { isFinished, jobs } from '../../shared/jobs/collection';
import { Ledger } from '../../shared/inventory/ledger';
import { systemLocationId } from '../../shared/locations/locations';
import { RECENT_PUBLICATIONS } from '../../shared/publication/jobs';
import { MAX_PUBLICATION_PRODUCTS } from '../../shared/publication/publication';

/** Publication to a real HTTP channel server started here: sync and async, cancel, locks, errors, retail-group reads. */
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let server: ChannelServer;
const P = `PB${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey();
  api = new ApiClient(t.key);
  tenantId = t.tenantId;
  server = await new ChannelServer(SECRET).start();
});
afterAll(async () => {
  await server.close();
  await deps.close();
});

async function channel(
  o: { type?: string; status?: string; endpointUrl?: string; settings?: Record<string, unknown> } = {},
  as = api,
) {
  const res = await as.post('/channels', {
    name: `Channel ${++n}`,
    type: o.type ?? 'custom',
    ...(o.status ? { status: o.status } : {}),
    settings: { endpointUrl: o.endpointUrl ?? server.url, ...o.settings },
    secret: SECRET,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function product(o: Record<string, unknown> = {}, as = api) {
  const sku = `${P}-${++n}`;
  const res = await as.post('/products', {
    sku,
    title: { value: `Product ${n}` },
    price: 10,
    status: 'active',
    brand: 'Acme',
    category: { name: 'Tools', path: 'Home > Tools' },
    media: [{ src: `https://img.example.com/${n}.jpg`, name: 'front', alt: { value: 'front' }, position: 0 }],
    ...o,
  });
  if (res.status !== 201) throw new Error(`product not created: ${JSON.stringify(res.body)}`);
  return res.body as { id: string; sku: string };
}

const publish = (body: Record<string, unknown>) => api.post('/products/export', body);

async function finished(jobId: string) {
  for (let i = 0; i < 600; i++) {
    const res = await api.get(`/products/export/${jobId}`);
    expect(res.status).toBe(200);
    if (isFinished(res.body.status)) return res.body;
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
  const read = await api.get(`/products/${items[0].id}`);
  expect(read.body.bindings).toEqual([
    expect.objectContaining({
      channelId: ch,
      handle: `ch-${items[0].sku.toLowerCase()}`,
      type: 'custom',
      syncStatus: 'synced',
      lastError: null,
    }),
  ]);
  expect((await api.get(`/products/export/${res.body.jobId}`)).body).toMatchObject({
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
  // 5 per second: the k-th send starts 200·k ms after the first. Arrivals carry transit jitter (on
  // a loaded machine one send arrived 173 ms late, 27 ms before the next), so each is checked
  // against the first with one slot of slack: without the gate all six arrive within a few ms.
  for (let k = 1; k < at.length; k++) expect(at[k] - at[0]).toBeGreaterThanOrEqual(200 * k - 200);
  expect(at[5] - at[0]).toBeGreaterThanOrEqual(800);
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
  const read = await api.get(`/products/${bad.id}`);
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
  const put = await api.put(`/products/${p.id}`, {
    sku: p.sku,
    title: { value: 'x' },
    price: 10,
    bindings: [{ channelId: ch, handle: 'h', type: 'custom', status: 'inactive' }],
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
  const list = await api.get('/products/export');
  expect(list.body.jobs[0].jobId).toBe(res.body.jobId);
  expect(list.body.jobs.length).toBeLessThanOrEqual(20);
});

test(`the list holds the ${RECENT_PUBLICATIONS} most recent publications, newest first`, async () => {
  // a tenant of its own with more publications than the list holds, so a list without its cap fails
  const own = api.as((await deps.tenantWithKey()).key);
  const ch = await channel({}, own);
  const p = await product({}, own);
  const started: string[] = [];
  for (let i = 0; i < RECENT_PUBLICATIONS + 1; i++) {
    const res = await own.post('/products/export', { channelId: ch, mode: 'single', productIds: [p.sku] });
    expect(res.status).toBe(201);
    started.push(res.body.jobId);
  }
  const list = await own.get('/products/export');
  expect(list.status).toBe(200);
  expect(list.body.jobs.map((j: { jobId: string }) => j.jobId)).toEqual(started.slice(1).reverse());
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
  const cancel = await api.post(`/products/export/${res.body.jobId}/cancel`, { reason: 'wrong prices' });
  expect(cancel.status).toBe(200);
  expect(cancel.body).toMatchObject({ success: true, message: expect.any(String) });
  const cancelledAt = Date.now();
  // already being cancelled (the job has not ended yet): 400, as for a cancelled one
  expectError(await api.post(`/products/export/${res.body.jobId}/cancel`, { reason: 'twice' }), 400, 'cancel-failed');
  server.release();
  const job = await finished(res.body.jobId);
  expect(job).toMatchObject({ status: 'cancelled', cancelReason: 'wrong prices' });
  await new Promise((r) => setTimeout(r, 1500));
  const sent = server.received.filter((r) => items.some((i) => i.sku === r.sku));
  expect(sent.filter((r) => r.at > cancelledAt)).toEqual([]);
  expect(sent.length).toBeLessThan(30);
  expect(job.published + job.failed).toBeLessThan(30);
  expectError(await api.post(`/products/export/${res.body.jobId}/cancel`, { reason: 'again' }), 400, 'cancel-failed');
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
  expectError(await api.post('/products/export'), 400, 'bad-request'); // no body at all
  expectError(await api.post('/products/export/validate'), 400, 'bad-request');
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
  expectError(await api.get('/products/export/exp_NOPE'), 404, 'not-found');
  expectError(await api.post('/products/export/exp_NOPE/cancel'), 404, 'not-found');
  const done = await publish({ channelId: ch, mode: 'single', productIds: [p.sku] });
  expect(done.status).toBe(201);
  const other = await deps.tenantWithKey();
  expectError(await api.as(other.key).get(`/products/export/${done.body.jobId}`), 404, 'not-found');
  expectError(await api.as(other.key).post(`/products/export/${done.body.jobId}/cancel`), 404, 'not-found');
  expectError(
    await api.as(other.key).post('/products/export', { channelId: ch, mode: 'single', productIds: [p.sku] }),
    404,
    'CHANNEL_NOT_FOUND',
  );
  expectError(await api.post(`/products/export/${done.body.jobId}/cancel`), 400, 'cancel-failed');
});

test.each([[{ tags: [] }], [{ brands: null }], [{ q: '' }], [{ q: '   ', tags: [' '], category: null }]])(
  'filters %j select nothing in particular: 400 for a filtered publication and its validation, nothing sent',
  async (filters) => {
    const ch = await channel();
    await product({ tags: ['summer'] });
    const before = server.received.length;
    const res = await publish({ channelId: ch, mode: 'filtered', filters });
    expectError(res, 400, 'bad-request');
    expect(res.body.field).toBe('filters');
    expect(res.body.message).toMatch(/mode all/);
    const legacy = await publish({ channelId: ch, selectionMode: 'filtered', filters });
    expectError(legacy, 400, 'bad-request');
    const validated = await api.post('/products/export/validate', {
      channelId: ch,
      selectionMode: 'filtered',
      filters,
    });
    expectError(validated, 400, 'bad-request');
    expect(server.received.length - before).toBe(0);
  },
);

test('validate pages through a selection larger than a publication may take (all, filtered)', async () => {
  const t = await deps.tenantWithKey();
  const big = api.as(t.key);
  const ch = await big.post('/channels', {
    name: 'Big',
    type: 'custom',
    settings: { endpointUrl: server.url },
    secret: SECRET,
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
    const res = await big.post('/products/export/validate', { channelId: ch.body.id, ...body, page: 101, limit: 50 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ page: 101, limit: 50, total: count });
    const listed = [...res.body.published, ...res.body.ready, ...res.body.needs_review, ...res.body.rejected];
    expect(listed.map((p: { sku: string }) => p.sku)).toEqual([`BIG-${count - 1}`]);
  }
  const far = await big.post('/products/export/validate', { channelId: ch.body.id, selectionMode: 'all', page: 1e20 });
  expectError(far, 400, 'bad-request');
  // a null filter is no filter
  const nulls = await big.post('/products/export/validate', {
    channelId: ch.body.id,
    selectionMode: 'filtered',
    filters: { brands: ['Bulk'], category: null, minPrice: null },
    limit: 1,
  });
  expect(nulls.body.total).toBe(count);
  // a publication itself is capped: a clear 400
  expectError(await big.post('/products/export', { channelId: ch.body.id, mode: 'all' }), 400, 'bad-request');
});

test('validate: published, ready, needs_review and rejected with reasons', async () => {
  const ch = await channel({ type: 'mercado-libre' });
  const ready = await product();
  const noCategory = await product({ category: undefined });
  const zero = await product({ price: 0 });
  const published = await product();
  // a marketplace product is ready once it has a category for the channel's site
  const assigned = await api.post('/products/marketplace-categories', {
    skus: [ready.sku, zero.sku],
    channelId: ch,
    category: { id: 'MLM1000', name: 'Herramientas' },
  });
  expect(assigned.status).toBe(200);
  server.predictor = () => [{ categoryId: 'MLM1001', categoryName: 'Taladros' }];
  try {
    expect((await publish({ channelId: ch, mode: 'single', productIds: [published.sku] })).status).toBe(201);
  } finally {
    server.predictor = null;
  }
  // the marketplace mapper: the site the spec gives as this type's default, the category the predictor gave
  expect(server.received.filter((r) => r.sku === published.sku).at(-1)!.body).toMatchObject({
    site_id: 'MLM',
    listing_type_id: 'gold_special',
    category_id: 'MLM1001',
  });
  const res = await api.post('/products/export/validate', {
    channelId: ch,
    selectionMode: 'selected',
    skus: [ready.sku, noCategory.sku, zero.sku, published.sku],
  });
  expect(res.status).toBe(200);
  const skus = (k: string) => res.body[k].map((x: { sku: string }) => x.sku);
  expect(skus('ready')).toEqual([ready.sku]);
  expect(skus('needs_review')).toEqual([noCategory.sku]);
  expect(res.body.needs_review[0].reasons).toEqual(['needs categorization for mercadolibre:MLM']);
  expect(skus('rejected')).toEqual([zero.sku]);
  expect(res.body.rejected[0].reasons).toContain('zero price');
  expect(skus('published')).toEqual([published.sku]);
  expectError(await api.post('/products/export/validate', { channelId: ch }), 400, 'bad-request');
  expectError(
    await api.post('/products/export/validate', { channelId: ch, selectionMode: 'selected' }),
    400,
    'bad-request',
  );
});

test('pending feeds: a product not in sync on channels of the destination type; sku required', async () => {
  const ch = await channel({ type: 'walmart' });
  const p = await product();
  server.failSkus.set(p.sku, { status: 400, message: 'missing GTIN' });
  // categorization off: the product goes as it is, and the channel's own refusal is what is recorded
  const off = { enableCategorization: false };
  expect((await publish({ channelId: ch, mode: 'single', productIds: [p.sku], options: off })).status).toBe(400);
  const res = await api.get(`/products/export/pending-feeds?sku=${p.sku}`);
  expect(res.body).toMatchObject({
    sku: p.sku,
    destination: 'walmart',
    feeds: [{ channelId: ch, syncStatus: 'error', lastError: 'missing GTIN' }],
  });
  expectError(await api.get('/products/export/pending-feeds'), 400, 'bad-request');
});

test('retail-group reads: catalog with sync status, bound, eligible; their errors', async () => {
  const t1 = await channel({ type: 't1' });
  const p = await product();
  const off = { enableCategorization: false };
  expect((await publish({ channelId: t1, mode: 'single', productIds: [p.sku], options: off })).status).toBe(201);
  server.catalog = [
    { id: `ch-${p.sku.toLowerCase()}`, title: 'theirs' },
    { id: 'other', title: 'not ours' },
  ];
  const cat = await api.get(`/products/channel/${t1}/catalog?limit=5`);
  expect(cat.status).toBe(200);
  expect(cat.body.products).toEqual([
    expect.objectContaining({ sku: p.sku, syncStatus: 'synced' }),
    expect.objectContaining({ id: 'other', syncStatus: 'unlinked' }),
  ]);
  expect((await api.get(`/products/channel/${t1}/t1?limit=5`)).status).toBe(200);
  const bound = await api.get(`/products/channel/${t1}/bound`);
  expect(bound.body.products.map((x: { sku: string }) => x.sku)).toEqual([p.sku]);
  const eligible = await api.get(`/products/channel/${t1}/eligible?inStock=false`);
  expect(eligible.body.products.find((x: { sku: string }) => x.sku === p.sku)).toMatchObject({
    hasBinding: true,
    stock: 0,
  });
  server.catalogStatus = 500;
  expectError(await api.get(`/products/channel/${t1}/catalog`), 500, 't1-api-error');
  server.catalogStatus = 200;
  const down = await channel({ type: 't1', endpointUrl: 'http://127.0.0.1:9' });
  expectError(await api.get(`/products/channel/${down}/catalog`), 500, 't1-integration-error');
  const custom = await channel();
  expectError(await api.get(`/products/channel/${custom}/bound`), 400, 'invalid-channel-type');
  expectError(await api.get('/products/channel/0123456789abcdef01234567/catalog'), 404, 'channel-not-found');
});

test('eligible pages in order: active products with an image and a price, with their stock; inStock keeps those with or without', async () => {
  const t = await deps.tenantWithKey();
  const own = api.as(t.key);
  const t1 = await channel({ type: 't1' }, own);
  const ledger = new Ledger(new TenantDb(deps.db, t.tenantId));
  const stock = (sku: string, delta: number) =>
    ledger.apply({ sku, locationId: systemLocationId(t.tenantId), delta, reason: 'restock', actor: 't' });
  // created oldest first; the list is newest first
  const stocked = await product({}, own);
  await stock(stocked.sku, 3);
  await product({ media: [] }, own); // no image: never eligible
  await product({ price: 0 }, own); // zero price: never eligible
  await product({ status: 'draft' }, own);
  const empty1 = await product({}, own);
  const empty2 = await product({ category: undefined, brand: undefined }, own); // fixable problems do not matter
  const variantSku = `${P}-V${++n}`;
  const byVariant = await product(
    { variants: [{ sku: variantSku, title: { value: 'S' }, price: 10, position: 0 }] },
    own,
  );
  await stock(variantSku, 2);
  const read = async (query: Record<string, string | number>) => {
    const res = await own.get(`/products/channel/${t1}/eligible`, { query });
    expect(res.status).toBe(200);
    return {
      skus: res.body.products.map((p: { sku: string }) => p.sku),
      stock: res.body.products.map((p: { stock: number }) => p.stock),
      total: res.body.total,
      page: res.body.page,
      limit: res.body.limit,
    };
  };
  const all = [byVariant, empty2, empty1, stocked].map((p) => p.sku);
  expect(await read({})).toEqual({ skus: all, stock: [2, 0, 0, 3], total: 4, page: 0, limit: 20 });
  expect(await read({ page: 0, limit: 3 })).toMatchObject({ skus: all.slice(0, 3), total: 4 });
  expect(await read({ page: 1, limit: 3 })).toMatchObject({ skus: all.slice(3), total: 4 });
  expect(await read({ inStock: 'true' })).toMatchObject({
    skus: [byVariant.sku, stocked.sku],
    stock: [2, 3],
    total: 2,
  });
  expect(await read({ inStock: 'true', page: 1, limit: 1 })).toMatchObject({ skus: [stocked.sku], total: 2 });
  expect(await read({ inStock: 'false' })).toMatchObject({ skus: [empty2.sku, empty1.sku], stock: [0, 0], total: 2 });
  expect(await read({ inStock: 'false', page: 5 })).toMatchObject({ skus: [], total: 2 });
  expect(await read({ search: empty1.sku })).toMatchObject({ skus: [empty1.sku], total: 1 });
});

test('refused input answers bad-request naming the field, before anything is looked up', async () => {
  const ch = await channel();
  const t1 = await channel({ type: 't1' });
  const field = async (res: Promise<HttpResult>) => {
    const r = await res;
    expectError(r, 400, 'bad-request');
    return r.body.field as string;
  };
  expect(await field(publish({ channelId: ch, mode: 'all', extra: 1 }))).toBe('extra');
  expect(await field(publish({ channelId: ch, mode: 'single', selectionMode: 'selected', productIds: ['x'] }))).toBe(
    'selectionMode',
  );
  expect(await field(publish({ channelId: ch, mode: 'single', productIds: ['a', 'b'] }))).toBe('productIds');
  expect(await field(publish({ channelId: ch, mode: 'all', options: { fast: true } }))).toBe('options.fast');
  expect(await field(publish({ channelId: ch, mode: 'all', options: { forceUpdate: 'yes' } }))).toBe(
    'options.forceUpdate',
  );
  expect(await field(publish({ channelId: ch, mode: 'all', targetMarketplaces: [1] }))).toMatch(/^targetMarketplaces/);
  expect(await field(publish({ channelId: ch, mode: 'filtered', filters: { colour: 'red' } }))).toBe('filters.colour');
  expect(await field(api.post('/products/export', [1]))).toBe('(body)');
  expect(await field(api.post('/products/export/validate', { channelId: ch, selectionMode: 'all', limit: 201 }))).toBe(
    'limit',
  );
  expect(await field(api.get('/products/export/pending-feeds', { query: { sku: '  ' } }))).toBe('sku');
  expect(await field(api.get(`/products/channel/${t1}/bound`, { query: { page: -1 } }))).toBe('page');
  expect(await field(api.get(`/products/channel/${t1}/catalog`, { query: { limit: 101 } }))).toBe('limit');
  expect(await field(api.get(`/products/channel/${t1}/eligible`, { query: { inStock: 'maybe' } }))).toBe('inStock');
  // a channel that does not exist is looked up only once the input is whole
  expect(await field(publish({ channelId: '0123456789abcdef01234567', mode: 'some' }))).toBe('mode');
});

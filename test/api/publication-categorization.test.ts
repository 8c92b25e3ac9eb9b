import { ChannelServer, type FakeCategory } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import { waitFor } from '../../scripts/stack/process';
import { isFinished } from '../../shared/jobs/collection';

/**
 * Categorization during publication, against a real channel server that speaks the predictors'
 * protocols: products without a category for the channel's site get the predictor's first
 * suggestion (recorded as a reversible bulk operation), `forceRecategorization` asks again for
 * suggested ones, manual ones are never replaced, a marketplace fails what cannot be placed, a
 * store sends it without a category, and a cancel stops the categorizing too.
 */
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let server: ChannelServer;
const P = `PC${Date.now().toString(36).toUpperCase()}`;
let n = 0;

const DRILLS: FakeCategory = {
  categoryId: 'MLM1001',
  categoryName: 'Taladros',
  domainId: 'MLM-DRILLS',
  domainName: 'Taladros',
};
const SAWS: FakeCategory = { categoryId: 'MLM2002', categoryName: 'Sierras', path: ['Herramientas', 'Sierras'] };

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey()).key);
  server = await new ChannelServer(SECRET).start();
});
afterEach(() => {
  server.predictor = null;
  server.predictorRaw = undefined;
  server.predictorDelayMs = 0;
  server.predictorErrorNext = 0;
  server.release();
});
afterAll(async () => {
  await server.close();
  await deps.close();
});

async function channel(type: string, settings: Record<string, unknown> = {}) {
  const res = await api.post('/channels', {
    name: `Channel ${++n}`,
    type,
    settings: { endpointUrl: server.url, ...settings },
    secret: SECRET,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function product(title = `Product ${n + 1}`) {
  const res = await api.post('/products', {
    sku: `${P}-${++n}`,
    title: { value: title },
    price: 10,
    status: 'active',
    brand: 'Acme',
    media: [{ src: `https://img.example.com/${n}.jpg`, name: 'front', alt: { value: 'front' }, position: 0 }],
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; sku: string };
}

type Assignment = { id: string; name: string | null; path: string[] | null; source: string; channelId: string };

async function categoryOf(id: string, key: string): Promise<Assignment | null> {
  const res = await api.get(`/products/${id}`);
  const m = (res.body.metafields as { namespace: string; key: string; value: Assignment }[]).find(
    (x) => x.namespace === 'mkt_category' && x.key === key,
  );
  return m?.value ?? null;
}

const publish = (body: Record<string, unknown>) => api.post('/products/export', body);
const sentTo = (sku: string) => server.received.filter((r) => r.sku === sku);
const askedFor = (title: string) => server.predictions.filter((p) => p.title === title);

async function finished(jobId: string) {
  for (let i = 0; i < 600; i++) {
    const res = await api.get(`/products/export/${jobId}`);
    if (isFinished(res.body.status)) return res.body;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('publication did not finish');
}

test('a product without a category gets the first suggestion before it is sent; a manual one is kept and not asked for', async () => {
  const ch = await channel('mercadolibre');
  server.predictor = (title) => (title.includes('drill') ? [DRILLS, SAWS] : [SAWS]);
  const drill = await product('Cordless drill 18V');
  const manual = await product('Hand saw');
  expect(
    (
      await api.post('/products/marketplace-categories', {
        skus: [manual.sku],
        channelId: ch,
        category: { id: 'MLM9', name: 'Mine' },
      })
    ).status,
  ).toBe(200);
  const res = await publish({ channelId: ch, mode: 'selected', productIds: [drill.sku, manual.sku] });
  expect(res.status).toBe(201);
  expect(res.body.results).toEqual([
    { sku: drill.sku, success: true },
    { sku: manual.sku, success: true },
  ]);
  // asked on Mercado Libre's own route for the site, signed, for the first suggestion only
  expect(askedFor('Cordless drill 18V')).toEqual([
    expect.objectContaining({ protocol: 'mercadolibre', site: 'MLM', limit: 1, signatureValid: true }),
  ]);
  expect(askedFor('Hand saw')).toEqual([]);
  expect(await categoryOf(drill.id, 'mercadolibre:MLM')).toEqual({
    id: 'MLM1001',
    name: 'Taladros',
    path: null,
    source: 'suggested',
    channelId: ch,
    assignedAt: expect.any(String),
  });
  expect(await categoryOf(manual.id, 'mercadolibre:MLM')).toMatchObject({ id: 'MLM9', source: 'manual' });
  // what the marketplace got carries the category
  expect(sentTo(drill.sku).at(-1)!.body).toMatchObject({
    category_id: 'MLM1001',
    marketplaceCategory: { id: 'MLM1001', name: 'Taladros', path: null },
  });
  expect(sentTo(manual.sku).at(-1)!.body).toMatchObject({ category_id: 'MLM9' });

  // the suggestion is one bulk operation of the job, reversible like any other
  const opId = `bop_${res.body.jobId}`;
  const op = await api.get(`/products/bulk/operations/${opId}`);
  expect(op.status).toBe(200);
  expect(op.body).toMatchObject({
    type: 'marketplace-category',
    status: 'completed',
    canRollback: true,
    counts: { updated: 1 },
    products: [{ productId: drill.id, sku: drill.sku, action: 'updated' }],
  });
  expect((await api.post(`/products/bulk/operations/${opId}/rollback`)).status).toBe(202);
  await waitFor(
    'rollback done',
    async () => (await api.get(`/products/bulk/operations/${opId}`)).body.status === 'rolled_back',
    {
      timeoutMs: 60_000,
    },
  );
  expect(await categoryOf(drill.id, 'mercadolibre:MLM')).toBeNull();

  // the next publication asks again for it (it has none again), and not for the manual one
  expect((await publish({ channelId: ch, mode: 'selected', productIds: [drill.sku, manual.sku] })).status).toBe(201);
  expect(askedFor('Cordless drill 18V')).toHaveLength(2);
  expect(askedFor('Hand saw')).toEqual([]);
});

test('forceRecategorization asks again for suggested categories and replaces them; a manual one never', async () => {
  const ch = await channel('amazon', { siteId: 'US' });
  server.predictor = () => [DRILLS];
  const suggested = await product('Impact driver');
  const manual = await product('Jigsaw');
  await api.post('/products/marketplace-categories', {
    skus: [manual.sku],
    channelId: ch,
    category: { id: 'B-1', name: 'Saws', path: 'Tools > Saws' },
  });
  expect((await publish({ channelId: ch, mode: 'single', productIds: [suggested.sku] })).status).toBe(201);
  // the generic connector's predictor, with the channel's own site
  expect(askedFor('Impact driver')).toEqual([expect.objectContaining({ protocol: 'generic', site: 'US' })]);
  expect(await categoryOf(suggested.id, 'amazon:US')).toMatchObject({ id: 'MLM1001', source: 'suggested' });

  server.predictor = () => [SAWS];
  // without force: it has one, nobody is asked
  expect((await publish({ channelId: ch, mode: 'selected', productIds: [suggested.sku, manual.sku] })).status).toBe(
    201,
  );
  expect(askedFor('Impact driver')).toHaveLength(1);
  const forced = await publish({
    channelId: ch,
    mode: 'selected',
    productIds: [suggested.sku, manual.sku],
    options: { forceRecategorization: true },
  });
  expect(forced.status).toBe(201);
  expect(askedFor('Impact driver')).toHaveLength(2);
  expect(askedFor('Jigsaw')).toEqual([]);
  expect(await categoryOf(suggested.id, 'amazon:US')).toMatchObject({
    id: 'MLM2002',
    path: ['Herramientas', 'Sierras'],
    source: 'suggested',
  });
  expect(await categoryOf(manual.id, 'amazon:US')).toMatchObject({
    id: 'B-1',
    path: ['Tools', 'Saws'],
    source: 'manual',
  });
  expect(sentTo(suggested.sku).at(-1)!.body).toMatchObject({ marketplaceCategory: { id: 'MLM2002' } });
});

test('enableCategorization false: nobody is asked and the product goes as it is', async () => {
  const ch = await channel('walmart');
  server.predictor = () => [DRILLS];
  const p = await product('Sander');
  const res = await publish({
    channelId: ch,
    mode: 'single',
    productIds: [p.sku],
    options: { enableCategorization: false },
  });
  expect(res.status).toBe(201);
  expect(askedFor('Sander')).toEqual([]);
  expect(sentTo(p.sku).at(-1)!.body).toMatchObject({ marketplaceCategory: null, country: 'MX' });
  expect(await categoryOf(p.id, 'walmart:MX')).toBeNull();
  // nothing suggested, no operation recorded
  expectError(await api.get(`/products/bulk/operations/bop_${res.body.jobId}`), 404, 'not-found');
});

test('nothing fits: a marketplace fails the product without sending it; a store sends it without a category', async () => {
  const market = await channel('t1');
  const store = await channel('shopify');
  server.predictor = () => [];
  const p = await product('Mystery item');
  const failed = await publish({ channelId: market, mode: 'single', productIds: [p.sku] });
  expectError(failed, 400, 'PRODUCT_EXPORT_FAILED');
  expect(failed.body.details.results).toEqual([
    {
      sku: p.sku,
      success: false,
      error: expect.stringMatching(
        /^CATEGORY_NOT_FOUND: the channel's category predictor found no category for "Mystery item"/,
      ),
    },
  ]);
  expect(sentTo(p.sku)).toEqual([]);
  // the binding says why, as for a channel's own refusal
  const feeds = await api.get(`/products/export/pending-feeds?sku=${p.sku}&destination=t1`);
  expect(feeds.body.feeds).toEqual([
    expect.objectContaining({
      channelId: market,
      syncStatus: 'error',
      lastError: expect.stringContaining('CATEGORY_NOT_FOUND'),
    }),
  ]);

  const sent = await publish({ channelId: store, mode: 'single', productIds: [p.sku] });
  expect(sent.status).toBe(201);
  expect(sentTo(p.sku).at(-1)!.body).toMatchObject({ marketplaceCategory: null });
  expect(askedFor('Mystery item').map((x) => x.protocol)).toEqual(['generic', 'generic']);
});

test('a channel without a predictor is asked once per batch; a store publishes, a marketplace fails each product saying so', async () => {
  const store = await channel('custom');
  const market = await channel('coppel');
  const items = [await product('No predictor A'), await product('No predictor B'), await product('No predictor C')];
  const ids = items.map((i) => i.sku);
  const before = server.predictions.length;
  expect((await publish({ channelId: store, mode: 'selected', productIds: ids })).status).toBe(201);
  // its 404 means "no predictor": the rest of the batch is not asked, and every product is sent
  expect(server.predictions.length - before).toBe(1);
  expect(server.received.filter((r) => ids.includes(r.sku))).toHaveLength(3);
  const failed = await publish({ channelId: market, mode: 'selected', productIds: ids });
  expectError(failed, 400, 'PRODUCT_EXPORT_FAILED');
  expect(failed.body.details.results.map((r: { error: string }) => r.error)).toEqual(
    ids.map(() => expect.stringMatching(/^CATEGORY_NOT_FOUND: the channel has no category predictor/)),
  );
  expect(server.predictions.length - before).toBe(2);
  expect(server.received.filter((r) => ids.includes(r.sku))).toHaveLength(3);
});

test('an answer the connector cannot read fails the product; a predictor that is down is retried', async () => {
  const ch = await channel('mercadolibre', { siteId: 'MLA' });
  server.predictor = () => [DRILLS];
  server.predictorRaw = { results: [{ id: 'MLA1' }] };
  const odd = await product('Odd shape');
  const res = await publish({ channelId: ch, mode: 'single', productIds: [odd.sku] });
  expectError(res, 400, 'PRODUCT_EXPORT_FAILED');
  expect(res.body.details.results[0].error).toMatch(/^CATEGORIZATION_FAILED: .*shape we cannot read/);
  expect(sentTo(odd.sku)).toEqual([]);
  expect(await categoryOf(odd.id, 'mercadolibre:MLA')).toBeNull();

  server.predictorRaw = undefined;
  server.predictorErrorNext = 1; // one 503: the batch is retried by Temporal
  const down = await product('Flaky predictor');
  expect((await publish({ channelId: ch, mode: 'single', productIds: [down.sku] })).status).toBe(201);
  expect(askedFor('Flaky predictor').length).toBe(2);
  expect(await categoryOf(down.id, 'mercadolibre:MLA')).toMatchObject({ id: 'MLM1001', source: 'suggested' });
});

// Before, a suggestion beyond an assignment's limits (an id over 100 characters, a path over 12
// levels) was stored by the publication as it came, a category no client could have assigned.
test('a suggestion no assignment could hold is left out: nothing fits, a store sends the product without it', async () => {
  const ch = await channel('custom');
  const tooLong: FakeCategory = { categoryId: `C${'9'.repeat(100)}`, categoryName: 'Long' };
  const tooDeep: FakeCategory = { categoryId: 'C13', categoryName: 'Deep', path: [...Array(13).keys()].map(String) };
  server.predictor = (title) => (title.includes('only') ? [tooLong] : [tooDeep, SAWS]);
  const odd = await product('only odd suggestions');
  const res = await publish({ channelId: ch, mode: 'single', productIds: [odd.sku] });
  expect(res.status).toBe(201);
  expect(sentTo(odd.sku)).toHaveLength(1);
  expect(await categoryOf(odd.id, 'custom:default')).toBeNull();
  const suggested = await api.get('/products/categories/suggest', {
    query: { channelId: ch, title: 'a saw', limit: 5 },
  });
  expect(suggested.status).toBe(200);
  expect(suggested.body.suggestions.map((x: { categoryId: string }) => x.categoryId)).toEqual(['MLM2002']);
  const none = await api.get('/products/categories/suggest', { query: { channelId: ch, title: 'only odd', limit: 5 } });
  expect([none.status, none.body.suggestions]).toEqual([200, []]);
});

test('cancel mid-categorization: the job ends cancelled, nothing is asked or sent after it, and what was suggested is one operation', async () => {
  const ch = await channel('mercadolibre', { concurrency: 1 });
  server.predictor = () => [DRILLS];
  server.predictorDelayMs = 300;
  const items: { id: string; sku: string }[] = [];
  for (let i = 0; i < 30; i++) items.push(await product(`Cancel me ${i}`));
  const res = await publish({ channelId: ch, mode: 'selected', productIds: items.map((i) => i.id) });
  expect(res.status).toBe(202);
  const titles = new Set(items.map((_, i) => `Cancel me ${i}`));
  await waitFor(
    'a few products categorized',
    async () => server.predictions.filter((p) => titles.has(p.title)).length >= 3,
    {
      timeoutMs: 60_000,
    },
  );
  expect((await api.post(`/products/export/${res.body.jobId}/cancel`, { reason: 'enough' })).status).toBe(200);
  const cancelledAt = Date.now();
  const job = await finished(res.body.jobId);
  expect(job).toMatchObject({ status: 'cancelled', cancelReason: 'enough' });
  await new Promise((r) => setTimeout(r, 1500));
  const asked = server.predictions.filter((p) => titles.has(p.title));
  expect(asked.filter((p) => p.at > cancelledAt + 100)).toEqual([]);
  expect(asked.length).toBeLessThan(30);
  const categorized: string[] = [];
  for (const i of items) if (await categoryOf(i.id, 'mercadolibre:MLM')) categorized.push(i.sku);
  expect(categorized.length).toBeGreaterThan(0);
  expect(categorized.length).toBeLessThan(30);
  // the operation is settled with exactly the products that got a category
  const op = await api.get(`/products/bulk/operations/bop_${res.body.jobId}`);
  expect(op.body).toMatchObject({ status: 'completed', canRollback: true });
  expect(op.body.products.map((p: { sku: string }) => p.sku).sort()).toEqual(categorized.sort());
});

test('validate names the key a marketplace product needs a category for; a store needs none', async () => {
  const amazon = await channel('amazon', { siteId: 'DE' });
  const store = await channel('woocommerce');
  const p = await product('Needs one');
  const check = async (channelId: string) =>
    (await api.post('/products/export/validate', { channelId, selectionMode: 'selected', skus: [p.sku] })).body;
  expect((await check(amazon)).needs_review).toEqual([
    expect.objectContaining({ sku: p.sku, reasons: ['needs categorization for amazon:DE'] }),
  ]);
  expect((await check(store)).ready).toEqual([expect.objectContaining({ sku: p.sku })]);
  await api.post('/products/marketplace-categories', { skus: [p.sku], channelId: amazon, category: { id: 'A1' } });
  expect((await check(amazon)).ready).toEqual([expect.objectContaining({ sku: p.sku })]);
});

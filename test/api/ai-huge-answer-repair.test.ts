import { allRoutes } from '../../api/routes';
import type { Proc } from '../../scripts/stack/process';
import { productDataOf, startAiServer, type AiServer, type ChatRequestBody } from '../helpers/ai-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { startWorker } from '../helpers/worker';

/**
 * One product whose provider answer is a huge text that is not JSON (a provider ignoring
 * max_tokens, a proxy that returns an HTML page as the content…). docs/bulk-edits.md: such an answer
 * gets one repair call and then PARSE_ERROR for that product; BUDGET_EXCEEDED and a `partial` run
 * are for a budget that ran out. The repair call quotes the first 4,000 characters of the bad
 * answer. Before, it re-sent the whole of it, its reservation was larger than the day's budget,
 * and the product, then every later product of the run, was refused BUDGET_EXCEEDED while
 * GET /products/bulk/ai/budget showed almost the whole budget remaining.
 */
jest.setTimeout(180_000);

const QUEUE = `ai-huge-${Date.now().toString(36)}`;
let deps: TestDeps;
let ai: AiServer;
let worker: Proc;
let app: { url: string; close: () => Promise<void> };

beforeAll(async () => {
  deps = await TestDeps.open();
  ai = await startAiServer();
  worker = startWorker(QUEUE, 'ai-huge-worker', undefined, {
    AI_BASE_URL: ai.url,
    AI_MODEL: 'fake-model',
    AI_TIMEOUT_MS: '4000',
    AI_MAX_OUTPUT_TOKENS: '200',
    AI_PAGE_SIZE: '5',
    AI_SYNC_MAX: '6',
    AI_CONCURRENCY: '1', // products planned in order: the odd one first
  });
  app = await deps.serveApp(allRoutes, {
    taskQueue: QUEUE,
    ai: { baseUrl: ai.url, model: 'fake-model', timeoutMs: 4000, maxOutputTokens: 200 },
    aiSyncMax: 6,
    aiPageSize: 5,
  });
}, 180_000);

afterEach(() => ai.script(null));

afterAll(async () => {
  await app?.close();
  await worker?.stop();
  await ai?.close();
  await deps?.close();
});

const skuOf = (b: ChatRequestBody) => (productDataOf(b)?.source.sku as string | undefined) ?? '';
const isRepair = (b: ChatRequestBody) => b.messages.some((m) => m.role === 'assistant');

test('a huge non-JSON answer for one product fails that product alone (PARSE_ERROR), not the whole run as BUDGET_EXCEEDED', async () => {
  const t = await deps.tenantWithKey();
  await deps.tenancy.setAiDailyTokenBudget(t.tenantId, 100_000);
  const api = new ApiClient(t.key, app.url);
  const prefix = `AIH${Date.now().toString(36).toUpperCase()}`;
  const made: { id: string; sku: string }[] = [];
  for (const n of ['A', 'B', 'C']) {
    const res = await api.post('/products', { sku: `${prefix}-${n}`, title: { value: `Shirt ${n}` }, price: 10 });
    expect(res.status).toBe(201);
    made.push({ id: res.body.id, sku: res.body.sku });
  }
  const odd = made[0].sku;
  // 150 KB of prose for the first product's first call; every other call answers normally
  ai.script((b) =>
    skuOf(b) === odd && !isRepair(b)
      ? { content: 'Sure! '.repeat(25_000), usage: { prompt_tokens: 250, completion_tokens: 50, total_tokens: 300 } }
      : undefined,
  );

  const res = await api.post('/products/bulk/ai/transform', {
    prompt: 'Make the title catchier',
    selection: { skus: made.map((m) => m.sku) },
    fields: ['title.value'],
  });

  // the budget is nowhere near used up
  const budget = (await api.get('/products/bulk/ai/budget')).body;
  expect(budget.remaining).toBeGreaterThan(90_000);

  const codes = Object.fromEntries(
    ((res.body.errors ?? []) as { sku: string; code: string }[]).map((e) => [e.sku, e.code]),
  );
  // today: every product BUDGET_EXCEEDED, status partial, nothing changed
  expect(codes[odd]).not.toBe('BUDGET_EXCEEDED'); // a repair that fails is PARSE_ERROR (or the repair succeeds)
  expect(codes[made[1].sku]).toBeUndefined();
  expect(codes[made[2].sku]).toBeUndefined();
  expect(res.body.status).toBe('completed');
  for (const m of made.slice(1)) expect((await api.get(`/products/${m.id}`)).body.title.value).toContain('(AI)');
});

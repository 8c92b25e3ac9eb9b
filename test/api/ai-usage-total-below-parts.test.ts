import { allRoutes } from '../../api/routes';
import type { Proc } from '../../scripts/stack/process';
import { startAiServer, type AiServer } from '../helpers/ai-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { startWorker } from '../helpers/worker';

/**
 * docs/bulk-edits.md: "the actual usage replaces the reservation after it", and
 * shared/ai/provider.ts: "A provider that reports no usage is charged our (high) estimate, never
 * nothing". A provider whose usage block says prompt_tokens 100 and completion_tokens 50 but
 * total_tokens 0 (an inconsistent gateway) is charged 150, the sum of its parts. Before, it was
 * charged 0 (total_tokens taken as is): the day's budget never moved and its limit held nothing.
 */
jest.setTimeout(180_000);

const QUEUE = `ai-usage-zero-${Date.now().toString(36)}`;
let deps: TestDeps;
let ai: AiServer;
let worker: Proc;
let app: { url: string; close: () => Promise<void> };

beforeAll(async () => {
  deps = await TestDeps.open();
  ai = await startAiServer();
  worker = startWorker(QUEUE, 'ai-usage-zero-worker', undefined, {
    AI_BASE_URL: ai.url,
    AI_MODEL: 'fake-model',
    AI_TIMEOUT_MS: '4000',
    AI_MAX_OUTPUT_TOKENS: '200',
    AI_SYNC_MAX: '6',
  });
  app = await deps.serveApp(allRoutes, {
    taskQueue: QUEUE,
    ai: { baseUrl: ai.url, model: 'fake-model', timeoutMs: 4000, maxOutputTokens: 200 },
    aiSyncMax: 6,
  });
}, 180_000);

afterAll(async () => {
  await app?.close();
  await worker?.stop();
  await ai?.close();
  await deps?.close();
});

test('usage {prompt 100, completion 50, total 0} is charged at least the 150 tokens its parts say', async () => {
  const t = await deps.tenantWithKey();
  const api = new ApiClient(t.key, app.url);
  const sku = `AIUZ${Date.now().toString(36).toUpperCase()}`;
  expect((await api.post('/products', { sku, title: { value: 'Cotton shirt' }, price: 10 })).status).toBe(201);
  ai.script(() => ({ usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 0 } }));

  const res = await api.post('/products/bulk/ai/transform', {
    prompt: 'Make the title catchier',
    selection: { skus: [sku] },
    fields: ['title.value'],
  });
  expect(res.status).toBe(200);
  expect(res.body.counts.changed).toBe(1);

  const budget = (await api.get('/products/bulk/ai/budget')).body;
  expect(budget.reserved).toBe(0);
  expect(budget.used).toBeGreaterThanOrEqual(150); // today: 0
  const usage = (await api.get('/products/bulk/ai/usage')).body.history[0];
  expect(usage).toMatchObject({ requestCount: 1 });
  expect(usage.tokensUsed).toBeGreaterThanOrEqual(150); // today: 0
});

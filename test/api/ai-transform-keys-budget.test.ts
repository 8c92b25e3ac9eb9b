import { allRoutes } from '../../api/routes';
import { leastCallTokens } from '../../shared/ai/transform-one';
import { fieldSchemaAt } from '../../shared/flows/fields';
import type { Proc } from '../../scripts/stack/process';
import { productDataOf, startAiServer, type AiServer, type ChatRequestBody } from '../helpers/ai-server';
import { ApiClient, type HttpResult } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { startWorker } from '../helpers/worker';

/**
 * AI transforms' budget and keys: the budget is checked only for a run that starts now (not a
 * retry under its key, not an apply of a preview) and against the products it selects; a refused
 * prompt says it is not retryable; a preview's fields are a set. An API and a worker of this
 * file's own, configured with the fake OpenAI-compatible provider (test/helpers/ai-server.ts).
 */
jest.setTimeout(180_000);

const QUEUE = `ai-keys-budget-${Date.now().toString(36)}`;
const SYNC_MAX = 6;

let deps: TestDeps;
let ai: AiServer;
let worker: Proc;
let app: { url: string; close: () => Promise<void> };

beforeAll(async () => {
  deps = await TestDeps.open();
  ai = await startAiServer();
  worker = startWorker(QUEUE, 'ai-keys-budget-worker', undefined, {
    AI_BASE_URL: ai.url,
    AI_MODEL: 'fake-model',
    AI_TIMEOUT_MS: '4000',
    AI_MAX_OUTPUT_TOKENS: '200',
    AI_PAGE_SIZE: '5',
    AI_SYNC_MAX: String(SYNC_MAX),
  });
  app = await deps.serveApp(allRoutes, {
    taskQueue: QUEUE,
    ai: { baseUrl: ai.url, model: 'fake-model', timeoutMs: 4000, maxOutputTokens: 200 },
    aiSyncMax: SYNC_MAX,
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

let seq = 0;
const skuPrefix = () => `AIR${Date.now().toString(36).toUpperCase()}${++seq}`;

async function tenantClient(budget?: number): Promise<{ api: ApiClient; tenantId: string }> {
  const t = await deps.tenantWithKey(undefined, 'ai keys budget');
  if (budget !== undefined) await deps.tenancy.setAiDailyTokenBudget(t.tenantId, budget);
  return { api: new ApiClient(t.key, app.url), tenantId: t.tenantId };
}

interface Made {
  id: string;
  sku: string;
  title: string;
}

async function createProducts(api: ApiClient, prefix: string, names: string[], extra: object = {}): Promise<Made[]> {
  const made: Made[] = [];
  for (const name of names) {
    const sku = `${prefix}-${name}`;
    const res = await api.post('/products', {
      sku,
      title: { value: `Cotton shirt ${name}` },
      description: { value: `A shirt called ${name}` },
      price: 10,
      tags: ['shirt'],
      ...extra,
    });
    expect(res.status).toBe(201);
    made.push({ id: res.body.id, sku, title: res.body.title.value });
  }
  return made;
}

const product = async (api: ApiClient, id: string) => (await api.get(`/products/${id}`)).body;
const skus = (made: Made[]) => made.map((m) => m.sku);
const skuOf = (body: ChatRequestBody) => productDataOf(body)?.source.sku as string | undefined;
const callsFor = (list: string[]) => ai.requests.filter((r) => list.includes(skuOf(r.body) ?? ''));

function transform(api: ApiClient, body: Record<string, unknown>, headers?: Record<string, string>) {
  return api.post('/products/bulk/ai/transform', body, headers ? { headers } : undefined);
}

const retitle = (made: Made[], more: Record<string, unknown> = {}) => ({
  prompt: 'Make each title catchier and add a tag',
  selection: { skus: skus(made) },
  fields: ['title.value', 'tags'],
  ...more,
});

const brief = (res: HttpResult) => ({ status: res.status, code: res.body?.code, jobId: res.body?.jobId });

describe('AI transforms: retries and applies need no new budget', () => {
  // docs/api-conventions.md: "Job starts (publications, async CSV imports and exports, flow and AI runs)
  // find a retry's job by its key"; ARCHITECTURE.md (Idempotency): "a repeated start with the same
  // `Idempotency-Key` header returns the same job".
  test('a retry with the same Idempotency-Key after the run spent the budget answers the first run, not 429', async () => {
    const { api, tenantId } = await tenantClient();
    const [a] = await createProducts(api, skuPrefix(), ['A']);
    const key = { 'Idempotency-Key': `air-${skuPrefix()}` };
    const first = await transform(api, retitle([a]), key);
    expect(first.status).toBe(200);
    expect(first.body.counts).toMatchObject({ changed: 1 });

    // the day's budget is now used up (here: the tenant's budget lowered to what is spent)
    await deps.tenancy.setAiDailyTokenBudget(tenantId, 0);
    const retry = await transform(api, retitle([a]), key);
    expect(brief(retry)).toEqual({ status: 200, code: undefined, jobId: first.body.jobId });
    expect(callsFor([a.sku])).toHaveLength(1);
  });

  // docs/bulk-edits.md: "an apply given its `previewId` writes exactly the previewed patches and plans
  // again only the products changed since"; the route's own note: "an apply of a preview asks the
  // model only for products changed since". A client may send the previewed edit with the previewId
  // (it is accepted when it is the previewed one); nothing must be asked of the model, so no budget is needed.
  test('applying a completed preview sent with its own prompt, selection and fields needs no budget', async () => {
    const { api, tenantId } = await tenantClient();
    const made = await createProducts(api, skuPrefix(), ['A', 'B']);
    const preview = await transform(api, retitle(made, { mode: 'preview' }));
    expect(preview.status).toBe(200);
    expect(preview.body.status).toBe('completed');
    await deps.tenancy.setAiDailyTokenBudget(tenantId, 0);

    const applied = await transform(api, retitle(made, { previewId: preview.body.previewId }));
    expect(brief(applied)).toMatchObject({ status: 200, code: undefined });
    expect((await product(api, made[0].id)).title.value).toBe(`${made[0].title} (AI)`);
  });

  // service-spec.md Errors: "AI errors (flag retryable: boolean on each): RATE_LIMITED, BUDGET_EXCEEDED
  // (...), INVALID_PROMPT, MODEL_ERROR, PARSE_ERROR, TIMEOUT, INVALID_RESPONSE." The 429
  // BUDGET_EXCEEDED answer carries it; the 400 INVALID_PROMPT answer must too.
  test('a refused prompt (400 INVALID_PROMPT) carries retryable: false like every AI error', async () => {
    const { api } = await tenantClient();
    const [a] = await createProducts(api, skuPrefix(), ['A']);
    for (const prompt of ['', '   ', 'x'.repeat(4001)]) {
      const res = await transform(api, retitle([a], { prompt }));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'INVALID_PROMPT', retryable: false });
    }
  });
});

describe('AI transforms: what a refusal says', () => {
  // docs/bulk-edits.md: "A transform that cannot pay for one call is 429 `budget-exceeded`
  // (`error: "BUDGET_EXCEEDED"`, `Retry-After` until the reset)". Here the budget pays for the
  // call of an empty product, but not for the call of any product the transform selects.
  test('a budget that cannot pay for the call of any selected product is 429, not a run where every product fails', async () => {
    const body = (made: Made[]) => retitle(made);
    const probe = body([{ id: 'x', sku: 'X', title: '' }]);
    const least = leastCallTokens(
      probe.prompt,
      probe.fields.map((path) => ({ path, schema: fieldSchemaAt(path)! })),
      200,
    );
    const { api } = await tenantClient(least + 20);
    const made = await createProducts(api, skuPrefix(), ['A', 'B']);
    const res = await transform(api, body(made));
    expect({ status: res.status, code: res.body.code, error: res.body.error }).toEqual({
      status: 429,
      code: 'budget-exceeded',
      error: 'BUDGET_EXCEEDED',
    });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('AI transforms: applying a preview', () => {
  // docs/bulk-edits.md: "409 `preview-mismatch` when a different edit is sent with it, its selection
  // included". The fields are a set (the answer has one key per field; `fields[]` of the answer is
  // sorted), as the SKUs of a selection are (sent in another order they are the same selection):
  // the same fields in another order are the same edit, not a different one.
  test('the previewed fields sent in another order apply the preview, not 409 preview-mismatch', async () => {
    const { api } = await tenantClient();
    const [a, b] = await createProducts(api, skuPrefix(), ['A', 'B']);
    const preview = await transform(api, retitle([a, b], { mode: 'preview', fields: ['title.value', 'tags'] }));
    expect(preview.status).toBe(200);
    expect(preview.body.status).toBe('completed');

    const applied = await transform(
      api,
      retitle([b, a], { previewId: preview.body.previewId, fields: ['tags', 'title.value'] }),
    );
    expect({ status: applied.status, code: applied.body.code }).toEqual({ status: 200, code: undefined });
    expect((await product(api, a.id)).title.value).toBe(`${a.title} (AI)`);
  });
});

import { allRoutes } from '../../api/routes';
import type { Proc } from '../../scripts/stack/process';
import { productDataOf, startAiServer, type AiServer } from '../helpers/ai-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { startWorker } from '../helpers/worker';
import { TenantDb } from '../../shared/db/tenant-db';
import { bulkOperationItems } from '../../shared/bulk/operations';

/**
 * A user edit that lands while an AI transform waits for the model (after the page read the
 * product at version v, before the edit's guarded write) makes version v+1, the very version the
 * edit's write would have made: the edit must still see that its write did not land, answer a
 * conflict, and keep no record a rollback would undo the user's change with.
 */
jest.setTimeout(120_000);

const QUEUE = `ai-edit-race-${Date.now().toString(36)}`;

let deps: TestDeps;
let ai: AiServer;
let worker: Proc;
let app: { url: string; close: () => Promise<void> };

beforeAll(async () => {
  deps = await TestDeps.open();
  ai = await startAiServer();
  worker = startWorker(QUEUE, 'ai-edit-race-worker', undefined, {
    AI_BASE_URL: ai.url,
    AI_MODEL: 'fake-model',
    AI_TIMEOUT_MS: '8000',
    AI_MAX_OUTPUT_TOKENS: '200',
    AI_PAGE_SIZE: '5',
    AI_SYNC_MAX: '6',
  });
  app = await deps.serveApp(allRoutes, {
    taskQueue: QUEUE,
    ai: { baseUrl: ai.url, model: 'fake-model', timeoutMs: 8000, maxOutputTokens: 200 },
    aiSyncMax: 6,
    aiPageSize: 5,
  });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await worker?.stop();
  await ai?.close();
  await deps?.close();
});

test('a user edit made while the model answers is kept: the run answers a conflict and records nothing', async () => {
  const t = await deps.tenantWithKey();
  const api = new ApiClient(t.key, app.url);
  const sku = `AIRACE${Date.now().toString(36).toUpperCase()}`;
  const body = { sku, title: { value: 'Original title' }, price: 10 };
  const created = await api.post('/products', body);
  expect(created.status).toBe(201);
  const id = created.body.id as string;

  // the user saves a new title while the model is thinking about this product
  let userEdit: number | null = null;
  ai.script(async (req) => {
    if (productDataOf(req)?.source.sku === sku && userEdit === null) {
      const put = await api.put(`/products/${id}`, { ...body, title: { value: 'User title' } });
      userEdit = put.status;
    }
    return undefined;
  });

  const res = await api.post('/products/bulk/ai/transform', {
    prompt: 'Make the title catchier',
    selection: { skus: [sku] },
    fields: ['title.value'],
  });
  expect(userEdit).toBe(200);
  expect(res.status).toBe(207); // some of the run failed: this product, as a conflict
  expect((await api.get(`/products/${id}`)).body.title.value).toBe('User title');
  expect(res.body.counts).toMatchObject({ changed: 0, failed: 1 });
  const items = await new TenantDb(deps.db, t.tenantId)
    .collection(bulkOperationItems)
    .find({ operationId: res.body.operationId })
    .toArray();
  expect(items).toEqual([]);
});

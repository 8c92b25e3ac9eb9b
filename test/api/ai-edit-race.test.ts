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
 * conflict, and keep no record a rollback would undo the user's change with. A run whose every
 * change lost so changed nothing, and records no operation (operationId null); one where some
 * change landed records those alone.
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

afterEach(() => ai.script(null));

afterAll(async () => {
  await app?.close();
  await worker?.stop();
  await ai?.close();
  await deps?.close();
});

test('a user edit made while the model answers is kept: the run answers a conflict and records no operation', async () => {
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
  expect(res.body.counts).toMatchObject({ matched: 1, changed: 0, failed: 1 });
  expect(res.body.errors).toEqual([expect.objectContaining({ sku, code: 'conflict' })]);
  // nothing changed: no operation, answered or listed, and no record of the product
  expect(res.body.operationId).toBeNull();
  expect((await api.get(`/products/bulk/ai/${res.body.jobId}`)).body.operationId).toBeNull();
  const ops = await api.get('/products/bulk/operations', { query: { type: 'ai-transform' } });
  expect(ops.body.operations).toEqual([]);
  const items = await new TenantDb(deps.db, t.tenantId)
    .collection(bulkOperationItems)
    .find({ productId: id })
    .toArray();
  expect(items).toEqual([]);
});

test('a run where one change lost and another landed records an operation of the landed one alone', async () => {
  const t = await deps.tenantWithKey();
  const api = new ApiClient(t.key, app.url);
  const prefix = `AIRACE${Date.now().toString(36).toUpperCase()}`;
  const ids: Record<string, string> = {};
  for (const sku of [`${prefix}-LOST`, `${prefix}-KEPT`]) {
    const created = await api.post('/products', { sku, title: { value: 'Original title' }, price: 10 });
    expect(created.status).toBe(201);
    ids[sku] = created.body.id;
  }
  const lost = `${prefix}-LOST`;
  const kept = `${prefix}-KEPT`;
  let userEdit: number | null = null;
  ai.script(async (req) => {
    if (productDataOf(req)?.source.sku === lost && userEdit === null) {
      const put = await api.put(`/products/${ids[lost]}`, { sku: lost, title: { value: 'User title' }, price: 10 });
      userEdit = put.status;
    }
    return undefined;
  });

  const res = await api.post('/products/bulk/ai/transform', {
    prompt: 'Make the title catchier',
    selection: { skus: [lost, kept] },
    fields: ['title.value'],
  });
  expect(userEdit).toBe(200);
  expect(res.status).toBe(207);
  expect(res.body.counts).toMatchObject({ matched: 2, changed: 1, failed: 1 });
  expect(res.body.operationId).toMatch(/^bop_/);
  expect((await api.get(`/products/${ids[lost]}`)).body.title.value).toBe('User title');
  expect((await api.get(`/products/${ids[kept]}`)).body.title.value).not.toBe('Original title');
  const op = (await api.get(`/products/bulk/operations/${res.body.operationId}`)).body;
  expect(op).toMatchObject({ type: 'ai-transform', status: 'completed', canRollback: true });
  expect(op.products.map((p: { sku: string }) => p.sku)).toEqual([kept]);
});

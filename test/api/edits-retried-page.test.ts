import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import type { CollectionDef } from '../../shared/db/collection';
import { TenantDb, type TenantCollection, type TenantDoc } from '../../shared/db/tenant-db';
import { newId } from '../../shared/ids';
import { runEditPage, snapshotSelection } from '../../shared/edits/page';
import { editRunOf } from '../../shared/edits/run-of';
import { flowPlanner } from '../../shared/edits/engines';
import type { EditJobInput } from '../../shared/edits/runs';
import type { Planner, Proposal } from '../../shared/edits/plan';
import type { FlowDefinition } from '../../shared/flows/definition';
import { BulkOperations } from '../../shared/bulk/operations';
import { rollbackOperation } from '../../shared/bulk/rollback';
import { contentOf } from '../../shared/products/content';
import type { ProductDoc } from '../../shared/products/types';

/**
 * A bulk-edit page killed at an exact point (the worker dies, Temporal retries the
 * page activity) and the retry that follows, driven through the very functions the activity
 * runs (runEditPage), on the real database.
 */
jest.setTimeout(120_000);

let deps: TestDeps;
beforeAll(async () => {
  deps = await TestDeps.open();
});
afterAll(() => deps.close());

class Killed extends Error {}

/** The tenant's data, where the products' `bulkWrite` kills the process `when` (before or after it is sent). */
class KillAtProductWrite extends TenantDb {
  constructor(
    db: ConstructorParameters<typeof TenantDb>[0],
    tenantId: string,
    private readonly when: 'before' | 'after',
  ) {
    super(db, tenantId);
  }
  override collection<T extends TenantDoc>(def: CollectionDef<T>): TenantCollection<T> {
    const col = super.collection(def);
    if (def.name !== 'products') return col;
    const real = col.bulkWrite.bind(col);
    (col as unknown as Record<string, unknown>).bulkWrite = async (...args: Parameters<typeof real>) => {
      if (this.when === 'before') throw new Killed('worker killed before the products write');
      await real(...args);
      throw new Killed('worker killed after the products write');
    };
    return col;
  }
}

function jobInput(
  type: EditJobInput['type'],
  productId: string,
  sku: string,
  extra: Partial<EditJobInput>,
): EditJobInput {
  return {
    type,
    mode: 'apply',
    selection: { skus: [sku] },
    productIds: [productId],
    missingSkus: [],
    previewId: null,
    operationId: newId('bop'),
    operationName: null,
    actor: 'review',
    total: 1,
    sync: true,
    ...extra,
  };
}

test('a flow page killed after its write, retried after a user edit, does not apply the flow a second time', async () => {
  const t = await deps.tenantWithKey();
  const api = new ApiClient(t.key);
  const sku = `RVRETRY${Date.now().toString(36).toUpperCase()}`;
  const body = { sku, title: { value: 'Original' }, price: 100 };
  const created = await api.post('/products', body);
  expect(created.status).toBe(201);
  const id = created.body.id as string;

  const flow: FlowDefinition = {
    selection: { skus: [sku] },
    rules: [{ actions: [{ type: 'calculate', field: 'price', operation: 'multiply', operand: 1.1 }] }],
  } as FlowDefinition;
  const jobId = newId('flow');
  const input = jobInput('flow', id, sku, { flow });
  const run = editRunOf(deps.config, jobId, input);
  const tenantDb = new TenantDb(deps.db, t.tenantId);
  await snapshotSelection(tenantDb, jobId, run.selection, run.pageSize);

  // attempt 1: the write lands, the worker dies before the activity answers
  await expect(
    runEditPage(new KillAtProductWrite(deps.db, t.tenantId, 'after'), run, flowPlanner(flow), 0),
  ).rejects.toBeInstanceOf(Killed);
  expect((await api.get(`/products/${id}`)).body.price).toBe(110);

  // the user saves a new title meanwhile (price as they see it: 110)
  const put = await api.put(`/products/${id}`, { ...body, title: { value: 'User title' }, price: 110 });
  expect(put.status).toBe(200);

  // attempt 2 (Temporal's retry of the page)
  const res = await runEditPage(tenantDb, run, flowPlanner(flow), 0);
  const after = (await api.get(`/products/${id}`)).body;
  expect(after.title.value).toBe('User title');
  // the flow was applied once: ×1.1, not ×1.21
  expect(after.price).toBe(110);
  expect(res.counts.changed).toBe(1);
});

test('an AI page killed between its record and its write, whose retry gets a wider answer, is rolled back exactly', async () => {
  const t = await deps.tenantWithKey();
  const api = new ApiClient(t.key);
  const sku = `RVAI${Date.now().toString(36).toUpperCase()}`;
  const body = { sku, title: { value: 'Original title' }, description: { value: 'Original description' }, price: 10 };
  const created = await api.post('/products', body);
  expect(created.status).toBe(201);
  const id = created.body.id as string;

  const jobId = newId('aitx');
  const input = jobInput('ai-transform', id, sku, {
    ai: { prompt: 'Improve', fields: ['title.value', 'description.value'] },
  });
  const run = editRunOf(deps.config, jobId, input);
  const tenantDb = new TenantDb(deps.db, t.tenantId);
  await snapshotSelection(tenantDb, jobId, run.selection, run.pageSize);

  // a model answers each call anew: the first answer changes the title only, the retry's the description as well
  let calls = 0;
  const model: Planner = {
    async propose(current: ProductDoc): Promise<Proposal> {
      calls++;
      const content = structuredClone(contentOf(current)) as Record<string, any>;
      content.title = { ...content.title, value: 'AI title' };
      if (calls > 1) content.description = { ...content.description, value: 'AI description' };
      return { kind: 'proposed', product: content };
    },
  };

  await expect(
    runEditPage(new KillAtProductWrite(deps.db, t.tenantId, 'before'), run, model, 0),
  ).rejects.toBeInstanceOf(Killed);
  const res = await runEditPage(tenantDb, run, model, 0);
  expect(res.counts.changed).toBe(1);
  const edited = (await api.get(`/products/${id}`)).body;
  expect(edited.title.value).toBe('AI title');
  expect(edited.description.value).toBe('AI description');

  const ops = new BulkOperations(tenantDb);
  await ops.finish(input.operationId, 'completed', {
    totalProcessed: 1,
    created: 0,
    updated: 1,
    skipped: 0,
    failed: 0,
  });
  const rolled = await rollbackOperation(tenantDb, {
    operationId: input.operationId,
    rollbackId: newId('bop'),
    actor: 'review',
  });
  expect(rolled.failed).toEqual([]);
  const restored = (await api.get(`/products/${id}`)).body;
  expect(restored.title.value).toBe('Original title');
  // the rollback "succeeded": the description must be back too
  expect(restored.description.value).toBe('Original description');
});

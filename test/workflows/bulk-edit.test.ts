import { bulkEdit } from '../../shared/edits/messages';
import type { EditResult } from '../../shared/edits/messages';
import { openWorkflowEnv, testContext, type WorkflowEnv } from './support/env';
import { scenario, TENANT } from './support/scenarios';

/** A bulk edit page by page: counts and errors added up, the cancel signal, a budget running out, a failed page. */
let wf: WorkflowEnv;
beforeAll(async () => {
  wf = await openWorkflowEnv({ name: 'bulk-edit' });
});
afterAll(() => wf?.close());

const jobIdOf = (workflowId: string) => workflowId.slice(`${TENANT}/`.length);
const pagesOf = (jobId: string) => wf.world.callsOf(jobId).filter((c) => c.activity === 'editPage').length;
const lastJobUpdate = (jobId: string) => wf.world.jobUpdates(jobId).at(-1);

test('adds up every page, lists the errors and closes the operation', async () => {
  const run = await scenario(bulkEdit, 'applied').run(testContext(wf));
  const jobId = jobIdOf(run.workflowId);
  const result = run.result as EditResult;
  expect(pagesOf(jobId)).toBe(3);
  expect(result).toMatchObject({
    status: 'completed',
    total: 12,
    processed: 12,
    percent: 100,
    // the unknown SKU from startEdit counts as matched and failed
    counts: { matched: 13, changed: 9, unchanged: 0, invalid: 3, failed: 1 },
    operationId: `bop_${jobId}`,
    errorsNotListed: 0,
  });
  expect(result.errors.map((e) => e.sku)).toEqual(['GONE', 'SKU-1', 'SKU-2', 'SKU-3']);
  expect(result.fields).toEqual([
    {
      field: 'price',
      changed: 9,
      samples: ['SKU-1-A', 'SKU-2-A', 'SKU-3-A'].map((sku) => ({ sku, before: 10, after: 11 })),
    },
  ]);
  expect(lastJobUpdate(jobId)).toMatchObject({ status: 'completed' });
});

test('a cancel stops before the next page and keeps what was done', async () => {
  const run = await scenario(bulkEdit, 'cancelled').run(testContext(wf));
  const jobId = jobIdOf(run.workflowId);
  expect(pagesOf(jobId)).toBe(2);
  expect(run.result).toMatchObject({ status: 'cancelled', counts: { changed: 2 }, operationId: `bop_${jobId}` });
  expect(lastJobUpdate(jobId)).toMatchObject({ status: 'cancelled' });
});

test('a cancel that comes after the last page stopped nothing: the run ends completed', async () => {
  const run = await scenario(bulkEdit, 'cancelled-after-last-page').run(testContext(wf));
  const jobId = jobIdOf(run.workflowId);
  expect(pagesOf(jobId)).toBe(2);
  expect(run.result).toMatchObject({ status: 'completed', counts: { changed: 2 }, operationId: `bop_${jobId}` });
  expect(lastJobUpdate(jobId)).toMatchObject({ status: 'completed' });
});

test('a budget that runs out ends the run partial, the rest listed as BUDGET_EXCEEDED', async () => {
  const run = await scenario(bulkEdit, 'budget-partial').run(testContext(wf));
  const jobId = jobIdOf(run.workflowId);
  const result = run.result as EditResult;
  expect(result.status).toBe('partial');
  expect(result.counts).toEqual({ matched: 7, changed: 1, unchanged: 0, invalid: 1, failed: 5 });
  // every page after the budget ran out was told so
  const calls = wf.world.callsOf(jobId).filter((c) => c.activity === 'editPage');
  expect(calls.map((c) => (c.input as { budgetExhausted: boolean }).budgetExhausted)).toEqual([false, false, true]);
  expect(result.errors.filter((e) => e.code === 'BUDGET_EXCEEDED').map((e) => e.sku)).toEqual(['SKU-2', 'SKU-3']);
  expect(lastJobUpdate(jobId)).toMatchObject({ status: 'partial' });
});

test('a page that fails past its retries ends the run failed and still closes the operation', async () => {
  const run = await scenario(bulkEdit, 'page-failed').run(testContext(wf));
  const jobId = jobIdOf(run.workflowId);
  expect(run.result).toMatchObject({ status: 'failed' });
  expect((run.result as EditResult).error).toMatch(/fake editPage failure/);
  expect(wf.world.stepsOf(jobId)).toContain('finishEdit');
  expect(lastJobUpdate(jobId)).toMatchObject({ status: 'failed' });
});

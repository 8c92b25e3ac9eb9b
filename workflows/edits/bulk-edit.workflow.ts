import { ActivityFailure, ApplicationFailure, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import {
  cancelEdit,
  editProgress,
  MAX_LISTED_ERRORS,
  type EditProgress,
  type EditStatus,
  type EditResult,
  type EditWorkflowInput,
} from '../../shared/edits/messages';
import { FieldSummaries, ZERO_COUNTS, type PageResult, type ProductError } from '../../shared/edits/summary-rules';

const acts = proxyActivities<Activities>({ startToCloseTimeout: '2 minutes', retry: { maximumAttempts: 10 } });

// A page heartbeats every few seconds while it runs (model calls included): a killed worker's
// page is handed to another worker within the heartbeat timeout, and the page, run again,
// recognises what it already changed.
const pageActs = proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
});

function failureMessage(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  if (cause instanceof ApplicationFailure && cause.nonRetryable) return cause.message;
  const step = (err as { activityType?: string }).activityType;
  return `the run stopped: ${step ? `its ${step} step` : 'a step'} failed after repeated attempts`;
}

/**
 * A bulk edit, page by page: each page plans its products with the engine and keeps the plans
 * (a preview) or writes and records them (an apply). Progress is answered by the `progress`
 * query; a cancel stops it before the next page, keeping (and recording) what was done. When an
 * AI run's token budget runs out, the rest of the selection is listed as BUDGET_EXCEEDED and the
 * run ends `partial`.
 */
export async function bulkEditWorkflow(input: EditWorkflowInput): Promise<EditResult> {
  const ref = { tenantId: input.tenantId, jobId: input.jobId };
  const p: EditProgress = { status: 'processing', total: 0, processed: 0, percent: 0, counts: { ...ZERO_COUNTS } };
  let cancelled = false;
  setHandler(editProgress, () => p);
  setHandler(cancelEdit, () => {
    cancelled = true;
  });
  const errors: ProductError[] = [];
  let errorsNotListed = 0;
  const fields = new FieldSummaries();
  const replanned: string[] = [];
  const note = (more: ProductError[]) => {
    const room = Math.max(0, MAX_LISTED_ERRORS - errors.length);
    errors.push(...more.slice(0, room));
    errorsNotListed += Math.max(0, more.length - room);
  };
  const result = (error: string | null): EditResult => ({
    ...p,
    operationId: null,
    previewId: input.mode === 'preview' ? input.jobId : input.previewId,
    errors,
    errorsNotListed,
    fields: fields.list(),
    replanned,
    error,
  });

  await acts.updateJob({ ...ref, status: 'processing' });
  try {
    const start = await pageActs.startEdit(ref);
    p.total = start.total;
    p.counts.matched += start.errors.length;
    p.counts.failed += start.errors.length;
    note(start.errors);
    let budgetExhausted = false;
    let page = 0;
    for (; page < start.pages && !cancelled; page++) {
      const done: PageResult = await pageActs.editPage({ ...ref, page, budgetExhausted });
      for (const k of Object.keys(p.counts) as (keyof typeof p.counts)[]) p.counts[k] += done.counts[k];
      note(done.errors);
      fields.merge(done.fields);
      replanned.push(...done.replanned);
      p.processed += done.counts.matched;
      p.percent = p.total ? Math.min(99, Math.floor((p.processed / p.total) * 100)) : 99;
      budgetExhausted = done.budgetExhausted;
    }
    const { operationId } = await acts.finishEdit({ ...ref, counts: p.counts });
    // a cancel that came after the last page stopped nothing: the run did every page
    const stopped = cancelled && page < start.pages;
    const status: EditStatus = stopped ? 'cancelled' : budgetExhausted ? 'partial' : 'completed';
    const done = { ...result(null), status, percent: 100, operationId };
    await acts.updateJob({ ...ref, status, result: { ...done } });
    // the query answers an end only once the record has it, so a client never sees an end without its result
    p.status = status;
    p.percent = 100;
    return done;
  } catch (err) {
    const message = failureMessage(err);
    // what was written stays recorded: the operation is closed so that it can be rolled back
    const closed = await acts.finishEdit({ ...ref, counts: p.counts }).catch(() => ({ operationId: null }));
    const failed = { ...result(message), status: 'failed' as const, operationId: closed.operationId };
    await acts.updateJob({ ...ref, status: 'failed', result: { ...failed }, error: message });
    p.status = 'failed';
    return failed;
  }
}

import type { AppContext } from '../context';
import { tenantOf } from '../context';
import { EditRuns, type EditRunView } from '../../shared/edits/runs';
import type { EditType } from '../../shared/edits/messages';

/** The tenant's bulk edit runs of one kind, with the sync limit the config gives that kind. */
export function editRuns(ctx: AppContext, type: EditType): EditRuns {
  const { principal, tenantDb } = tenantOf(ctx);
  const { config } = ctx.deps;
  return new EditRuns({
    tenantDb,
    jobs: ctx.deps.jobs,
    temporal: ctx.deps.temporal,
    actor: principal.keyId,
    syncMax: type === 'flow' ? config.flowSyncMax : config.aiSyncMax,
  });
}

/**
 * A run's answer: 202 with the job while it runs (a `Location` to poll); once it ended, 200, or
 * 207 when some products could not be changed (an apply; a preview lists them and answers 200).
 */
export function answerRun(ctx: AppContext, path: string, run: { finished: boolean; view: EditRunView }): void {
  const { view } = run;
  if (!run.finished && (view.status === 'queued' || view.status === 'processing')) {
    ctx.status = 202;
    ctx.set('Location', `${path}/${encodeURIComponent(view.jobId)}`);
  } else ctx.status = view.mode === 'apply' && (view.errors?.length ?? 0) > 0 ? 207 : 200;
  ctx.body = view;
}

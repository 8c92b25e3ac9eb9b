import type { AppContext } from '../context';
import { tenantOf } from '../context';
import { defineRoutes } from '../route';
import type { JsonSchema } from '../../shared/validation';
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

export const editTags = ['bulk'];
export const readScope = { scopes: ['products:read' as const] };
export const updateScope = { scopes: ['products:update' as const] };
const jobParam: Record<string, JsonSchema> = { jobId: { type: 'string', minLength: 1, maxLength: 100 } };

/** A kind of run's job routes: `GET <base>/{jobId}` and `POST <base>/{jobId}/cancel`. */
export function runJobRoutes(type: EditType, base: string, what: { read: string; cancel: string; started: string }) {
  return defineRoutes([
    {
      method: 'get',
      path: `${base}/:jobId`,
      summary: what.read,
      tags: editTags,
      auth: readScope,
      params: jobParam,
      responses: { 200: { description: `the run, as ${what.started} answers it` }, 404: { description: 'not-found' } },
      handler: async (ctx) => {
        ctx.body = await editRuns(ctx, type).get(type, ctx.params.jobId);
      },
    },
    {
      method: 'post',
      path: `${base}/:jobId/cancel`,
      summary: what.cancel,
      tags: editTags,
      auth: updateScope,
      params: jobParam,
      responses: {
        200: { description: '`{success, message}`' },
        400: { description: 'cancel-failed: the run has ended or is already being cancelled' },
        404: { description: 'not-found' },
      },
      handler: async (ctx) => {
        ctx.body = await editRuns(ctx, type).cancel(type, ctx.params.jobId);
      },
    },
  ]);
}

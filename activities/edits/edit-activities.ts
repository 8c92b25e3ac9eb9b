import { heartbeat } from '@temporalio/activity';
import type { ActivityDeps } from '..';
import { Tenancy } from '../../shared/auth/tenancy';
import { TenantDb } from '../../shared/db/tenant-db';
import { jobs } from '../../shared/jobs/collection';
import type { EditCounts, PageResult, ProductError } from '../../shared/edits/summary-rules';
import { closeOperation } from '../../shared/edits/apply';
import { dropPages, pageCount, runEditPage, snapshotSelection } from '../../shared/edits/page';
import { editPlanner, editRunOf } from '../../shared/edits/run-of';
import type { EditJobInput } from '../../shared/edits/runs';

interface JobRef {
  tenantId: string;
  jobId: string;
}

/** How often a page heartbeats while it runs, model calls included: well inside the workflow's heartbeat timeout. */
const HEARTBEAT_MS = 5000;

/** The activities of a bulk edit run. Each reads what it edits from the job's record. */
export function editActivities(deps: ActivityDeps) {
  const load = async (ref: JobRef) => {
    const tenantDb = new TenantDb(deps.db, ref.tenantId);
    const job = await tenantDb.collection(jobs).findOne({ _id: ref.jobId });
    if (!job) throw new Error(`job ${ref.jobId} has no record`);
    return { tenantDb, job, input: job.input as unknown as EditJobInput };
  };

  return {
    /**
     * Fixes the run's products as pages (an apply of a preview takes the preview's) and answers
     * their count, with the SKUs of the selection that name no product (listed once, as not found).
     */
    async startEdit(ref: JobRef): Promise<{ total: number; pages: number; errors: ProductError[] }> {
      const { tenantDb, input } = await load(ref);
      const run = editRunOf(deps.config, ref.jobId, input);
      const ticker = setInterval(() => heartbeat(), HEARTBEAT_MS);
      try {
        const sized =
          run.mode === 'apply' && run.previewId
            ? { total: input.total ?? 0, pages: await pageCount(tenantDb, run.previewId) }
            : await snapshotSelection(tenantDb, ref.jobId, run.selection, run.pageSize);
        return {
          ...sized,
          errors: input.missingSkus.map((sku) => ({
            productId: null,
            sku,
            code: 'not-found',
            message: `No product or variant with SKU ${sku}`,
          })),
        };
      } finally {
        clearInterval(ticker);
      }
    },

    /** One page of the run; run again after a kill, it changes nothing twice (runEditPage). */
    async editPage(ref: JobRef & { page: number; budgetExhausted: boolean }): Promise<PageResult> {
      const { tenantDb, job, input } = await load(ref);
      const tenant = () => new Tenancy(deps.db).getTenant(ref.tenantId);
      const ticker = setInterval(() => heartbeat(), HEARTBEAT_MS);
      try {
        const planner = await editPlanner(deps.config, tenantDb, tenant, job._id, input);
        return await runEditPage(tenantDb, editRunOf(deps.config, job._id, input), planner, ref.page, {
          budgetExhausted: ref.budgetExhausted,
          onProgress: () => heartbeat(),
        });
      } finally {
        clearInterval(ticker);
      }
    },

    /**
     * Closes the run's bulk operation if it changed anything; one whose every write lost (to a
     * concurrent save) is deleted, as none is recorded for a run that changes nothing (closeOperation).
     */
    async finishEdit(ref: JobRef & { counts: EditCounts }): Promise<{ operationId: string | null }> {
      const { tenantDb, input } = await load(ref);
      if (input.mode !== 'apply') return { operationId: null };
      await dropPages(tenantDb, ref.jobId);
      const c = ref.counts;
      const operationId = await closeOperation(tenantDb, input.operationId, {
        totalProcessed: c.matched,
        created: 0,
        updated: c.changed,
        skipped: c.unchanged,
        failed: c.invalid + c.failed,
      });
      return { operationId };
    },
  };
}

import { ApplicationFailure, Context, heartbeat } from '@temporalio/activity';
import type { Activities } from '../../../activities';
import type { RollbackWorkflowInput } from '../../../shared/bulk/messages';
import type { AttemptOutcome } from '../../../shared/webhooks/messages';

/**
 * Small stand-ins for the activities, for tests of the workflows' own logic and for recording
 * their histories. They are the workflows' collaborators, not infrastructure: what an activity
 * does to the database is tested elsewhere; here it matters only what it answers, when, and
 * whether it fails. Every call is recorded under its job (or transfer), and a job's script says
 * which rows fail, which step fails, and where a call waits for the test (a gate).
 *
 * Typed as the whole `Activities`: an activity added to activities/index.ts without a stand-in
 * here is a type error, not a workflow test that hangs on an activity no worker has.
 */

/** A point where one activity call waits until the test lets it go. */
export class Gate {
  private reach!: () => void;
  private open!: () => void;
  /** Resolves once the call has arrived at the gate. */
  readonly reached = new Promise<void>((resolve) => (this.reach = resolve));
  readonly released = new Promise<void>((resolve) => (this.open = resolve));
  /** The input of the call that arrived. */
  input: unknown;
  arrive(input: unknown): void {
    this.input = input;
    this.reach();
  }
  release(): void {
    this.open();
  }
}

export interface ImportFile {
  /** Products in the file, one row each. */
  rows: number;
  /** Rows (0-based) that fail validation. */
  bad?: number[];
  /** Rows that update an existing product (the rest create one). */
  existing?: number[];
  structuralErrors?: string[];
  exceedsRowCap?: boolean;
}

export interface JobScript {
  /** This activity fails, non-retryably, on its first call for the job. */
  failAt?: keyof Activities;
  importFile?: ImportFile;
  /** The products of a publication that the channel refuses, and those whose binding is off (skipped). */
  refused?: string[];
  skipped?: string[];
  /** moveTransferStock fails with insufficient stock on these receive attempts (1-based). */
  insufficientStockOnAttempt?: number[];
  /** A bulk edit: how many pages of how many products; one product per page is invalid; the budget runs out on page `budgetOutAt` (1-based). */
  edit?: { pages: number; perPage: number; budgetOutAt?: number };
  /** A webhook delivery (scripted by its delivery id): what its attempts come to, in order; `done` after the list. */
  attempts?: AttemptOutcome[];
}

export interface Call {
  activity: keyof Activities;
  input: unknown;
}

export class FakeWorld {
  private readonly scripts = new Map<string, JobScript>();
  private readonly gates = new Map<string, Gate>();
  private readonly counters = new Map<string, number>();
  private readonly calls = new Map<string, Call[]>();
  private readonly published = new Map<string, { sku: string; outcome: 'published' | 'failed' | 'skipped' }[]>();

  /** Sets how the activities behave for one job (or transfer) id. */
  script(key: string, script: JobScript): this {
    this.scripts.set(key, script);
    return this;
  }

  /** The `nth` call (1-based) of `activity` for `key` waits at the returned gate. */
  gate(key: string, activity: keyof Activities, nth = 1): Gate {
    const gate = new Gate();
    this.gates.set(`${key}|${activity}|${nth}`, gate);
    return gate;
  }

  callsOf(key: string): Call[] {
    return this.calls.get(key) ?? [];
  }

  /** The names of the activities called for `key`, in order. */
  stepsOf(key: string): string[] {
    return this.callsOf(key).map((c) => c.activity);
  }

  /** The job-record updates the workflow asked for, in order. */
  jobUpdates(jobId: string): Parameters<Activities['updateJob']>[0][] {
    return this.callsOf(jobId)
      .filter((c) => c.activity === 'updateJob')
      .map((c) => c.input as Parameters<Activities['updateJob']>[0]);
  }

  /** Records the call and fails it if the script says so; returns the script and the call's gate. */
  private record(key: string, activity: keyof Activities, input: unknown): { script: JobScript; gate?: Gate } {
    const script = this.scripts.get(key) ?? {};
    const list = this.calls.get(key) ?? [];
    list.push({ activity, input });
    this.calls.set(key, list);
    const n = (this.counters.get(`${key}|${activity}`) ?? 0) + 1;
    this.counters.set(`${key}|${activity}`, n);
    if (script.failAt === activity && n === 1)
      throw ApplicationFailure.nonRetryable(`fake ${activity} failure`, 'fake-failure');
    const gate = this.gates.get(`${key}|${activity}|${n}`);
    gate?.arrive(input);
    return { script, gate };
  }

  /** `record`, then the wait at the call's gate if it has one. */
  private async enter(key: string, activity: keyof Activities, input: unknown): Promise<JobScript> {
    const { script, gate } = this.record(key, activity, input);
    if (gate) await pass(gate);
    return script;
  }

  activities(): Activities {
    return {
      ping: async (message: string, holdMs = 0) => {
        await this.enter(`ping:${message}`, 'ping', { message, holdMs });
        return { echo: message, pid: 0, host: 'fake-worker' };
      },

      updateJob: async (u) => {
        await this.enter(u.jobId, 'updateJob', u);
      },

      rollbackOperation: async (input) => {
        await this.enter((input as RollbackWorkflowInput).jobId, 'rollbackOperation', input);
        return {
          operationId: input.operationId,
          rollbackOperationId: input.rollbackId,
          deleted: 2,
          restored: 3,
          failed: [],
        };
      },

      stageImport: async (ref) => {
        const { importFile: file = { rows: 0 } } = await this.enter(ref.jobId, 'stageImport', ref);
        const chunks: [number, number][] = [];
        for (let from = 0; from < file.rows; from += ref.chunkSize)
          chunks.push([from, Math.min(file.rows, from + ref.chunkSize)]);
        return {
          chunks,
          totalRows: file.rows,
          structuralErrors: file.structuralErrors ?? [],
          exceedsRowCap: file.exceedsRowCap ?? false,
          exceedsVariantCap: false,
        };
      },

      importChunk: async (ref) => {
        const { importFile: file = { rows: 0 } } = await this.enter(ref.jobId, 'importChunk', ref);
        const counts = { totalProcessed: 0, created: 0, updated: 0, skipped: 0, failed: 0 };
        for (let row = ref.from; row < ref.to; row++) {
          counts.totalProcessed++;
          if (file.bad?.includes(row)) counts.failed++;
          else if (file.existing?.includes(row)) counts.updated++;
          else counts.created++;
        }
        return counts;
      },

      finishImport: async (ref) => {
        const { importFile: file } = await this.enter(ref.jobId, 'finishImport', ref);
        return { errorReportKey: file?.bad?.length ? `reports/${ref.tenantId}/${ref.jobId}-errors.csv` : null };
      },

      exportCsv: async (input) => {
        await this.enter(input.jobId, 'exportCsv', input);
        return {
          key: `exports/${input.tenantId}/${input.jobId}.csv`,
          count: 3,
          rows: 5,
          totalRows: 5,
          processedRows: 5,
        };
      },

      moveTransferStock: async (input) => {
        const script = await this.enter(input.transferId, 'moveTransferStock', input);
        if (script.insufficientStockOnAttempt?.includes(input.attempt))
          throw ApplicationFailure.nonRetryable('Not enough stock at the origin', 'insufficient-stock', {
            sku: input.productsList[0]?.sku,
          });
      },

      recordTransfer: async (input) => {
        await this.enter(input.transferId, 'recordTransfer', input);
      },

      publishBatch: async (input) => {
        const { script, gate } = this.record(input.jobId, 'publishBatch', input);
        const outcomes = this.published.get(input.jobId) ?? [];
        this.published.set(input.jobId, outcomes);
        const publishOne = (sku: string) => {
          const outcome = script.refused?.includes(sku)
            ? ('failed' as const)
            : script.skipped?.includes(sku)
              ? ('skipped' as const)
              : ('published' as const);
          outcomes.push({ sku, outcome });
          return {
            sku,
            success: outcome === 'published',
            ...(outcome === 'failed' ? { error: 'the channel refused it' } : {}),
            ...(outcome === 'skipped' ? { skipped: true, error: 'CHANNEL_INACTIVE' } : {}),
          };
        };
        // as the real batch: a cancel stops it between products, so the first one is done before a gate
        const first = input.productIds.length ? [publishOne(input.productIds[0])] : [];
        if (gate) await pass(gate);
        return { results: [...first, ...input.productIds.slice(1).map(publishOne)] };
      },

      finishPublication: async (input) => {
        await this.enter(input.jobId, 'finishPublication', input);
        const counts = { total: input.total, published: 0, failed: 0, skipped: 0 };
        for (const o of this.published.get(input.jobId) ?? []) counts[o.outcome]++;
        return { ...counts, unsent: [] };
      },

      planOrderStock: async (input) => {
        await this.enter(input.orderId, 'planOrderStock', input);
        return {
          locationId: 'loc-1',
          sales: [{ sku: 'TEE', quantity: 2, allowNegative: false, key: `ordsale:${input.orderId}:run:0` }],
          consumption: {
            locationId: 'loc-1',
            lines: [
              {
                sku: 'FLOUR',
                kind: 'material' as const,
                minor: 500,
                unit: 'kg',
                precision: 3,
                source: 'component' as const,
              },
            ],
          },
          consumptionId: `order:${input.orderId}:run`,
        };
      },
      applyOrderSales: async (input) => {
        await this.enter(input.orderId, 'applyOrderSales', input);
      },
      consumeOrderMaterials: async (input) => {
        await this.enter(input.orderId, 'consumeOrderMaterials', input);
      },
      markOrderAccepted: async (input) => {
        await this.enter(input.orderId, 'markOrderAccepted', input);
        return orderMove(input.orderId, 'pending', 'accepted');
      },
      markOrderCancelled: async (input) => {
        await this.enter(input.orderId, 'markOrderCancelled', input);
        const stock = {
          runId: 'run',
          locationId: 'loc-1',
          sales: [{ sku: 'TEE', quantity: 2, allowNegative: false, key: `ordsale:${input.orderId}:run:0` }],
          consumptionId: `order:${input.orderId}:run`,
        };
        return { outcome: orderMove(input.orderId, 'accepted', 'cancelled'), stock };
      },
      returnOrderStock: async (input) => {
        await this.enter(input.orderId, 'returnOrderStock', input);
      },
      recordOrderStockReturned: async (input) => {
        await this.enter(input.orderId, 'recordOrderStockReturned', input);
      },

      startEdit: async (ref) => {
        const { edit = { pages: 0, perPage: 0 } } = await this.enter(ref.jobId, 'startEdit', ref);
        return {
          total: edit.pages * edit.perPage,
          pages: edit.pages,
          errors: [{ productId: null, sku: 'GONE', code: 'not-found', message: 'No product or variant with SKU GONE' }],
        };
      },
      editPage: async (ref) => {
        const { edit = { pages: 0, perPage: 0 } } = await this.enter(ref.jobId, 'editPage', ref);
        const page = ref.page + 1;
        const out = page >= (edit.budgetOutAt ?? Infinity) || ref.budgetExhausted;
        const n = page <= edit.pages ? edit.perPage : 0;
        const changed = n && !out ? n - 1 : 0;
        const sku = `SKU-${page}`;
        return {
          counts: { matched: n, changed, unchanged: 0, invalid: n && !out ? 1 : 0, failed: out ? n : 0 },
          errors: n
            ? [
                out
                  ? {
                      productId: `id-${page}`,
                      sku,
                      code: 'BUDGET_EXCEEDED',
                      message: 'budget used up',
                      retryable: true,
                    }
                  : {
                      productId: `id-${page}`,
                      sku,
                      code: 'validation-error',
                      message: 'compareAtPrice must be greater than price',
                    },
              ]
            : [],
          fields: changed ? [{ field: 'price', changed, samples: [{ sku: `${sku}-A`, before: 10, after: 11 }] }] : [],
          replanned: [],
          budgetExhausted: out,
        };
      },
      finishEdit: async (ref) => {
        await this.enter(ref.jobId, 'finishEdit', ref);
        return { operationId: ref.counts.changed ? `bop_${ref.jobId}` : null };
      },

      attemptWebhookDelivery: async (input) => {
        const script = await this.enter(input.deliveryId, 'attemptWebhookDelivery', input);
        const n = this.counters.get(`${input.deliveryId}|attemptWebhookDelivery`) ?? 1;
        return script.attempts?.[n - 1] ?? { kind: 'done' };
      },

      failWebhookDeliveries: async (input) => {
        for (const id of input.deliveryIds) await this.enter(id, 'failWebhookDeliveries', input);
      },
    };
  }
}

/** A fixed order move (the fakes' answers must not vary between recordings). */
function orderMove(orderId: string, from: 'pending' | 'accepted', to: 'accepted' | 'cancelled') {
  return {
    orderId,
    externalId: `ext-${orderId}`,
    orderStatus: to,
    previousStatus: from,
    updatedAt: '2026-01-01T00:00:00.000Z',
  };
}

/**
 * Waits at the gate until the test releases it, or until the activity is cancelled (it then
 * fails with the CancelledFailure, as a real activity that honours a cancel does). An activity
 * learns of a cancel through its heartbeats, so it beats while it waits (the test worker sends
 * them at once: see `maxHeartbeatThrottleInterval` in env.ts).
 */
async function pass(gate: Gate): Promise<void> {
  const beat = setInterval(() => heartbeat(), 50);
  try {
    await Promise.race([gate.released, Context.current().cancelled]);
  } finally {
    clearInterval(beat);
  }
}

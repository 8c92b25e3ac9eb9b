import { isDeepStrictEqual } from 'node:util';
import { ObjectId, type Filter } from 'mongodb';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { BulkOperations } from '../bulk/operations';
import { newId } from '../ids';
import { isFinished, jobs, type JobRecord } from '../jobs/collection';
import type { Jobs } from '../jobs/jobs';
import { productSkus, products } from '../products/collections';
import { buildFilter, type ProductFilters } from '../products/query';
import type { ProductDoc } from '../products/types';
import { queryOrNull, workflowHandle } from '../temporal/workflows';
import { claimId } from '../products/collections';
import {
  bulkEdit,
  cancelEdit,
  editProgress,
  type EditMode,
  type EditProgress,
  type EditResult,
  type EditType,
} from './messages';

/** Which products an edit covers: SKUs (a variant's SKU selects its product), the list filters, or all. */
export type EditSelection = { skus: string[] } | { filters: ProductFilters } | { all: true };

/** What an AI transform asks of the model. */
export interface AiSpec {
  prompt: string;
  fields: string[];
  sourceFields?: string[];
}

/** A run as its job record keeps it: every page reads what it edits from here. */
export interface EditJobInput {
  type: EditType;
  mode: EditMode;
  flow?: unknown;
  ai?: AiSpec;
  selection: EditSelection;
  /** The selection's products, when it named SKUs. */
  productIds?: string[];
  /** SKUs of the selection that name no product of the tenant. */
  missingSkus: string[];
  previewId: string | null;
  operationId: string;
  operationName: string | null;
  actor: string;
  /** Products the run covers, when known at the request (a large run learns it in its first step). */
  total: number | null;
  sync: boolean;
}

export const EDIT_JOB_TYPES: Record<EditType, { jobType: string; prefix: string; label: string }> = {
  flow: { jobType: 'flow', prefix: 'flow', label: 'flow' },
  'ai-transform': { jobType: 'ai-transform', prefix: 'aitx', label: 'AI transform' },
};

/**
 * The key a run is found again by: an apply of a preview is one per preview (a retried or repeated
 * apply answers the first, never changes products twice), whatever key the client sent; otherwise
 * the client's Idempotency-Key, apart for previews and applies (a key used for a preview does not
 * answer an execute with the preview).
 */
function runKey(req: StartEdit): string | undefined {
  if (req.previewId) return `apply-of:${req.previewId}`;
  return req.idempotencyKey ? `${req.mode}:${req.idempotencyKey}` : undefined;
}

/** How long a request waits for the workflow of a job another request has just recorded. */
const WORKFLOW_APPEARS_MS = 10_000;

/** How long a preview can be applied by its id. */
export const PREVIEW_TTL_MS = 24 * 3600_000;

/** A selection as it selects: SKUs as they resolve (trimmed, upper-cased), in no order, each once. */
function canonicalSelection(selection: EditSelection): EditSelection {
  if (!('skus' in selection)) return selection;
  return { skus: [...new Set(selection.skus.map((s) => s.trim().toUpperCase()))].sort() };
}

/** A flow as it edits: its rules (its selection is compared as it selects; its name is a label). */
function flowRules(flow: unknown): unknown {
  if (flow === null || typeof flow !== 'object') return flow;
  const { selection: _s, name: _n, ...rules } = flow as Record<string, unknown>;
  return rules;
}

/** An AI edit as it edits: the prompt, and its fields in no order. */
function aiEdit(ai: AiSpec): unknown {
  return { prompt: ai.prompt, fields: [...ai.fields].sort(), sourceFields: [...(ai.sourceFields ?? [])].sort() };
}

/** The products of a selection, as a condition; SKUs resolved through the SKU space. */
export function selectionFilter(input: Pick<EditJobInput, 'selection' | 'productIds'>): Filter<ProductDoc> {
  if ('skus' in input.selection)
    return { _id: { $in: (input.productIds ?? []).map((id) => new ObjectId(id)) } } as Filter<ProductDoc>;
  if ('filters' in input.selection) return buildFilter(input.selection.filters).filter;
  return {};
}

export interface EditRunsContext {
  tenantDb: TenantDb;
  jobs: Jobs;
  temporal: Client;
  actor: string;
  /** Runs of at most this many products are answered when done; larger ones as jobs at once. */
  syncMax: number;
}

export interface StartEdit {
  type: EditType;
  mode: EditMode;
  flow?: unknown;
  ai?: AiSpec;
  selection?: EditSelection;
  previewId?: string;
  operationName?: string | null;
  idempotencyKey?: string;
  /** A check made only when a new run is recorded (not for a retry that finds its run): a throw refuses it. */
  beforeStart?: (input: EditJobInput) => Promise<void>;
}

/** A run as the API answers it: live progress while it runs, the record's result once it ended. */
export interface EditRunView {
  jobId: string;
  type: EditType;
  mode: EditMode;
  status: string;
  /** Null only while a large run has not yet fixed its products. */
  total: number | null;
  processed: number;
  percent: number;
  counts: EditResult['counts'];
  operationId: string | null;
  previewId: string | null;
  expiresAt?: string;
  errors?: EditResult['errors'];
  errorsNotListed?: number;
  fields?: EditResult['fields'];
  replanned?: string[];
  error?: string | null;
  createdAt: string;
  finishedAt: string | null;
}

/**
 * Bulk edit runs (rule flows and AI transforms) of one tenant: start, read, cancel. Every run is
 * the same workflow (a job `flow_…` or `aitx_…`); one of at most `syncMax` products is awaited,
 * so its caller gets the result in the answer.
 */
export class EditRuns {
  constructor(private readonly c: EditRunsContext) {}

  async start(req: StartEdit): Promise<{ finished: boolean; view: EditRunView }> {
    const { tenantDb } = this.c;
    const kind = EDIT_JOB_TYPES[req.type];
    // a retry answers its run before it is judged again (its preview expired, its products gone)
    const earlier = await this.c.jobs.startedBy(tenantDb, kind.jobType, runKey(req));
    if (earlier && req.previewId) await this.refuseIfRolledBack(earlier);
    const job = earlier ?? (await this.startNew(req));
    // a retry with the same Idempotency-Key answers as its first request did
    if (!job.input.sync) return { finished: false, view: await this.view(job) };
    await this.ended(job);
    return { finished: true, view: await this.view((await this.c.jobs.get(tenantDb, job._id)) ?? job) };
  }

  /**
   * A preview is applied once: another apply answers that run, unless the run was rolled back
   * since, when its counts would claim changes no longer there (409; preview again to apply anew).
   */
  private async refuseIfRolledBack(job: JobRecord): Promise<void> {
    const operationId = (job.input as { operationId?: string | null }).operationId;
    if (!operationId) return;
    const op = await new BulkOperations(this.c.tenantDb).get(operationId);
    if (op?.status === 'rolled_back')
      throw new AppError(
        409,
        'conflict',
        `This preview was applied (job ${job._id}, operation ${operationId}) and that was rolled back; preview again to apply it anew`,
        { details: { jobId: job._id, operationId, rolledBackBy: op.rolledBackBy ?? null } },
      );
  }

  private async startNew(req: StartEdit): Promise<JobRecord> {
    const { tenantDb } = this.c;
    const kind = EDIT_JOB_TYPES[req.type];
    let input: Omit<EditJobInput, 'operationId' | 'sync'>;
    if (req.previewId) input = await this.fromPreview(req);
    else {
      const selection = req.selection!;
      const resolved =
        'skus' in selection ? await this.resolveSkus(selection.skus) : { productIds: undefined, missing: [] };
      const filter = selectionFilter({ selection, productIds: resolved.productIds });
      // a count decodes the whole selection on the embedded database: up to syncMax + 1 says sync or not
      const probe = await tenantDb
        .collection(products)
        .find(filter, { projection: { _id: 1 }, limit: this.c.syncMax + 1 })
        .toArray();
      const total = probe.length <= this.c.syncMax ? probe.length : null;
      input = {
        type: req.type,
        mode: req.mode,
        ...(req.flow !== undefined ? { flow: req.flow } : {}),
        ...(req.ai ? { ai: req.ai } : {}),
        selection,
        ...(resolved.productIds ? { productIds: resolved.productIds } : {}),
        missingSkus: resolved.missing,
        previewId: null,
        operationName: req.operationName ?? null,
        actor: this.c.actor,
        total,
      };
    }
    const operationId = newId('bop');
    const sync = input.total !== null && input.total <= this.c.syncMax;
    const { job } = await this.c.jobs.start(tenantDb, {
      type: kind.jobType,
      prefix: kind.prefix,
      workflow: bulkEdit,
      idempotencyKey: runKey(req),
      ...(req.beforeStart ? { beforeStart: (job) => req.beforeStart!(job.input as unknown as EditJobInput) } : {}),
      input: { ...input, operationId, sync } satisfies EditJobInput as unknown as Record<string, unknown>,
      workflowInput: (jobId) => ({
        tenantId: tenantDb.tenantId,
        jobId,
        type: req.type,
        mode: input.mode,
        operationId,
        previewId: input.mode === 'preview' ? jobId : input.previewId,
      }),
    });
    return job;
  }

  /**
   * Waits for a run's workflow to end. A concurrent request with the same key finds the job
   * record a moment before its workflow exists: it waits for the workflow to appear.
   */
  private async ended(job: JobRecord): Promise<void> {
    const handle = workflowHandle(this.c.temporal, bulkEdit, job.workflowId);
    for (const until = Date.now() + WORKFLOW_APPEARS_MS; ;) {
      try {
        await handle.result();
        return;
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError) || Date.now() > until) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  async get(type: EditType, jobId: string): Promise<EditRunView> {
    return this.view(await this.job(type, jobId));
  }

  /** Asks a running edit to stop before its next page: 400 cancel-failed once it has ended. */
  async cancel(type: EditType, jobId: string): Promise<{ success: true; message: string }> {
    const job = await this.job(type, jobId);
    const label = EDIT_JOB_TYPES[type].label;
    if (isFinished(job.status))
      throw new AppError(400, 'cancel-failed', `The ${label} is ${job.status}; only a running one can be cancelled`);
    const first = await this.c.tenantDb
      .collection(jobs)
      .updateOne({ _id: job._id, cancelRequestedAt: null }, { $set: { cancelRequestedAt: new Date() } });
    if (first.matchedCount === 0) throw new AppError(400, 'cancel-failed', `The ${label} is already being cancelled`);
    try {
      await this.c.temporal.workflow.getHandle(job.workflowId).signal(cancelEdit);
    } catch {
      throw new AppError(400, 'cancel-failed', `The ${label} has already ended`);
    }
    return {
      success: true,
      message: `${label} ${job._id} is being cancelled; it stops before its next page of products`,
    };
  }

  private async job(type: EditType, jobId: string): Promise<JobRecord> {
    const job = await this.c.jobs.get(this.c.tenantDb, jobId, EDIT_JOB_TYPES[type].jobType);
    if (!job) throw new AppError(404, 'not-found', `No ${EDIT_JOB_TYPES[type].label} job ${jobId}`);
    return this.c.jobs.settle(this.c.tenantDb, job);
  }

  private async view(read: JobRecord): Promise<EditRunView> {
    let job = read;
    const input = job.input as unknown as EditJobInput;
    let live: EditProgress | null = isFinished(job.status)
      ? null
      : await queryOrNull(this.c.temporal, job.workflowId, editProgress);
    // the workflow ended between the record's read and the query: the record now holds the result
    if (live && live.status !== 'processing') {
      job = (await this.c.jobs.get(this.c.tenantDb, job._id)) ?? job;
      live = isFinished(job.status) ? null : live;
    }
    const r = (job.result ?? null) as EditResult | null;
    const base = {
      jobId: job._id,
      type: input.type,
      mode: input.mode,
      status: live?.status ?? job.status,
      // a large run learns its total in its first step; until then the request's count (null if it made none) stands
      total: live?.total || (r?.total ?? input.total),
      processed: live?.processed ?? r?.processed ?? 0,
      percent: live?.percent ?? (isFinished(job.status) ? 100 : 0),
      counts: live?.counts ?? r?.counts ?? { matched: 0, changed: 0, unchanged: 0, invalid: 0, failed: 0 },
      operationId: r?.operationId ?? null,
      previewId: input.mode === 'preview' ? job._id : input.previewId,
      ...(input.mode === 'preview'
        ? { expiresAt: new Date(job.createdAt.getTime() + PREVIEW_TTL_MS).toISOString() }
        : {}),
      createdAt: job.createdAt.toISOString(),
      finishedAt: job.finishedAt ? job.finishedAt.toISOString() : null,
    };
    if (!r || live) return { ...base, ...(job.error ? { error: job.error } : {}) };
    return {
      ...base,
      errors: r.errors,
      errorsNotListed: r.errorsNotListed,
      fields: r.fields,
      replanned: r.replanned,
      error: r.error ?? job.error,
    };
  }

  /** An apply of a preview: the preview's own edit and products, if it is complete, of the same kind and not expired. */
  private async fromPreview(req: StartEdit): Promise<Omit<EditJobInput, 'operationId' | 'sync'>> {
    const kind = EDIT_JOB_TYPES[req.type];
    const found = await this.c.jobs.get(this.c.tenantDb, req.previewId!, kind.jobType);
    const preview = found ? await this.c.jobs.settle(this.c.tenantDb, found) : null;
    const p = preview?.input as unknown as EditJobInput | undefined;
    if (!preview || !p || p.mode !== 'preview')
      throw new AppError(404, 'not-found', `No ${kind.label} preview ${req.previewId}`, { field: 'previewId' });
    // a partial preview (its budget ran out) applies what it planned; its refused products stay refused
    if (preview.status !== 'completed' && preview.status !== 'partial')
      throw new AppError(
        409,
        'preview-not-ready',
        `Preview ${preview._id} is ${preview.status}; only a completed preview can be applied`,
        {
          field: 'previewId',
        },
      );
    if (Date.now() - preview.createdAt.getTime() > PREVIEW_TTL_MS)
      throw new AppError(410, 'preview-expired', `Preview ${preview._id} has expired; preview the edit again`, {
        field: 'previewId',
      });
    // each part sent must be the previewed one: the selection too (an AI transform sends it beside the spec)
    const same =
      (req.flow === undefined || isDeepStrictEqual(flowRules(req.flow), flowRules(p.flow))) &&
      (req.ai === undefined || isDeepStrictEqual(aiEdit(req.ai), p.ai && aiEdit(p.ai))) &&
      (req.selection === undefined ||
        isDeepStrictEqual(canonicalSelection(req.selection), canonicalSelection(p.selection)));
    if (!same)
      throw new AppError(
        409,
        'preview-mismatch',
        `The edit sent differs from the one preview ${preview._id} planned; send the previewId alone, or preview again`,
        {
          field: 'previewId',
        },
      );
    // the preview's plans: every product it matched, less the SKUs that named none (listed again
    // as not found, as the preview listed them)
    const r = preview.result as EditResult | null;
    const planned = r ? r.counts.matched - p.missingSkus.length : (p.total ?? 0);
    return {
      ...p,
      mode: 'apply',
      previewId: preview._id,
      operationName: req.operationName ?? p.operationName,
      actor: this.c.actor,
      total: planned,
    };
  }

  /** SKUs to product ids through the SKU space (a variant's SKU selects its product); unknown ones listed. */
  private async resolveSkus(skus: string[]): Promise<{ productIds: string[]; missing: string[] }> {
    const wanted = [...new Set(skus.map((s) => s.trim().toUpperCase()))];
    const claims = await this.c.tenantDb
      .collection(productSkus)
      .find({ _id: { $in: wanted.map((s) => claimId(this.c.tenantDb.tenantId, s)) } })
      .toArray();
    const bySku = new Map(
      claims.filter((c) => c.kind === 'product' || c.kind === 'variant').map((c) => [c.sku, c.productId]),
    );
    return {
      productIds: [...new Set(wanted.flatMap((s) => (bySku.has(s) ? [bySku.get(s)!] : [])))],
      missing: wanted.filter((s) => !bySku.has(s)),
    };
  }
}

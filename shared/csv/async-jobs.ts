import type { S3Client } from '@aws-sdk/client-s3';
import type { Client } from '@temporalio/client';
import type { TenantDb } from '../db/tenant-db';
import { BulkOperations } from '../bulk/operations';
import { AppError } from '../errors/catalog';
import { isFinished, type JobRecord, type JobStatus } from '../jobs/collection';
import type { Jobs } from '../jobs/jobs';
import { MAX_UPLOAD_BYTES, presignUpload, UPLOAD_URL_TTL_SECONDS } from '../s3/client';
import { queryOrNull } from '../temporal/workflows';
import { countPlans, planImport } from './import';
import { allowedConfig } from './import-config';
import { checkJobRate, type CsvJobType } from './job-rate';
import { layoutFor } from './layouts/index';
import { ASYNC_LIMITS } from './limits';
import { csvExport, csvImport, importProgress, type ExportResult, type ImportProgress } from './messages';
import { readProductsFrom } from './read';
import { selectionFilter, type Selection } from './select';
import { checkUploadedObject, checkUploadKey, newUploadKey, openObject, presignDownload } from './uploads';

/** What the async CSV flow runs on: one tenant's data, the object store, and the jobs over Temporal. */
export interface CsvJobsDeps {
  tenantDb: TenantDb;
  s3: S3Client;
  bucket: string;
  jobs: Jobs;
  /** Asked for a running import's progress (a query that never waits on a worker). */
  temporal: Client;
}

export interface UploadValidation {
  rows: number;
  validRows: number;
  invalidRows: { row: number; sku: string | null; errors: string[] }[];
  exceedsRowCap: boolean;
  exceedsVariantCap: boolean;
  structuralErrors: string[];
}

export interface ImportJobStatus {
  jobId: string;
  status: JobStatus | ImportProgress['status'];
  percent: number;
  processedRows: number;
  totalRows: number;
  created: number;
  updated: number;
  failed: number;
  skipped: number;
  errorReportUrl: string | null;
  /** The bulk operation that rolls the import back (`bop_<jobId>`), once the import ended having made one. */
  operationId: string | null;
  error?: string;
}

export interface ExportJobStatus {
  jobId: string;
  status: JobStatus;
  percent: number;
  processedRows: number;
  totalRows: number;
  count: number;
  downloadUrl?: string;
  error?: string;
}

/** A start as a client asked for it: its Idempotency-Key makes a retried start answer the same job. */
interface StartRequest {
  idempotencyKey?: string;
}

/**
 * The asynchronous CSV flow of one tenant: upload, validation, import and export jobs and their
 * status. Each start checks what it can before a job exists (the upload is the tenant's and is
 * there, the tenant is within its job allowance), so a job is only made for work that can run.
 */
export class CsvJobs {
  constructor(private readonly deps: CsvJobsDeps) {}

  private get tenantId(): string {
    return this.deps.tenantDb.tenantId;
  }

  /** A presigned POST for one upload, under a key the server chooses. */
  async uploadUrl() {
    const s3Key = newUploadKey(this.tenantId);
    const { url, fields } = await presignUpload(this.deps.s3, this.deps.bucket, s3Key);
    return { url, fields, s3Key, expiresIn: UPLOAD_URL_TTL_SECONDS, maxBytes: MAX_UPLOAD_BYTES };
  }

  /** What importing the uploaded file would do, row by row, without writing anything. */
  async validateUpload(s3Key: string, rawConfig?: Record<string, unknown>): Promise<UploadValidation> {
    checkUploadKey(this.tenantId, s3Key);
    const config = allowedConfig(rawConfig);
    await checkUploadedObject(this.deps.s3, this.deps.bucket, s3Key);
    const object = await openObject(this.deps.s3, this.deps.bucket, s3Key);
    let parsed;
    try {
      parsed = await readProductsFrom(object, layoutFor(config.format), config.mappings);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return {
        rows: 0,
        validRows: 0,
        invalidRows: [],
        exceedsRowCap: false,
        exceedsVariantCap: false,
        structuralErrors: [err.message],
      };
    }
    // over a cap the import refuses the whole file (import.workflow.ts): say so, with its words,
    // without planning rows none of which will be written. Rows count as the import counts them:
    // every record, blank ones too.
    const exceedsRowCap = parsed.records > ASYNC_LIMITS.maxRows;
    const exceedsVariantCap = parsed.parsed.some((p) => p.rows.length > ASYNC_LIMITS.maxVariantsPerProduct);
    if (exceedsRowCap || exceedsVariantCap)
      return {
        rows: parsed.rows,
        validRows: 0,
        invalidRows: [],
        exceedsRowCap,
        exceedsVariantCap,
        structuralErrors: [
          ...(exceedsRowCap ? [`the file has ${parsed.records} rows, over the cap`] : []),
          ...(exceedsVariantCap ? ['a product has more rows (variants) than the cap'] : []),
        ],
      };
    // validation only: new products are checked as creations whatever createIfNotExists says
    const plans = await planImport(this.deps.tenantDb, parsed.parsed, {
      ...config,
      createIfNotExists: true,
      planOnly: true,
    });
    const byRow = new Map<number, { row: number; sku: string | null; errors: string[] }>();
    for (const e of countPlans(plans).errors)
      byRow.set(e.row, { row: e.row, sku: e.sku, errors: e.message.split('; ') });
    return {
      rows: parsed.rows,
      validRows: parsed.rows - byRow.size,
      invalidRows: [...byRow.values()],
      exceedsRowCap: false,
      exceedsVariantCap: false,
      structuralErrors: [],
    };
  }

  /** Queues the import of an uploaded file; `config` as importConfigSchema validated it (other keys are dropped). */
  async startImport(
    req: StartRequest & { s3Key: string; config?: Record<string, unknown>; actor: string },
  ): Promise<{ jobId: string }> {
    const { tenantDb, jobs } = this.deps;
    const started = await jobs.startedBy(tenantDb, 'csv-import', req.idempotencyKey);
    if (started) return { jobId: started._id }; // a retry, even once its upload is gone
    const { s3Key, actor } = req;
    checkUploadKey(this.tenantId, s3Key);
    const config = allowedConfig(req.config);
    await checkUploadedObject(this.deps.s3, this.deps.bucket, s3Key);
    const { job } = await jobs.start(tenantDb, {
      type: 'csv-import',
      prefix: 'csvimp',
      workflow: csvImport,
      idempotencyKey: req.idempotencyKey,
      beforeStart: () => checkJobRate(tenantDb, jobs),
      // column names become no document keys ('.' and a leading '$' are refused by the database)
      input: { s3Key, config: config.mappings ? { ...config, mappings: mappingPairs(config.mappings) } : config },
      workflowInput: (jobId) => ({
        tenantId: this.tenantId,
        jobId,
        s3Key,
        config,
        actor,
        operationId: `bop_${jobId}`,
        chunkSize: ASYNC_LIMITS.chunkSize,
      }),
    });
    return { jobId: job._id };
  }

  /** An import's status: its record once it ended, else the workflow's live counters when it answers at once. */
  async importStatus(jobId: string): Promise<ImportJobStatus> {
    const job = await this.job(jobId, 'csv-import');
    let progress = job.result as (ImportProgress & { errorReportKey?: string | null }) | null;
    // no result yet: the workflow's counters, if it answers at once (a read never waits on a worker)
    progress ??= await queryOrNull(this.deps.temporal, job.workflowId, importProgress);
    const p = progress ?? {
      status: job.status,
      totalRows: 0,
      processedRows: 0,
      created: 0,
      updated: 0,
      failed: 0,
      skipped: 0,
      percent: 0,
    };
    const finished = isFinished(job.status);
    const reportKey = (progress as { errorReportKey?: string | null } | null)?.errorReportKey;
    return {
      jobId: job._id,
      // the workflow counts itself completed just before it records so: still processing until then
      status: finished ? job.status : p.status === 'completed' ? 'processing' : p.status,
      percent: p.percent,
      processedRows: p.processedRows,
      totalRows: p.totalRows,
      created: p.created,
      updated: p.updated,
      failed: p.failed,
      skipped: p.skipped,
      errorReportUrl:
        finished && reportKey
          ? await presignDownload(this.deps.s3, this.deps.bucket, reportKey, `${job._id}-errors.csv`)
          : null,
      operationId:
        finished && (await new BulkOperations(this.deps.tenantDb).get(`bop_${job._id}`)) ? `bop_${job._id}` : null,
      ...(job.error ? { error: job.error } : {}),
    };
  }

  /** Queues an export of the selection in a layout. */
  async startExport(req: StartRequest & Selection & { format: string }): Promise<{ jobId: string }> {
    const { tenantDb, jobs } = this.deps;
    // The export activity's own checks, before a job exists (the route's schema refuses these
    // already). They read only the request, so unlike an import's no key lookup comes first: a
    // retry passes them again, and its repeated key then answers the first job from the record's
    // unique index (Jobs.start), whatever the tenant's allowance is by then.
    layoutFor(req.format);
    selectionFilter(req);
    const { job } = await jobs.start(tenantDb, {
      type: 'csv-export',
      prefix: 'csvexp',
      workflow: csvExport,
      idempotencyKey: req.idempotencyKey,
      beforeStart: () => checkJobRate(tenantDb, jobs),
      input: { format: req.format, selection: req.selection },
      workflowInput: (jobId) => ({
        tenantId: this.tenantId,
        jobId,
        format: req.format,
        selection: req.selection,
        productIds: req.productIds,
        filters: req.filters,
      }),
    });
    return { jobId: job._id };
  }

  /** An export's status, from its record (the activity writes its progress there); the link once it is done. */
  async exportStatus(jobId: string): Promise<ExportJobStatus> {
    const job = await this.job(jobId, 'csv-export');
    const r = (job.result ?? {}) as Partial<ExportResult>;
    const total = r.totalRows ?? 0;
    const done = job.status === 'completed';
    return {
      jobId: job._id,
      status: job.status,
      percent: done ? 100 : total ? Math.floor(((r.processedRows ?? 0) / total) * 100) : 0,
      processedRows: r.processedRows ?? 0,
      totalRows: total,
      count: r.count ?? 0,
      ...(done && r.key
        ? { downloadUrl: await presignDownload(this.deps.s3, this.deps.bucket, r.key, `products-${job._id}.csv`) }
        : {}),
      ...(job.error ? { error: job.error } : {}),
    };
  }

  /** The tenant's job of this type, settled (a workflow that ended unrecorded is recorded failed); 404 otherwise. */
  private async job(jobId: string, type: CsvJobType): Promise<JobRecord> {
    const job = await this.deps.jobs.get(this.deps.tenantDb, jobId, type);
    if (!job) throw new AppError(404, 'not-found', `No job ${jobId}`);
    return this.deps.jobs.settle(this.deps.tenantDb, job);
  }
}

/** Mappings as the job record keeps them: `[{column, to}]`, whatever the client named its columns. */
function mappingPairs(mappings: object): { column: string; to: string }[] {
  return Object.entries(mappings as Record<string, string>).map(([column, to]) => ({ column, to }));
}

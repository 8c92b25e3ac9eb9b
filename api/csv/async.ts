import { defineRoutes } from '../route';
import { tenantOf, type AppContext } from '../context';
import { AppError } from '../../shared/errors/catalog';
import { newId } from '../../shared/ids';
import { jobs as jobRecords, type JobRecord } from '../../shared/jobs/collection';
import { checkFieldsToUpdate, planImport, countPlans } from '../../shared/csv/import';
import {
  ASYNC_LIMITS,
  checkUploadedObject,
  checkUploadKey,
  CONFIG_ALLOWLIST,
  JOB_RATE,
  presignDownload,
  openObject,
  uploadPrefix,
  type ImportConfig,
} from '../../shared/csv/jobs';
import { layoutFor } from '../../shared/csv/layouts/index';
import { FORBIDDEN_KEYS, readProductsFrom } from '../../shared/csv/read';
import { MAX_UPLOAD_BYTES, presignUpload, UPLOAD_URL_TTL_SECONDS } from '../../shared/s3/client';
import { compile, summarize, toFieldErrors, type JsonSchema } from '../../shared/validation';
import {
  csvExport,
  csvImport,
  importProgress,
  type ExportResult,
  type ImportProgress,
} from '../../shared/csv/messages';
import { selectionFilter, type Selection } from '../../shared/csv/select';
import { STATUSES } from '../../shared/products/schema';

/** Most productIds an async export takes. */
export const MAX_EXPORT_IDS = 5000;

const configSchema: JsonSchema = {
  type: 'object',
  additionalProperties: true, // keys outside the allowlist are dropped, not refused (caps are the server's)
  properties: {
    format: { type: 'string' },
    mappings: {
      type: 'object',
      propertyNames: { not: { enum: FORBIDDEN_KEYS } },
      additionalProperties: { type: 'string', minLength: 1 },
    },
    fieldsToUpdate: { type: 'array', items: { type: 'string' } },
    skipErrorRows: { type: 'boolean', default: true },
    operationName: { type: 'string', maxLength: 200 },
    createIfNotExists: { type: 'boolean', default: false },
    enableSideEffects: { type: 'boolean', default: false },
  },
};

/** The config as the server accepts it: allowlisted keys, checked types, server caps. */
export function sanitizeConfig(raw: unknown): ImportConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new AppError(400, 'bad-request/invalid-config', 'config must be an object', { field: 'config' });
  const picked: Record<string, unknown> = {};
  for (const key of CONFIG_ALLOWLIST) if (key in raw) picked[key] = (raw as Record<string, unknown>)[key];
  const validate = compile(configSchema);
  if (!validate(picked)) {
    const fe = toFieldErrors(validate.errors, 'config');
    throw new AppError(400, 'bad-request/invalid-config', `Invalid config: ${summarize(fe)}`, {
      field: fe[0]?.field,
      fieldErrors: fe,
    });
  }
  const config = picked as unknown as ImportConfig;
  checkFieldsToUpdate(config.fieldsToUpdate); // as the sync import: a misspelt field would skip every row
  config.format ??= 'native';
  layoutFor(config.format, 'bad-request/invalid-config');
  return config;
}

/** 429 when the tenant has too many async jobs running, or started too many this hour. */
async function checkRate(ctx: AppContext): Promise<void> {
  const col = tenantOf(ctx).tenantDb.collection(jobRecords);
  const types = ['csv-import', 'csv-export'];
  const runningFilter = { type: { $in: types }, status: { $in: ['queued', 'processing'] as JobRecord['status'][] } };
  const [runningNow, lastHour] = await Promise.all([
    col.countDocuments(runningFilter),
    col.countDocuments({ type: { $in: types }, createdAt: { $gte: new Date(Date.now() - 3600_000) } }),
  ]);
  let running = runningNow;
  if (running >= JOB_RATE.concurrent) {
    // jobs whose workflow ended unrecorded (Jobs.settle) do not hold a slot
    const settled = await Promise.all(
      (await col.find(runningFilter).toArray()).map((job) => ctx.deps.jobs.settle(tenantOf(ctx).tenantDb, job)),
    );
    running = settled.filter((job) => job.status === 'queued' || job.status === 'processing').length;
  }
  if (running >= JOB_RATE.concurrent) {
    throw new AppError(
      429,
      'rate-limited',
      `${running} async jobs are running (limit ${JOB_RATE.concurrent}); retry when one ends`,
      {},
      { 'Retry-After': '30' },
    );
  }
  if (lastHour >= JOB_RATE.perHour) {
    throw new AppError(
      429,
      'rate-limited',
      `${lastHour} async jobs were started in the last hour (limit ${JOB_RATE.perHour})`,
      {},
      { 'Retry-After': '600' },
    );
  }
}

export async function startAsyncImport(ctx: AppContext, s3Key: string, rawConfig: unknown): Promise<void> {
  const { principal, tenantDb } = tenantOf(ctx);
  checkUploadKey(tenantDb.tenantId, s3Key);
  const config = sanitizeConfig(rawConfig);
  await checkUploadedObject(ctx.deps.s3, ctx.deps.config.s3.bucket, s3Key);
  const idempotencyKey = ctx.get('idempotency-key') || undefined;
  // a retried start (same Idempotency-Key) answers with its job, whatever the rate
  const repeated =
    idempotencyKey && (await tenantDb.collection(jobRecords).findOne({ type: 'csv-import', idempotencyKey }));
  if (!repeated) await checkRate(ctx);
  const { job } = await ctx.deps.jobs.start(tenantDb, {
    type: 'csv-import',
    prefix: 'csvimp',
    workflow: csvImport,
    idempotencyKey,
    input: { s3Key, config },
    workflowInput: (jobId) => ({
      tenantId: tenantDb.tenantId,
      jobId,
      s3Key,
      config,
      actor: principal.keyId,
      operationId: `bop_${jobId}`,
      chunkSize: ASYNC_LIMITS.chunkSize,
    }),
  });
  ctx.status = 202;
  ctx.body = { jobId: job._id };
}

async function jobOf(ctx: AppContext, type: string): Promise<JobRecord> {
  const job = await ctx.deps.jobs.get(tenantOf(ctx).tenantDb, ctx.params.jobId, type);
  if (!job) throw new AppError(404, 'not-found', `No job ${ctx.params.jobId}`);
  return ctx.deps.jobs.settle(tenantOf(ctx).tenantDb, job);
}

export const csvAsyncRoutes = defineRoutes([
  {
    method: 'post',
    path: '/products/bulk/csv/upload-url',
    summary: `A presigned POST for one CSV upload: ${UPLOAD_URL_TTL_SECONDS} s, 1 byte to ${MAX_UPLOAD_BYTES} bytes, server-side encryption enforced, key chosen by the server`,
    tags: ['csv'],
    auth: { scopes: ['products:import'] },
    responses: {
      200: {
        description:
          '`{url, fields, s3Key, expiresIn, maxBytes}`: POST the file as multipart/form-data with `fields` then `file`',
      },
    },
    handler: async (ctx) => {
      const { tenantDb } = tenantOf(ctx);
      const s3Key = `${uploadPrefix(tenantDb.tenantId)}${newId('upl')}.csv`;
      const { url, fields } = await presignUpload(ctx.deps.s3, ctx.deps.config.s3.bucket, s3Key);
      ctx.body = { url, fields, s3Key, expiresIn: UPLOAD_URL_TTL_SECONDS, maxBytes: MAX_UPLOAD_BYTES };
    },
  },
  {
    method: 'post',
    path: '/products/bulk/csv/validate',
    summary: 'Check an uploaded CSV without importing it',
    tags: ['csv'],
    invalid: { code: 'bad-request' },
    auth: { scopes: ['products:import'] },
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['s3Key'],
      properties: { s3Key: { type: 'string', minLength: 1 }, config: { type: 'object' } },
    },
    responses: {
      200: {
        description:
          '`{rows, validRows, invalidRows[{row, sku, errors[]}], exceedsRowCap, exceedsVariantCap, structuralErrors[]}`',
      },
    },
    handler: async (ctx) => {
      const { tenantDb } = tenantOf(ctx);
      const body = ctx.request.body as { s3Key: string; config?: unknown };
      checkUploadKey(tenantDb.tenantId, body.s3Key);
      const config = sanitizeConfig(body.config ?? {});
      await checkUploadedObject(ctx.deps.s3, ctx.deps.config.s3.bucket, body.s3Key);
      const object = await openObject(ctx.deps.s3, ctx.deps.config.s3.bucket, body.s3Key);
      let parsed;
      try {
        parsed = await readProductsFrom(object, layoutFor(config.format), config.mappings);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        ctx.body = {
          rows: 0,
          validRows: 0,
          invalidRows: [],
          exceedsRowCap: false,
          exceedsVariantCap: false,
          structuralErrors: [err.message],
        };
        return;
      }
      // validation only: new products are checked as creations whatever createIfNotExists says
      const plans = await planImport(tenantDb, parsed.parsed, { ...config, createIfNotExists: true });
      const { errors } = countPlans(plans);
      const byRow = new Map<number, { row: number; sku: string | null; errors: string[] }>();
      for (const e of errors) byRow.set(e.row, { row: e.row, sku: e.sku, errors: e.message.split('; ') });
      ctx.body = {
        rows: parsed.rows,
        validRows: parsed.rows - byRow.size,
        invalidRows: [...byRow.values()],
        exceedsRowCap: parsed.rows > ASYNC_LIMITS.maxRows,
        exceedsVariantCap: parsed.parsed.some((p) => p.rows.length > ASYNC_LIMITS.maxVariantsPerProduct),
        structuralErrors: [],
      };
    },
  },
  {
    method: 'get',
    path: '/products/bulk/csv/import/:jobId',
    summary: 'Status of an async import, with live progress',
    tags: ['csv'],
    auth: { scopes: ['products:read'] },
    responses: {
      200: {
        description:
          '`{jobId, status, percent, processedRows, totalRows, created, updated, failed, skipped, errorReportUrl}`',
      },
      404: { description: 'not-found' },
    },
    handler: async (ctx) => {
      const job = await jobOf(ctx, 'csv-import');
      let progress = job.result as (ImportProgress & { errorReportKey?: string | null }) | null;
      if (!progress) {
        // running: ask the workflow
        progress = await ctx.deps.temporal.workflow
          .getHandle(job.workflowId)
          .query(importProgress)
          .catch(() => null);
      }
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
      const finished = ['completed', 'failed', 'cancelled'].includes(job.status);
      const reportKey = (progress as { errorReportKey?: string | null } | null)?.errorReportKey;
      ctx.body = {
        jobId: job._id,
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
            ? await presignDownload(ctx.deps.s3, ctx.deps.config.s3.bucket, reportKey, `${job._id}-errors.csv`)
            : null,
        ...(job.error ? { error: job.error } : {}),
      };
    },
  },
  {
    method: 'post',
    path: '/products/bulk/csv/export',
    summary: `Export products as CSV, asynchronously (a job; at most ${MAX_EXPORT_IDS} productIds)`,
    tags: ['csv'],
    invalid: { code: 'bad-request' },
    auth: { scopes: ['products:export'] },
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['format', 'selection'],
      properties: {
        format: { type: 'string' },
        selection: { type: 'string', description: 'selected, filter or all' },
        productIds: { type: 'array', items: { type: 'string', minLength: 1 }, description: 'ids or SKUs' },
        filters: {
          type: 'object',
          additionalProperties: false,
          properties: {
            q: { type: 'string' },
            status: { type: 'array', items: { type: 'string', enum: STATUSES } },
            category: { type: 'string' },
            brands: { type: 'array', items: { type: 'string' } },
            minPrice: { type: 'number', minimum: 0 },
            maxPrice: { type: 'number', minimum: 0 },
            tags: { type: 'array', items: { type: 'string' } },
            channelId: { type: 'string' },
          },
        },
      },
    },
    responses: {
      202: { description: '`{jobId}`' },
      400: {
        description: 'unsupported-format, invalid-selection, missing-products, missing-filters, too-many-products',
      },
    },
    handler: async (ctx) => {
      const { tenantDb } = tenantOf(ctx);
      const body = ctx.request.body as unknown as Selection & { format: string };
      layoutFor(body.format);
      if ((body.productIds?.length ?? 0) > MAX_EXPORT_IDS)
        throw new AppError(400, 'too-many-products', `At most ${MAX_EXPORT_IDS} productIds`, { field: 'productIds' });
      selectionFilter(body); // the selection's own errors, before a job exists
      const idempotencyKey = ctx.get('idempotency-key') || undefined;
      const repeated =
        idempotencyKey && (await tenantDb.collection(jobRecords).findOne({ type: 'csv-export', idempotencyKey }));
      if (!repeated) await checkRate(ctx);
      const { job } = await ctx.deps.jobs.start(tenantDb, {
        type: 'csv-export',
        prefix: 'csvexp',
        workflow: csvExport,
        idempotencyKey,
        input: { format: body.format, selection: body.selection },
        workflowInput: (jobId) => ({
          tenantId: tenantDb.tenantId,
          jobId,
          format: body.format,
          selection: body.selection,
          productIds: body.productIds,
          filters: body.filters,
        }),
      });
      ctx.status = 202;
      ctx.body = { jobId: job._id };
    },
  },
  {
    method: 'get',
    path: '/products/bulk/csv/export/:jobId',
    summary: 'Status of an async export; downloadUrl (a time-limited link that needs no key) once finished',
    tags: ['csv'],
    auth: { scopes: ['products:read'] },
    responses: {
      200: { description: '`{jobId, status, percent, processedRows, totalRows, count, downloadUrl}`' },
      404: { description: 'not-found' },
    },
    handler: async (ctx) => {
      const job = await jobOf(ctx, 'csv-export');
      const r = (job.result ?? {}) as Partial<ExportResult>;
      const total = r.totalRows ?? 0;
      const done = job.status === 'completed';
      ctx.body = {
        jobId: job._id,
        status: job.status,
        percent: done ? 100 : total ? Math.floor(((r.processedRows ?? 0) / total) * 100) : 0,
        processedRows: r.processedRows ?? 0,
        totalRows: total,
        count: r.count ?? 0,
        ...(done && r.key
          ? {
              downloadUrl: await presignDownload(
                ctx.deps.s3,
                ctx.deps.config.s3.bucket,
                r.key,
                `products-${job._id}.csv`,
              ),
            }
          : {}),
        ...(job.error ? { error: job.error } : {}),
      };
    },
  },
]);

import { defineRoutes } from '../route';
import { MAX_EXPORT_IDS } from '../../shared/csv/limits';
import type { Selection } from '../../shared/csv/select';
import { MAX_UPLOAD_BYTES, UPLOAD_URL_TTL_SECONDS } from '../../shared/s3/client';
import { csvJobs } from './context';
import { idempotencyKeyOf, validBody } from '../context';
import { asyncExportBody, exportInvalid, validateBody, validateInvalid } from './schemas';

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
      ctx.body = await csvJobs(ctx).uploadUrl();
    },
  },
  {
    method: 'post',
    path: '/products/bulk/csv/validate',
    // an s3Key with half of a surrogate pair is 403 forbidden/invalid-s3-key, as any key no upload made
    keepsIllFormedText: ['s3Key'],
    summary: 'Check an uploaded CSV without importing it',
    tags: ['csv'],
    invalid: validateInvalid,
    auth: { scopes: ['products:import'] },
    body: validateBody,
    responses: {
      200: {
        description:
          '`{rows, validRows, invalidRows[{row, sku, errors[]}], exceedsRowCap, exceedsVariantCap, structuralErrors[]}`',
      },
      404: { description: 'not-found/s3-object: no uploaded file under s3Key' },
    },
    handler: async (ctx) => {
      const body = validBody<{ s3Key: string; config?: Record<string, unknown> }>(ctx);
      ctx.body = await csvJobs(ctx).validateUpload(body.s3Key, body.config);
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
          '`{jobId, status, percent, processedRows, totalRows, created, updated, failed, skipped, errorReportUrl, operationId}`: operationId is the bulk operation that rolls the import back (`bop_<jobId>`), once it ended having made one',
      },
      404: { description: 'not-found' },
    },
    handler: async (ctx) => {
      ctx.body = await csvJobs(ctx).importStatus(ctx.params.jobId);
    },
  },
  {
    method: 'post',
    path: '/products/bulk/csv/export',
    idempotency: 'bound',
    summary: `Export products as CSV, asynchronously (a job; at most ${MAX_EXPORT_IDS} productIds)`,
    tags: ['csv'],
    invalid: exportInvalid,
    auth: { scopes: ['products:export'] },
    body: asyncExportBody,
    responses: {
      202: { description: '`{jobId}`' },
      400: {
        description: 'unsupported-format, invalid-selection, missing-products, missing-filters, too-many-products',
      },
      429: { description: 'rate-limited: too many CSV jobs at once (Retry-After)' },
    },
    handler: async (ctx) => {
      const body = validBody<Selection & { format: string }>(ctx);
      ctx.body = await csvJobs(ctx).startExport({ ...body, idempotencyKey: idempotencyKeyOf(ctx) });
      ctx.status = 202;
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
      ctx.body = await csvJobs(ctx).exportStatus(ctx.params.jobId);
    },
  },
]);

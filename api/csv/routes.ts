import { defineRoutes } from '../route';
import { tenantOf, type AppContext } from '../context';
import { SYNC_EXPORT_MAX, SYNC_MAX_BYTES } from '../../shared/csv/limits';
import type { Selection } from '../../shared/csv/select';
import type { CsvFile, CsvSync } from '../../shared/csv/sync-service';
import { csvJobs, csvSync } from './context';
import { idempotencyKeyOf, validBody } from '../context';
import {
  bulkEditPreviewBody,
  bulkEditPreviewInvalid,
  exportInvalid,
  importBody,
  importInvalid,
  previewBody,
  previewInvalid,
  syncExportBody,
  templateBody,
  templateInvalid,
} from './schemas';

/**
 * The JSON body that carries sync content: escaping makes it larger than the CSV (quotes and line
 * breaks take two bytes, a non-ASCII character sent as \uXXXX, as Python's json does by
 * default, up to three times its UTF-8), so a body three times the content (and some) still
 * reaches the handler, which answers content over SYNC_MAX_BYTES with bad-request/file-too-large.
 */
const SYNC_BODY_LIMIT = SYNC_MAX_BYTES * 3 + 512 * 1024;

function attach(ctx: AppContext, file: CsvFile): void {
  ctx.set('Content-Type', 'text/csv; charset=utf-8');
  ctx.set('Content-Disposition', `attachment; filename="${file.filename}"`);
  ctx.body = file.text;
}

interface ImportBody {
  s3Key?: string;
  config?: Record<string, unknown>;
  content?: string;
  format?: string;
  mappings?: Record<string, string>;
  createIfNotExists: boolean;
  skipErrorRows: boolean;
  batchSize: number;
  operationName?: string;
  fieldsToUpdate?: string[];
}

export const csvRoutes = defineRoutes([
  {
    method: 'post',
    path: '/products/bulk/csv/template',
    summary: 'An empty CSV template (the header row) for a format',
    tags: ['csv'],
    invalid: templateInvalid,
    auth: { scopes: [] },
    body: templateBody,
    responses: { 200: { description: 'text/csv, as an attachment', contentType: 'text/csv' } },
    handler: (ctx) => {
      attach(ctx, csvSync(ctx).template(validBody<{ format: string }>(ctx).format));
    },
  },
  {
    method: 'post',
    path: '/products/bulk/csv/preview',
    summary: 'Import dry run: what each product of the CSV would do; persists nothing',
    tags: ['csv'],
    invalid: previewInvalid,
    auth: { scopes: ['products:import'] },
    body: previewBody,
    bodyLimitBytes: SYNC_BODY_LIMIT,
    responses: {
      200: {
        description:
          '`{toCreate[{sku, rows}], toUpdate[{sku, rows, changes}], toSkip[{sku, rows, reason}], errors[{row, sku, message}], summary}`',
      },
    },
    handler: async (ctx) => {
      ctx.body = await csvSync(ctx).preview(validBody<Parameters<CsvSync['preview']>[0]>(ctx));
    },
  },
  {
    method: 'post',
    path: '/products/bulk/csv/bulk-edit/preview',
    summary: 'The preview required before applying a CSV bulk edit: each product with its changes; persists nothing',
    tags: ['csv'],
    invalid: bulkEditPreviewInvalid,
    auth: { scopes: ['products:update'] },
    body: bulkEditPreviewBody,
    bodyLimitBytes: SYNC_BODY_LIMIT,
    responses: {
      200: {
        description:
          '`{products[{sku, action, changes, rows}], invalidRows[{row, sku, message}], summary{toUpdate, toCreate, invalid}}`',
      },
    },
    handler: async (ctx) => {
      ctx.body = await csvSync(ctx).bulkEditPreview(validBody<Parameters<CsvSync['bulkEditPreview']>[0]>(ctx));
    },
  },
  {
    method: 'post',
    path: '/products/bulk/csv/import',
    // an s3Key with half of a surrogate pair is 403 forbidden/invalid-s3-key, as any key no upload made
    keepsIllFormedText: ['s3Key'],
    // a sync import's answer is kept for its retry; an async one is its job, found by the key
    idempotency: (body) => (typeof body.content === 'string' ? 'stored' : 'bound'),
    summary: 'Import products from CSV: `content` runs synchronously (200/207), `s3Key` queues a job (202)',
    description:
      'Sync: `{totalProcessed, created, updated, skipped, errors[{row, sku, message}]}`, counted in rows; 207 when any row failed. Inspect errors[] even on 2xx. Every import that changes products is recorded as a bulk operation that can be rolled back.',
    tags: ['csv'],
    invalid: importInvalid,
    auth: { scopes: ['products:import'] },
    body: importBody,
    bodyLimitBytes: SYNC_BODY_LIMIT,
    responses: {
      200: { description: 'all rows fine' },
      207: { description: 'some rows failed: see errors[]' },
      202: { description: '`{jobId}`' },
      404: { description: 'not-found/s3-object: no uploaded file under s3Key' },
      429: { description: 'rate-limited: too many CSV jobs at once (Retry-After)' },
    },
    handler: async (ctx) => {
      const body = validBody<ImportBody>(ctx);
      const actor = tenantOf(ctx).principal.keyId;
      if (body.s3Key) {
        ctx.body = await csvJobs(ctx).startImport({
          s3Key: body.s3Key,
          config: body.config,
          actor,
          idempotencyKey: idempotencyKeyOf(ctx),
        });
        ctx.status = 202;
        return;
      }
      // the schema requires content when there is no s3Key
      const result = await csvSync(ctx).importContent({ ...body, content: body.content!, actor });
      ctx.status = result.errors.length ? 207 : 200;
      ctx.body = result;
    },
  },
  {
    method: 'post',
    path: '/products/export-csv',
    summary: `Export products as CSV, synchronously (at most ${SYNC_EXPORT_MAX} products; larger exports: POST /products/bulk/csv/export)`,
    tags: ['csv'],
    invalid: exportInvalid,
    auth: { scopes: ['products:export'] },
    body: syncExportBody,
    responses: {
      200: { description: 'text/csv, as an attachment', contentType: 'text/csv' },
      404: { description: 'not-found/no-products' },
    },
    handler: async (ctx) => {
      attach(ctx, await csvSync(ctx).exportFile(validBody<Selection & { format: string }>(ctx)));
    },
  },
]);

import { defineRoutes } from '../route';
import { tenantOf, type AppContext } from '../context';
import { AppError } from '../../shared/errors/catalog';
import { applyImport, checkFieldsToUpdate, countPlans, planImport, type Plan } from '../../shared/csv/import';
import { FORMATS, layoutFor } from '../../shared/csv/layouts/index';
import { toCsvText } from '../../shared/csv/parse';
import { FORBIDDEN_KEYS, readProducts } from '../../shared/csv/read';
import { products } from '../../shared/products/collections';
import { presentProduct } from '../../shared/products/present';
import type { ProductFilters } from '../../shared/products/query';
import { selectionFilter, type Selection } from '../../shared/csv/select';
import { STATUSES } from '../../shared/products/schema';
import type { ProductDoc } from '../../shared/products/types';
import type { JsonSchema } from '../../shared/validation';
import { startAsyncImport } from './async';

/** The synchronous import takes CSV text in the body, up to this size; larger files go through the async flow. */
export const SYNC_MAX_BYTES = 2 * 1024 * 1024;
/**
 * The JSON body that carries sync content: escaping makes it larger than the CSV (quotes and line
 * breaks take two bytes, a non-ASCII character sent as \uXXXX, as Python's json does by
 * default, up to three times its UTF-8), so a body three times the content (and some) still
 * reaches the handler, which answers content over SYNC_MAX_BYTES with bad-request/file-too-large.
 */
const SYNC_BODY_LIMIT = SYNC_MAX_BYTES * 3 + 512 * 1024;
export const SYNC_MAX_ROWS = 5000;
/** The synchronous export answers at most this many products; larger exports use POST /products/bulk/csv/export. */
export const SYNC_EXPORT_MAX = 1000;

const mappings: JsonSchema = {
  type: 'object',
  propertyNames: { not: { enum: FORBIDDEN_KEYS } },
  additionalProperties: { type: 'string', minLength: 1, maxLength: 200 },
  description: "CSV column → the layout's column name; `__proto__`, `constructor`, `prototype` are refused",
};
const format: JsonSchema = { type: 'string', description: `one of ${FORMATS.join(', ')}` };
const fieldsToUpdate: JsonSchema = {
  type: 'array',
  items: { type: 'string', minLength: 1 },
  maxItems: 100,
  description: 'only these product fields change on existing products',
};

const importBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    s3Key: { type: 'string', description: 'async flow: the uploaded object (content is then ignored)' },
    config: {
      type: 'object',
      description:
        'async flow: format, mappings, fieldsToUpdate, skipErrorRows, operationName, createIfNotExists, enableSideEffects',
    },
    content: {
      type: 'string',
      description: `sync flow: the CSV text (at most ${SYNC_MAX_BYTES} bytes and ${SYNC_MAX_ROWS} rows)`,
    },
    format,
    mappings,
    createIfNotExists: { type: 'boolean', default: false },
    skipErrorRows: { type: 'boolean', default: true },
    batchSize: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
    operationName: { type: 'string', maxLength: 200 },
    fieldsToUpdate,
  },
};

const previewBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['content'],
  properties: {
    content: { type: 'string', minLength: 1 },
    format,
    mappings,
    createIfNotExists: { type: 'boolean', default: false },
    fieldsToUpdate,
  },
};

const exportBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['format', 'selection'],
  properties: {
    format,
    selection: { type: 'string' },
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
};

function checkSyncSize(content: string): void {
  if (Buffer.byteLength(content) > SYNC_MAX_BYTES) {
    throw new AppError(
      400,
      'bad-request/file-too-large',
      `content is over the synchronous limit of ${SYNC_MAX_BYTES} bytes: upload the file (POST /products/bulk/csv/upload-url) and import it with s3Key (async)`,
      { field: 'content' },
    );
  }
}

function read(body: { content: string; format?: string; mappings?: Record<string, string> }) {
  checkSyncSize(body.content);
  const layout = layoutFor(body.format);
  const result = readProducts(body.content, layout, body.mappings);
  if (result.rows > SYNC_MAX_ROWS) {
    throw new AppError(
      400,
      'bad-request/file-too-large',
      `${result.rows} rows are over the synchronous limit of ${SYNC_MAX_ROWS}: use the async flow (upload-url, then import with s3Key)`,
      {
        field: 'content',
      },
    );
  }
  return result;
}

const listOf = (plans: Plan[], kind: Plan['kind']) => plans.filter((p) => p.kind === kind);

/** Resolves an export selection to (at most max + 1) products. */
export async function selectProducts(ctx: AppContext, body: Selection, max: number): Promise<ProductDoc[]> {
  return (await tenantOf(ctx)
    .tenantDb.collection(products)
    .find(selectionFilter(body), { sort: { sku: 1 }, limit: max + 1 })
    .toArray()) as ProductDoc[];
}

export function csvOf(docs: ProductDoc[], formatName: string): string {
  const layout = layoutFor(formatName);
  return toCsvText(
    layout.columns,
    docs.flatMap((d) => layout.toRecords(presentProduct(d))),
  );
}

export const csvRoutes = defineRoutes([
  {
    method: 'post',
    path: '/products/bulk/csv/template',
    summary: 'An empty CSV template (the header row) for a format',
    tags: ['csv'],
    invalid: { code: 'bad-request' },
    auth: { scopes: [] },
    body: { type: 'object', additionalProperties: false, required: ['format'], properties: { format } },
    responses: { 200: { description: 'text/csv, as an attachment', contentType: 'text/csv' } },
    handler: (ctx) => {
      const { format: f } = ctx.request.body as { format: string };
      const layout = layoutFor(f, 'bad-request');
      ctx.set('Content-Type', 'text/csv; charset=utf-8');
      ctx.set('Content-Disposition', `attachment; filename="products-template-${layout.format}.csv"`);
      ctx.body = toCsvText(layout.columns, []);
    },
  },
  {
    method: 'post',
    path: '/products/bulk/csv/preview',
    summary: 'Import dry run: what each product of the CSV would do; persists nothing',
    tags: ['csv'],
    invalid: { code: 'bad-request' },
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
      const body = ctx.request.body as {
        content: string;
        format?: string;
        mappings?: Record<string, string>;
        createIfNotExists: boolean;
        fieldsToUpdate?: string[];
      };
      checkFieldsToUpdate(body.fieldsToUpdate);
      const { parsed } = read(body);
      const plans = await planImport(tenantOf(ctx).tenantDb, parsed, body);
      const { errors, ...summary } = countPlans(plans);
      ctx.body = {
        toCreate: listOf(plans, 'create').map((p) => ({ sku: p.parsed.sku, rows: p.parsed.rows })),
        toUpdate: listOf(plans, 'update').map((p) => ({
          sku: p.parsed.sku,
          rows: p.parsed.rows,
          changes: p.kind === 'update' ? p.changed : [],
        })),
        toSkip: listOf(plans, 'skip').map((p) => ({
          sku: p.parsed.sku,
          rows: p.parsed.rows,
          reason: p.kind === 'skip' ? p.reason : '',
        })),
        errors,
        summary,
      };
    },
  },
  {
    method: 'post',
    path: '/products/bulk/csv/bulk-edit/preview',
    summary: 'The preview required before applying a CSV bulk edit: each product with its changes; persists nothing',
    tags: ['csv'],
    invalid: { code: 'bad-request' },
    auth: { scopes: ['products:update'] },
    body: {
      ...previewBody,
      properties: {
        content: { type: 'string', minLength: 1 },
        format,
        mappings,
        createIfNotExists: { type: 'boolean', default: false },
      },
    },
    bodyLimitBytes: SYNC_BODY_LIMIT,
    responses: {
      200: {
        description:
          '`{products[{sku, action, changes, rows}], invalidRows[{row, sku, message}], summary{toUpdate, toCreate, invalid}}`',
      },
    },
    handler: async (ctx) => {
      const body = ctx.request.body as {
        content: string;
        format?: string;
        mappings?: Record<string, string>;
        createIfNotExists: boolean;
      };
      const { parsed } = read(body);
      const plans = await planImport(tenantOf(ctx).tenantDb, parsed, body);
      const { errors } = countPlans(plans);
      ctx.body = {
        products: plans
          .filter((p) => p.kind !== 'error')
          .map((p) => ({
            sku: p.parsed.sku,
            rows: p.parsed.rows,
            action: p.kind,
            changes: p.kind === 'update' ? p.changed : [],
            ...(p.kind === 'skip' ? { reason: p.reason } : {}),
          })),
        invalidRows: errors,
        summary: {
          toUpdate: listOf(plans, 'update').length,
          toCreate: listOf(plans, 'create').length,
          invalid: listOf(plans, 'error').length,
        },
      };
    },
  },
  {
    method: 'post',
    path: '/products/bulk/csv/import',
    summary: 'Import products from CSV: `content` runs synchronously (200/207), `s3Key` queues a job (202)',
    description:
      'Sync: `{totalProcessed, created, updated, skipped, errors[{row, sku, message}]}`, counted in rows; 207 when any row failed. Inspect errors[] even on 2xx. Every import that changes products is recorded as a bulk operation that can be rolled back.',
    tags: ['csv'],
    invalid: { code: 'bad-request' },
    auth: { scopes: ['products:import'] },
    body: importBody,
    bodyLimitBytes: SYNC_BODY_LIMIT,
    responses: {
      200: { description: 'all rows fine' },
      207: { description: 'some rows failed: see errors[]' },
      202: { description: '`{jobId}`' },
    },
    handler: async (ctx) => {
      const body = ctx.request.body as {
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
      };
      if (body.s3Key) return startAsyncImport(ctx, body.s3Key, body.config ?? {});
      if (body.config !== undefined)
        throw new AppError(400, 'bad-request/missing-s3-key', 'An async import (config given) needs s3Key', {
          field: 's3Key',
        });
      if (body.content === undefined)
        throw new AppError(400, 'bad-request', 'content (sync import) or s3Key (async import) is required', {
          field: 'content',
        });
      checkFieldsToUpdate(body.fieldsToUpdate);
      const { principal, tenantDb } = tenantOf(ctx);
      const { parsed } = read({ ...body, content: body.content });
      const plans = await planImport(tenantDb, parsed, body);
      const layout = layoutFor(body.format);
      const { counts, errors, operationId } = await applyImport(tenantDb, plans, {
        ...body,
        actor: principal.keyId,
        source: { mode: 'sync', format: layout.format },
      });
      ctx.status = errors.length ? 207 : 200;
      ctx.body = {
        totalProcessed: counts.totalProcessed,
        created: counts.created,
        updated: counts.updated,
        skipped: counts.skipped,
        errors,
        operationId,
      };
    },
  },
  {
    method: 'post',
    path: '/products/export-csv',
    summary: `Export products as CSV, synchronously (at most ${SYNC_EXPORT_MAX} products; larger exports: POST /products/bulk/csv/export)`,
    tags: ['csv'],
    invalid: { code: 'bad-request' },
    auth: { scopes: ['products:export'] },
    body: exportBody,
    responses: {
      200: { description: 'text/csv, as an attachment', contentType: 'text/csv' },
      404: { description: 'not-found/no-products' },
    },
    handler: async (ctx) => {
      const body = ctx.request.body as unknown as {
        format: string;
        selection: string;
        productIds?: string[];
        filters?: ProductFilters;
      };
      layoutFor(body.format);
      const docs = await selectProducts(ctx, body, SYNC_EXPORT_MAX);
      if (docs.length === 0) throw new AppError(404, 'not-found/no-products', 'The selection matched no products');
      if (docs.length > SYNC_EXPORT_MAX) {
        throw new AppError(
          400,
          'too-many-products',
          `More than ${SYNC_EXPORT_MAX} products: use the async export (POST /products/bulk/csv/export)`,
        );
      }
      ctx.set('Content-Type', 'text/csv; charset=utf-8');
      ctx.set(
        'Content-Disposition',
        `attachment; filename="products-${body.format}-${new Date().toISOString().slice(0, 10)}.csv"`,
      );
      ctx.body = csvOf(docs, body.format);
    },
  },
]);

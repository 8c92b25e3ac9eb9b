import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { products } from '../products/collections';
import { presentProduct } from '../products/present';
import type { ProductDoc } from '../products/types';
import { applyImport, countPlans, planImport, type ImportCounts, type Plan, type RowError } from './import';
import { ExportColumns, layoutFor } from './layouts/index';
import { SYNC_EXPORT_MAX, SYNC_MAX_BYTES, SYNC_MAX_ROWS } from './limits';
import { toCsvText } from './parse';
import { readProducts } from './read';
import { selectionFilter, type Selection } from './select';

/** CSV text as a request carries it, in a layout, with optional column renames. */
export interface CsvContent {
  content: string;
  format?: string;
  mappings?: Record<string, string>;
}

export interface ImportChoices {
  createIfNotExists: boolean;
  fieldsToUpdate?: string[];
}

/** A file to hand back as an attachment. */
export interface CsvFile {
  filename: string;
  text: string;
}

const listOf = (plans: Plan[], kind: Plan['kind']) => plans.filter((p) => p.kind === kind);

/** Content over the synchronous caps is refused, pointing to the async flow. */
function readContent(body: CsvContent) {
  if (Buffer.byteLength(body.content) > SYNC_MAX_BYTES) {
    throw new AppError(
      400,
      'bad-request/file-too-large',
      `content is over the synchronous limit of ${SYNC_MAX_BYTES} bytes: upload the file (POST /products/bulk/csv/upload-url) and import it with s3Key (async)`,
      { field: 'content' },
    );
  }
  const result = readProducts(body.content, layoutFor(body.format), body.mappings);
  if (result.rows > SYNC_MAX_ROWS) {
    throw new AppError(
      400,
      'bad-request/file-too-large',
      `${result.rows} rows are over the synchronous limit of ${SYNC_MAX_ROWS}: use the async flow (upload-url, then import with s3Key)`,
      { field: 'content' },
    );
  }
  return result;
}

/** The synchronous CSV use cases of one tenant: templates, previews, imports and exports answered in the request. */
export class CsvSync {
  constructor(private readonly tenantDb: TenantDb) {}

  /** The header row of a layout. */
  template(format: string): CsvFile {
    const layout = layoutFor(format);
    return { filename: `products-template-${layout.format}.csv`, text: toCsvText(layout.columns, []) };
  }

  /** What each product of the content would do; writes nothing. */
  async preview(req: CsvContent & ImportChoices) {
    const plans = await planImport(this.tenantDb, readContent(req).parsed, { ...req, planOnly: true });
    const { errors, ...summary } = countPlans(plans);
    return {
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
  }

  /** The preview a CSV bulk edit requires: each product with its changes; writes nothing. */
  async bulkEditPreview(req: CsvContent & { createIfNotExists: boolean }) {
    const plans = await planImport(this.tenantDb, readContent(req).parsed, { ...req, planOnly: true });
    return {
      products: plans
        .filter((p) => p.kind !== 'error')
        .map((p) => ({
          sku: p.parsed.sku,
          rows: p.parsed.rows,
          action: p.kind,
          changes: p.kind === 'update' ? p.changed : [],
          ...(p.kind === 'skip' ? { reason: p.reason } : {}),
        })),
      invalidRows: countPlans(plans).errors,
      summary: {
        toUpdate: listOf(plans, 'update').length,
        toCreate: listOf(plans, 'create').length,
        invalid: listOf(plans, 'error').length,
      },
    };
  }

  /** Imports the content now, recorded as one bulk operation (null when nothing changed). */
  async importContent(
    req: CsvContent &
      ImportChoices & { skipErrorRows: boolean; batchSize: number; operationName?: string; actor: string },
  ): Promise<Omit<ImportCounts, 'failed'> & { errors: RowError[]; operationId: string | null }> {
    const { parsed } = readContent(req);
    const plans = await planImport(this.tenantDb, parsed, req);
    const { counts, errors, operationId } = await applyImport(this.tenantDb, plans, {
      ...req,
      source: { mode: 'sync', format: layoutFor(req.format).format },
    });
    return {
      totalProcessed: counts.totalProcessed,
      created: counts.created,
      updated: counts.updated,
      skipped: counts.skipped,
      errors,
      operationId,
    };
  }

  /** The selected products as a CSV file; 404 when none, 400 over the synchronous cap. */
  async exportFile(req: Selection & { format: string }, today = new Date()): Promise<CsvFile> {
    const layout = layoutFor(req.format);
    const docs = (await this.tenantDb
      .collection(products)
      .find(selectionFilter(req), { sort: { sku: 1 }, limit: SYNC_EXPORT_MAX + 1 })
      .toArray()) as ProductDoc[];
    if (docs.length === 0) throw new AppError(404, 'not-found/no-products', 'The selection matched no products');
    if (docs.length > SYNC_EXPORT_MAX) {
      throw new AppError(
        400,
        'too-many-products',
        `More than ${SYNC_EXPORT_MAX} products: use the async export (POST /products/bulk/csv/export)`,
      );
    }
    const presented = docs.map((d) => presentProduct(d));
    const columns = new ExportColumns(layout);
    for (const p of presented) columns.add(p);
    return {
      filename: `products-${req.format}-${today.toISOString().slice(0, 10)}.csv`,
      text: toCsvText(
        columns.columns,
        presented.flatMap((p) => layout.toRecords(p)),
      ),
    };
  }
}

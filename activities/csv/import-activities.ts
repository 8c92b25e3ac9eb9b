import { PutObjectCommand } from '@aws-sdk/client-s3';
import { heartbeat } from '@temporalio/activity';
import type { ActivityDeps } from '../index';
import { TenantDb } from '../../shared/db/tenant-db';
import { BulkOperations } from '../../shared/bulk/operations';
import { applyImport, countPlans, planImport, type ImportCounts } from '../../shared/csv/import';
import { ASYNC_LIMITS, importErrors, importStaging, openObject, type ImportConfig, type StagedProduct } from '../../shared/csv/jobs';
import { isDuplicateKeyError } from '../../shared/db/mongo';
import { layoutFor } from '../../shared/csv/layouts/index';
import { toCsvText } from '../../shared/csv/parse';
import { streamProducts } from '../../shared/csv/stage';
import type { ParsedProduct } from '../../shared/csv/layout';
import { derivedObjectId } from '../../shared/ids';
import { AppError } from '../../shared/errors/catalog';

export interface ImportJobRef {
  tenantId: string;
  jobId: string;
}

/**
 * Drops a job's staged products. FerretDB deletes a filter's matches with one SQL statement that
 * names every matched _id, and SQLite refuses more than 32,766 of them; a job stages at most
 * `maxRows` products, so they go by ranges of their index, 20,000 at a time.
 */
async function clearStaging(tenantDb: TenantDb, jobId: string): Promise<void> {
  const staging = tenantDb.collection(importStaging);
  for (let from = 0; from < ASYNC_LIMITS.maxRows; from += 20_000) await staging.deleteMany({ jobId, index: { $gte: from, $lt: from + 20_000 } });
}

export interface StageResult {
  groups: number;
  totalRows: number;
  structuralErrors: string[];
  exceedsRowCap: boolean;
  exceedsVariantCap: boolean;
}

/**
 * The async import's activities. Every one is safe to run again: staging replaces the job's
 * staged rows, a chunk re-plans against the current catalog (its earlier writes then read as
 * unchanged and are counted as what the operation recorded), errors are keyed by row.
 */
export function importActivities({ db, s3, config }: ActivityDeps) {
  const bucket = config.s3.bucket;
  return {
    /** Reads the uploaded file once, groups its rows into products and stages them. */
    async stageImport(ref: ImportJobRef & { s3Key: string; config: ImportConfig }): Promise<StageResult> {
      const tenantDb = new TenantDb(db, ref.tenantId);
      const staging = tenantDb.collection(importStaging);
      await clearStaging(tenantDb, ref.jobId);
      const open = () => openObject(s3, bucket, ref.s3Key);
      // staged 500 at a time as the file is read: the worker never holds the whole file
      const stage = async (batch: ParsedProduct[], first: number) => {
        await staging.insertMany(batch.map((parsed, j) => ({ _id: `${ref.jobId}:${first + j}`, jobId: ref.jobId, index: first + j, parsed })));
        heartbeat(first);
      };
      try {
        const read = await streamProducts(open, layoutFor(ref.config.format), ref.config.mappings, ASYNC_LIMITS, stage);
        return { groups: read.products, totalRows: read.rows, structuralErrors: [], exceedsRowCap: read.exceedsRowCap, exceedsVariantCap: read.exceedsVariantCap };
      } catch (err) {
        if (err instanceof AppError) return { groups: 0, totalRows: 0, structuralErrors: [err.message], exceedsRowCap: false, exceedsVariantCap: false };
        throw err;
      }
    },

    /** Plans (and, unless `dryRun`, applies) staged products [from, to); failed rows go to the error list. */
    async importChunk(ref: ImportJobRef & { from: number; to: number; config: ImportConfig; operationId: string; actor: string; dryRun: boolean }): Promise<ImportCounts> {
      const tenantDb = new TenantDb(db, ref.tenantId);
      // by _id, one by one: a primary-key read each, where a range query would scan the staging
      const staging = tenantDb.collection(importStaging);
      const staged: StagedProduct[] = [];
      for (let i = ref.from; i < ref.to; i += 50) {
        const ids = Array.from({ length: Math.min(50, ref.to - i) }, (_, j) => `${ref.jobId}:${i + j}`);
        for (const doc of await Promise.all(ids.map((_id) => staging.findOne({ _id })))) if (doc) staged.push(doc);
      }
      const beat = () => heartbeat(ref.from);
      // a created product's id is derived from the job and its place in the file: a retried chunk recreates the same documents
      const idOf = (i: number) => derivedObjectId(`${ref.jobId}:${staged[i].index}`);
      const plans = await planImport(tenantDb, staged.map((s) => s.parsed), { ...ref.config, onProgress: beat, idOf });
      const { counts, errors } = ref.dryRun
        ? (({ errors: e, ...c }) => ({ counts: c, errors: e }))(countPlans(plans))
        : await applyImport(tenantDb, plans, {
            ...ref.config,
            skipErrorRows: true,
            batchSize: ASYNC_LIMITS.chunkSize,
            actor: ref.actor,
            source: { mode: 'async', jobId: ref.jobId, format: ref.config.format },
            operationId: ref.operationId,
            finish: false,
            onProgress: beat,
          });
      if (errors.length) {
        // keyed by row: a retried chunk's errors are already there
        await tenantDb
          .collection(importErrors)
          .insertMany(errors.map((e) => ({ _id: `${ref.jobId}:${e.row}`, jobId: ref.jobId, row: e.row, sku: e.sku, message: e.message })), { ordered: false })
          .catch((err) => {
            if (!isDuplicateKeyError(err)) throw err;
          });
      }
      return counts;
    },

    /** Closes the operation, writes the error report (row, sku, every error of the row) and drops the staging. */
    async finishImport(ref: ImportJobRef & { operationId: string; counts: ImportCounts; wrote: boolean }): Promise<{ errorReportKey: string | null }> {
      const tenantDb = new TenantDb(db, ref.tenantId);
      const ops = new BulkOperations(tenantDb);
      const op = await ops.get(ref.operationId);
      if (op && op.status === 'processing') {
        if (ref.counts.created + ref.counts.updated > 0) await ops.finish(ref.operationId, 'completed', ref.counts);
        else await ops.finish(ref.operationId, 'failed', ref.counts); // it changed nothing: nothing to roll back
      }
      const errors = await tenantDb.collection(importErrors).find({ jobId: ref.jobId }, { sort: { row: 1 } }).toArray();
      let errorReportKey: string | null = null;
      if (errors.length) {
        errorReportKey = `reports/${ref.tenantId}/${ref.jobId}-errors.csv`;
        const body = toCsvText(['row', 'sku', 'errors'], errors.map((e) => ({ row: String(e.row), sku: e.sku ?? '', errors: e.message })));
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: errorReportKey, Body: body, ContentType: 'text/csv', ServerSideEncryption: 'AES256' }));
      }
      await clearStaging(tenantDb, ref.jobId);
      return { errorReportKey };
    },
  };
}


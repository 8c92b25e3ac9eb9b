import { PutObjectCommand } from '@aws-sdk/client-s3';
import { heartbeat } from '@temporalio/activity';
import type { ActivityDeps } from '../index';
import { TenantDb } from '../../shared/db/tenant-db';
import { BulkOperations, bulkOperations } from '../../shared/bulk/operations';
import { applyImport, countPlans, planImport, type ImportCounts, type Plan } from '../../shared/csv/import';
import type { ImportConfig } from '../../shared/csv/import-config';
import { ASYNC_LIMITS } from '../../shared/csv/limits';
import { importErrors, importSkuClaims, importStaging } from '../../shared/csv/staging';
import { errorReportObjectKey, openObject } from '../../shared/csv/uploads';
import { isDuplicateKeyError } from '../../shared/db/duplicate-key';
import { layoutFor } from '../../shared/csv/layouts/index';
import { toCsvText } from '../../shared/csv/parse';
import { streamProducts } from '../../shared/csv/stage';
import type { ParsedProduct } from '../../shared/csv/layout';
import { derivedObjectId } from '../../shared/ids';
import { AppError } from '../../shared/errors/catalog';
import { skusOf } from '../../shared/products/normalize';

export interface ImportJobRef {
  tenantId: string;
  jobId: string;
}

/** A staged chunk stays well under the 16 MiB document limit (a product may be large: long HTML, many variants). */
const MAX_CHUNK_JSON = 4 * 1024 * 1024;

export interface StageResult {
  /** The staged chunks, [first product, end): each is one importChunk. */
  chunks: [number, number][];
  totalRows: number;
  structuralErrors: string[];
  exceedsRowCap: boolean;
  exceedsVariantCap: boolean;
}

/**
 * A dry pass plans each chunk alone: a SKU the file gives to two products in different chunks is
 * found by claiming every planned SKU for the job. The product that claims a SKU another product
 * of the file holds is a failed row (a retried chunk finds its own claims and keeps them).
 */
async function claimFileSkus(tenantDb: TenantDb, jobId: string, from: number, plans: Plan[]): Promise<Plan[]> {
  const col = tenantDb.collection(importSkuClaims);
  const wanted = plans.flatMap((plan, i) =>
    plan.kind === 'create' || plan.kind === 'update'
      ? [...new Set(skusOf(plan.product).map((s) => s.sku.toUpperCase()))].map((sku) => ({ sku, i }))
      : [],
  );
  if (!wanted.length) return plans;
  await col
    .insertMany(
      wanted.map(({ sku, i }) => ({ _id: `${jobId}:${sku}`, jobId, product: from + i })),
      { ordered: false },
    )
    .catch((err) => {
      if (!isDuplicateKeyError(err)) throw err;
    });
  const holders = new Map((await col.findByIds(wanted.map((w) => `${jobId}:${w.sku}`))).map((c) => [c._id, c.product]));
  const clashes = new Map<number, string[]>();
  for (const { sku, i } of wanted) {
    const holder = holders.get(`${jobId}:${sku}`);
    if (holder !== undefined && holder !== from + i) clashes.set(i, [...(clashes.get(i) ?? []), sku]);
  }
  return plans.map((plan, i) => {
    const skus = clashes.get(i);
    return skus
      ? {
          kind: 'error',
          parsed: plan.parsed,
          messages: skus.map((sku) => `SKU ${sku} is given to another product of this file too`),
        }
      : plan;
  });
}

/**
 * The async import's activities. Every one is safe to run again: staging replaces the job's
 * staged chunks, a chunk re-plans against the current catalog (its earlier writes then read as
 * unchanged and are counted as what the operation recorded), errors are keyed by row.
 */
export function importActivities({ db, s3, config, log }: ActivityDeps) {
  const bucket = config.s3.bucket;
  return {
    /** Reads the uploaded file (twice, streamed: shared/csv/stage.ts), groups its rows into products and stages them by chunk. */
    async stageImport(
      ref: ImportJobRef & { s3Key: string; config: ImportConfig; chunkSize: number },
    ): Promise<StageResult> {
      const tenantDb = new TenantDb(db, ref.tenantId);
      const staging = tenantDb.collection(importStaging);
      // a retried staging starts over: what a killed attempt staged is replaced
      await staging.deleteMany({ jobId: ref.jobId });
      heartbeat(0);
      const open = () => openObject(s3, bucket, ref.s3Key);
      // staged a chunk at a time as the file is read: the worker never holds the whole file
      const chunks: [number, number][] = [];
      const put = async (json: string[], first: number) => {
        await staging.insertOne({
          _id: `${ref.jobId}:${first}`,
          jobId: ref.jobId,
          index: first,
          productsJson: `[${json.join(',')}]`,
        });
        chunks.push([first, first + json.length]);
      };
      const stage = async (batch: ParsedProduct[], first: number) => {
        let start = 0;
        let bytes = 0;
        const json = batch.map((p) => JSON.stringify(p));
        for (let j = 0; j < json.length; j++) {
          if (j > start && bytes + json[j].length > MAX_CHUNK_JSON) {
            await put(json.slice(start, j), first + start);
            start = j;
            bytes = 0;
          }
          bytes += json[j].length;
        }
        await put(json.slice(start), first + start);
        heartbeat(first);
      };
      const none = { chunks: [], totalRows: 0, structuralErrors: [], exceedsRowCap: false, exceedsVariantCap: false };
      try {
        const read = await streamProducts(
          open,
          layoutFor(ref.config.format),
          ref.config.mappings,
          ASYNC_LIMITS,
          stage,
          ref.chunkSize,
          (records) => heartbeat(records), // the first pass hands nothing on: say it is alive
        );
        return {
          ...none,
          chunks,
          // blank records make nothing and are counted nowhere (as in a sync import): the
          // workflow counts the rows of an all-or-nothing import that does not write as skipped
          // from this total. Over the row cap, the file's own count says by how much.
          totalRows: read.exceedsRowCap ? read.rows : read.productRows,
          exceedsRowCap: read.exceedsRowCap,
          exceedsVariantCap: read.exceedsVariantCap,
        };
      } catch (err) {
        if (err instanceof AppError) return { ...none, structuralErrors: [err.message] };
        throw err;
      }
    },

    /** Plans (and, unless `dryRun`, applies) the staged chunk [from, to); failed rows go to the error list. */
    async importChunk(
      ref: ImportJobRef & {
        from: number;
        to: number;
        config: ImportConfig;
        operationId: string;
        actor: string;
        dryRun: boolean;
      },
    ): Promise<ImportCounts> {
      const tenantDb = new TenantDb(db, ref.tenantId);
      const t0 = Date.now();
      const chunk = await tenantDb.collection(importStaging).findOne({ _id: `${ref.jobId}:${ref.from}` });
      const products: ParsedProduct[] = chunk ? JSON.parse(chunk.productsJson) : [];
      if (products.length !== ref.to - ref.from)
        throw new Error(`staged chunk ${ref.from}–${ref.to} of ${ref.jobId} is missing`);
      const beat = () => heartbeat(ref.from);
      // a created product's id is derived from the job and its place in the file: a retried chunk recreates the same documents
      const idOf = (i: number) => derivedObjectId(`${ref.jobId}:${ref.from + i}`);
      const t1 = Date.now();
      const started = await tenantDb.collection(bulkOperations).findOne({ _id: ref.operationId });
      const plans = await planImport(tenantDb, products, {
        ...ref.config,
        onProgress: beat,
        idOf,
        createdBy: { operationId: ref.operationId, since: started?.createdAt ?? new Date(0) },
      });
      const t2 = Date.now();
      const { counts, errors } = ref.dryRun
        ? (({ errors: e, ...c }) => ({ counts: c, errors: e }))(
            countPlans(await claimFileSkus(tenantDb, ref.jobId, ref.from, plans)),
          )
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
          .insertMany(
            errors.map((e) => ({
              _id: `${ref.jobId}:${e.row}`,
              jobId: ref.jobId,
              row: e.row,
              sku: e.sku,
              message: e.message,
            })),
            { ordered: false },
          )
          .catch((err) => {
            if (!isDuplicateKeyError(err)) throw err;
          });
      }
      const mem = process.memoryUsage();
      log.info(
        {
          jobId: ref.jobId,
          from: ref.from,
          to: ref.to,
          readMs: t1 - t0,
          planMs: t2 - t1,
          applyMs: Date.now() - t2,
          heapMiB: mem.heapUsed >> 20,
          rssMiB: mem.rss >> 20,
        },
        'import chunk done',
      );
      return counts;
    },

    /** Closes the operation, writes the error report (row, sku, every error of the row) and drops the staging. */
    async finishImport(
      ref: ImportJobRef & { operationId: string; counts: ImportCounts; wrote: boolean },
    ): Promise<{ errorReportKey: string | null }> {
      const tenantDb = new TenantDb(db, ref.tenantId);
      const ops = new BulkOperations(tenantDb);
      heartbeat('finishing');
      const op = await ops.get(ref.operationId);
      if (op && op.status === 'processing') {
        if (ref.counts.created + ref.counts.updated > 0) await ops.finish(ref.operationId, 'completed', ref.counts);
        // it changed nothing: no operation, as a sync import records none for a file it skips
        else if (!(await ops.discardIfEmpty(ref.operationId))) await ops.finish(ref.operationId, 'failed', ref.counts);
      }
      const errors = await tenantDb
        .collection(importErrors)
        .find({ jobId: ref.jobId }, { sort: { row: 1 } })
        .toArray();
      let errorReportKey: string | null = null;
      heartbeat('report');
      if (errors.length) {
        errorReportKey = errorReportObjectKey(ref.tenantId, ref.jobId);
        const body = toCsvText(
          ['row', 'sku', 'errors'],
          errors.map((e) => ({ row: String(e.row), sku: e.sku ?? '', errors: e.message })),
        );
        await s3.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: errorReportKey,
            Body: body,
            ContentType: 'text/csv',
            ServerSideEncryption: 'AES256',
          }),
        );
      }
      await tenantDb.collection(importStaging).deleteMany({ jobId: ref.jobId });
      await tenantDb.collection(importSkuClaims).deleteMany({ jobId: ref.jobId });
      return { errorReportKey };
    },
  };
}

import { patched, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import {
  importProgress,
  type CsvImportInput,
  type CsvImportResult,
  type ImportProgress,
} from '../../shared/csv/messages';
import { mapLimit } from '../../shared/concurrency';

const acts = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  // short, so a killed worker's chunk is handed to another worker within seconds
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
});

/**
 * What a client is told when an activity failed past its retries: which step, not the error's
 * own text (database or store messages name hosts and keys); operators see it in the Temporal UI.
 */
export function failureMessage(err: unknown): string {
  const step = (err as { activityType?: string }).activityType;
  return `the job stopped: ${step ? `its ${step} step` : 'a step'} failed after repeated attempts`;
}

/**
 * Chunks applied at once (deterministic: the order comes from the history). Two overlap one
 * chunk's planning (validation, in the worker) with another's writes (in the database), which on
 * a 2-core machine takes a third off the run. A product's rows are all in one chunk; a SKU two
 * products of one file both give is claimed by one of them, the other's rows fail, as when chunks
 * run one by one.
 */
const CHUNKS_IN_FLIGHT = 2;

/**
 * An async CSV import: stage the file's products once, then apply them chunk by chunk. Progress
 * is kept here and answered by the `progress` query; a killed worker resumes at the chunk it
 * was in, and each chunk is idempotent, so every row is counted once.
 */
export async function csvImportWorkflow(input: CsvImportInput): Promise<CsvImportResult> {
  const ref = { tenantId: input.tenantId, jobId: input.jobId };
  const p: ImportProgress = {
    status: 'processing',
    totalRows: 0,
    processedRows: 0,
    created: 0,
    updated: 0,
    failed: 0,
    skipped: 0,
    percent: 0,
  };
  setHandler(importProgress, () => p);
  await acts.updateJob({ ...ref, status: 'processing' });
  try {
    const staged = await acts.stageImport({
      ...ref,
      s3Key: input.s3Key,
      config: input.config,
      chunkSize: input.chunkSize,
    });
    p.totalRows = staged.totalRows;
    const structuralErrors = [...staged.structuralErrors];
    if (staged.exceedsRowCap) structuralErrors.push(`the file has ${staged.totalRows} rows, over the cap`);
    if (staged.exceedsVariantCap) structuralErrors.push('a product has more rows (variants) than the cap');

    // skipErrorRows false: a dry pass first; one bad row means nothing is written
    let write = structuralErrors.length === 0;
    if (write && !input.config.skipErrorRows) {
      let failed = 0;
      // `failed += (await …).failed` read `failed` before the await: with two chunks in flight,
      // the chunk that ended second overwrote the first one's count, and a file with a bad row
      // was written. Executions that ran the old sum replay it (their next commands follow it).
      const countsEveryChunk = patched('import-dry-pass-sums-every-chunk');
      await mapLimit(staged.chunks, CHUNKS_IN_FLIGHT, async ([from, to]) => {
        const dry = () =>
          acts.importChunk({
            ...ref,
            from,
            to,
            config: input.config,
            operationId: input.operationId,
            actor: input.actor,
            dryRun: true,
          });
        if (countsEveryChunk) {
          const chunk = await dry();
          failed += chunk.failed;
        } else {
          failed += (await dry()).failed;
        }
      });
      write = failed === 0;
      if (!write) {
        p.failed = failed;
        p.skipped = p.totalRows - failed;
        p.processedRows = p.totalRows;
      }
    }
    if (write) {
      await mapLimit(staged.chunks, CHUNKS_IN_FLIGHT, async ([from, to]) => {
        const c = await acts.importChunk({
          ...ref,
          from,
          to,
          config: input.config,
          operationId: input.operationId,
          actor: input.actor,
          dryRun: false,
        });
        p.created += c.created;
        p.updated += c.updated;
        p.failed += c.failed;
        p.skipped += c.skipped;
        p.processedRows += c.totalProcessed;
        p.percent = p.totalRows ? Math.floor((p.processedRows / p.totalRows) * 100) : 100;
      });
    }
    const counts = {
      totalProcessed: p.processedRows,
      created: p.created,
      updated: p.updated,
      skipped: p.skipped,
      failed: p.failed,
    };
    const { errorReportKey } = await acts.finishImport({
      ...ref,
      operationId: input.operationId,
      counts,
      wrote: write,
    });
    p.status = structuralErrors.length ? 'failed' : 'completed';
    p.percent = 100;
    const result = { ...p, errorReportKey, structuralErrors };
    await acts.updateJob({
      ...ref,
      status: p.status,
      result: { ...result },
      ...(structuralErrors.length ? { error: structuralErrors.join('; ') } : {}),
    });
    return result;
  } catch (err) {
    // an activity failed past its retries: the job ends failed, saying why, rather than processing forever
    await acts.updateJob({ ...ref, status: 'failed', error: failureMessage(err) });
    throw err;
  }
}

import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { AbortMultipartUploadCommand, ListMultipartUploadsCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { BSON, type FindCursor } from 'mongodb';
import { activityInfo, cancellationSignal, heartbeat } from '@temporalio/activity';
import type { ActivityDeps } from '../index';
import { prefetching } from '../../shared/db/prefetch';
import { TenantDb } from '../../shared/db/tenant-db';
import { jobs, RUNNING_JOB_STATUSES } from '../../shared/jobs/collection';
import { ExportColumns, layoutFor } from '../../shared/csv/layouts/index';
import { csvHeader, csvLine } from '../../shared/csv/lines';
import { selectionFilter } from '../../shared/csv/select';
import type { ExportInput, ExportResult } from '../../shared/csv/messages';
import { exportObjectKey } from '../../shared/csv/uploads';
import { products } from '../../shared/products/collections';
import { presentProduct } from '../../shared/products/present';
import type { ProductDoc } from '../../shared/products/types';

/** Products between two progress writes to the job record (heartbeats go with every product). */
const PROGRESS_EVERY = 500;

/**
 * Multipart uploads of this key that an earlier attempt left open (its worker was killed, or it
 * lost its heartbeat): aborted, so their parts do not linger and a late attempt cannot complete
 * one after this attempt's file is in place.
 */
async function abortEarlierUploads(s3: S3Client, bucket: string, key: string): Promise<void> {
  const open = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }));
  for (const upload of open.Uploads ?? []) {
    if (upload.Key !== key || !upload.UploadId) continue;
    await s3
      .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: upload.UploadId }))
      .catch(() => undefined); // already completed or aborted: nothing left to free
  }
}

/**
 * Streams the selected products through the layout into a multipart upload: memory stays flat
 * whatever the catalog size. It heartbeats with every product, so a killed worker's attempt is
 * seen dead within the heartbeat timeout (seconds), and a cancelled or timed-out attempt stops
 * and abandons its upload. A retry starts the file over under the same key: the object that ends
 * up there has every selected product once, whichever attempt finished it.
 */
export function exportCsv({ db, s3, config }: ActivityDeps) {
  return async (input: ExportInput): Promise<ExportResult> => {
    const bucket = config.s3.bucket;
    const signal = cancellationSignal();
    const tenantDb = new TenantDb(db, input.tenantId);
    const layout = layoutFor(input.format);
    const filter = selectionFilter(input);
    const col = tenantDb.collection(products);
    const key = exportObjectKey(input.tenantId, input.jobId);
    heartbeat(0);
    if (activityInfo().attempt > 1) await abortEarlierUploads(s3, bucket, key);
    const total = await col.countDocuments(filter);
    heartbeat(0);

    // a layout whose columns repeat per item (WooCommerce's Attribute N) needs a first pass over
    // the fields that say how many, so the header (written first) holds every product's
    const header = new ExportColumns(layout);
    if (layout.repeated) {
      const projection = Object.fromEntries(layout.repeated.reads.map((f) => [f, 1]));
      for await (const doc of col.find(filter, { projection })) {
        if (signal.aborted) throw signal.reason;
        header.add(doc);
        heartbeat(0); // throttled by the SDK
      }
    }
    const columns = header.columns;

    const body = new PassThrough();
    body.write(csvHeader(columns));
    const upload = new Upload({
      client: s3,
      params: { Bucket: bucket, Key: key, Body: body, ContentType: 'text/csv', ServerSideEncryption: 'AES256' },
      queueSize: 2,
      partSize: 5 * 1024 * 1024,
    });
    const done = upload.done();
    done.catch(() => undefined); // awaited below; an abandoned upload's rejection is expected
    const abandon = () => {
      body.destroy();
      void upload.abort().catch(() => undefined);
    };
    signal.addEventListener('abort', abandon, { once: true });

    let count = 0;
    let rows = 0;
    const progress = () =>
      tenantDb
        .collection(jobs)
        .updateOne(
          { _id: input.jobId, status: { $in: [...RUNNING_JOB_STATUSES] } },
          { $set: { result: { processedRows: count, totalRows: total, count, rows } } },
        );
    try {
      // raw: each product stays BSON until its turn. Decoded by the driver, a whole batch (thousands
      // of 5 KB products) became objects in one stretch of the event loop and stayed alive until
      // the last was written; one at a time, a 40,000-row export went from 0.50 to 0.60 of a raw
      // cursor's speed (bench/import.ts).
      const cursor = col.find(filter, { sort: { sku: 1 }, raw: true }) as unknown as FindCursor<Uint8Array>;
      for await (const raw of prefetching(cursor)) {
        if (signal.aborted) throw signal.reason;
        let lines = '';
        for (const record of layout.toRecords(presentProduct(BSON.deserialize(raw) as ProductDoc))) {
          lines += csvLine(columns, record);
          rows++;
        }
        // the upload's end (a failure) or a cancellation wakes a writer waiting for room too
        if (!body.write(lines)) await Promise.race([once(body, 'drain', { signal }), done]);
        count++;
        heartbeat(count); // throttled by the SDK: cheap per product
        if (count % PROGRESS_EVERY === 0) await progress();
      }
      if (signal.aborted) throw signal.reason;
      body.end();
      await done;
    } catch (err) {
      abandon();
      throw err;
    } finally {
      signal.removeEventListener('abort', abandon);
    }
    return { key, count, rows, totalRows: total, processedRows: count };
  };
}

import { PassThrough } from 'node:stream';
import { Upload } from '@aws-sdk/lib-storage';
import { heartbeat } from '@temporalio/activity';
import { stringify } from 'csv-stringify';
import type { ActivityDeps } from '../index';
import { TenantDb } from '../../shared/db/tenant-db';
import { jobs } from '../../shared/jobs/collection';
import { layoutFor } from '../../shared/csv/layouts/index';
import { selectionFilter } from '../../shared/csv/select';
import type { ExportInput, ExportResult } from '../../shared/csv/messages';
import { products } from '../../shared/products/collections';
import { presentProduct } from '../../shared/products/present';
import type { ProductDoc } from '../../shared/products/types';

/**
 * Streams the selected products through the layout into a multipart upload: memory stays flat
 * whatever the catalog size. Run again, it writes the same object again (idempotent).
 */
export function exportCsv({ db, s3, config }: ActivityDeps) {
  return async (input: ExportInput): Promise<ExportResult> => {
    const tenantDb = new TenantDb(db, input.tenantId);
    const layout = layoutFor(input.format);
    const filter = selectionFilter(input);
    const col = tenantDb.collection(products);
    const total = await col.countDocuments(filter);
    const key = `exports/${input.tenantId}/${input.jobId}.csv`;
    const csv = stringify({ header: true, columns: layout.columns, record_delimiter: '\r\n' });
    const body = new PassThrough();
    csv.pipe(body);
    const upload = new Upload({
      client: s3,
      params: {
        Bucket: config.s3.bucket,
        Key: key,
        Body: body,
        ContentType: 'text/csv',
        ServerSideEncryption: 'AES256',
      },
      queueSize: 2,
      partSize: 5 * 1024 * 1024,
    });
    const done = upload.done();
    let count = 0;
    let rows = 0;
    const progress = async () => {
      heartbeat(count);
      await tenantDb
        .collection(jobs)
        .updateOne(
          { _id: input.jobId, status: { $in: ['queued', 'processing'] } },
          { $set: { result: { processedRows: count, totalRows: total, count, rows } } },
        );
    };
    for await (const doc of col.find(filter, { sort: { sku: 1 } })) {
      for (const record of layout.toRecords(presentProduct(doc as ProductDoc))) {
        if (!csv.write(record)) await new Promise((r) => csv.once('drain', r));
        rows++;
      }
      count++;
      if (count % 500 === 0) await progress();
    }
    csv.end();
    await done;
    return { key, count, rows, totalRows: total, processedRows: count };
  };
}

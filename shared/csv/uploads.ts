import { GetObjectCommand, HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { AppError } from '../errors/catalog';
import { newId } from '../ids';
import { MAX_UPLOAD_BYTES } from '../s3/client';

/** The objects of CSV import and export: where each lives, and the checks an uploaded one passes. */

export function uploadPrefix(tenantId: string): string {
  return `uploads/${tenantId}/`;
}

/** A fresh key for one upload: chosen by the server, under the tenant's prefix. */
export function newUploadKey(tenantId: string): string {
  return `${uploadPrefix(tenantId)}${newId('upl')}.csv`;
}

/** Where an async export writes its file: one object per job, so a retried export rewrites the same one. */
export function exportObjectKey(tenantId: string, jobId: string): string {
  return `exports/${tenantId}/${jobId}.csv`;
}

/** Where an async import's error report goes (one per job). */
export function errorReportObjectKey(tenantId: string, jobId: string): string {
  return `reports/${tenantId}/${jobId}-errors.csv`;
}

/** S3's limit on an object key, in UTF-8 bytes. */
const MAX_KEY_BYTES = 1024;
/** Half of a UTF-16 pair alone: text no URL (nor S3 key) can carry. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** An upload key must be the tenant's own and one S3 can name (403 forbidden/invalid-s3-key otherwise). */
export function checkUploadKey(tenantId: string, key: string): void {
  if (
    !key.startsWith(uploadPrefix(tenantId)) ||
    key.includes('..') ||
    key.includes('//') ||
    LONE_SURROGATE.test(key) ||
    Buffer.byteLength(key) > MAX_KEY_BYTES
  ) {
    throw new AppError(
      403,
      'forbidden/invalid-s3-key',
      `s3Key must be an upload of this tenant (prefix ${uploadPrefix(tenantId)})`,
      { field: 's3Key' },
    );
  }
}

/** The object's size; 404 not-found/s3-object when absent, 400 bad-request/file-too-large over the limit. */
export async function checkUploadedObject(s3: S3Client, bucket: string, key: string): Promise<number> {
  let size: number;
  try {
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    size = head.ContentLength ?? 0;
  } catch (err) {
    const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    // any other refusal of the key the client sent names no object either
    if ((status && status >= 400 && status < 500) || (err as { name?: string }).name === 'NotFound')
      throw new AppError(404, 'not-found/s3-object', `No uploaded object ${key}`, { field: 's3Key' });
    throw err;
  }
  if (size > MAX_UPLOAD_BYTES)
    throw new AppError(
      400,
      'bad-request/file-too-large',
      `The file is ${size} bytes; the limit is ${MAX_UPLOAD_BYTES}`,
      { field: 's3Key' },
    );
  return size;
}

/** An uploaded object's body as a stream (404 not-found/s3-object when it is gone). */
export async function openObject(s3: S3Client, bucket: string, key: string): Promise<Readable> {
  try {
    const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return res.Body as Readable;
  } catch (err) {
    if ((err as { name?: string }).name === 'NoSuchKey')
      throw new AppError(404, 'not-found/s3-object', `No uploaded object ${key}`, { field: 's3Key' });
    throw err;
  }
}

/** A time-limited link to an object that needs no key (export files, error reports). */
export function presignDownload(
  s3: S3Client,
  bucket: string,
  key: string,
  filename: string,
  expiresIn = 3600,
): Promise<string> {
  return getSignedUrl(
    s3,
    new GetObjectCommand({
      Bucket: bucket,
      Key: key,
      ResponseContentDisposition: `attachment; filename="${filename}"`,
    }),
    { expiresIn },
  );
}

import { GetObjectCommand, HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { defineCollection } from '../db/collection';
import { AppError } from '../errors/catalog';
import { MAX_UPLOAD_BYTES } from '../s3/client';

/** Caps the server sets on every async import (sent values are ignored). */
export const ASYNC_LIMITS = { maxRows: 100_000, maxVariantsPerProduct: 500, chunkSize: 500 } as const;
/** Per tenant: async jobs running at once, and started per hour; over either, 429 rate-limited. */
export const JOB_RATE = { concurrent: 3, perHour: 60 } as const;

/** The config keys an async import accepts; others are dropped (caps are the server's). */
export const CONFIG_ALLOWLIST = [
  'format',
  'mappings',
  'fieldsToUpdate',
  'skipErrorRows',
  'operationName',
  'createIfNotExists',
  'enableSideEffects',
] as const;

export interface ImportConfig {
  format: string;
  mappings?: Record<string, string>;
  fieldsToUpdate?: string[];
  skipErrorRows: boolean;
  operationName?: string;
  createIfNotExists: boolean;
  enableSideEffects: boolean;
}

export function uploadPrefix(tenantId: string): string {
  return `uploads/${tenantId}/`;
}

/** An upload key must be the tenant's own (403 forbidden/invalid-s3-key otherwise). */
export function checkUploadKey(tenantId: string, key: string): void {
  if (!key.startsWith(uploadPrefix(tenantId)) || key.includes('..') || key.includes('//')) {
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
    if (status === 404 || (err as { name?: string }).name === 'NotFound')
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

/**
 * A chunk of an async import's products, parsed once and staged as one document, so chunks can be
 * applied (and retried) one by one, each for one read.
 */
export interface StagedChunk {
  _id: string; // `${jobId}:${index}`
  tenantId: string;
  jobId: string;
  /** The index of its first product in the file's products. */
  index: number;
  /** The products as JSON text: FerretDB stores and reads one string far faster than the same nested documents. */
  productsJson: string;
}

/** Each failed row of an async import, for the error report. */
export interface ImportRowError {
  _id: string; // `${jobId}:${row}`
  tenantId: string;
  jobId: string;
  row: number;
  sku: string | null;
  message: string;
}

export const importStaging = defineCollection<StagedChunk>({
  name: 'import_staging',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, jobId: 1, index: 1 } }],
});

export const importErrors = defineCollection<ImportRowError>({
  name: 'import_errors',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, jobId: 1, row: 1 } }],
});

import { CreateBucketCommand, HeadBucketCommand, PutBucketEncryptionCommand, S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import type { S3Config } from '../config';

export function createS3Client(config: S3Config): S3Client {
  // The SDK warns on every start that releases after January 2027 need Node 22; we support Node 20+.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  return new S3Client({
    endpoint: config.endpoint,
    region: config.region,
    forcePathStyle: config.forcePathStyle,
    credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
  });
}

/** Creates the bucket when missing and turns on default SSE-S3 encryption (idempotent). */
export async function ensureBucket(s3: S3Client, bucket: string): Promise<void> {
  try {
    await s3.send(new HeadBucketCommand({ Bucket: bucket }));
  } catch {
    await s3.send(new CreateBucketCommand({ Bucket: bucket })).catch((err: { name?: string }) => {
      if (err.name !== 'BucketAlreadyOwnedByYou' && err.name !== 'BucketAlreadyExists') throw err;
    });
  }
  await s3.send(
    new PutBucketEncryptionCommand({
      Bucket: bucket,
      ServerSideEncryptionConfiguration: {
        Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
    }),
  );
}

export const UPLOAD_URL_TTL_SECONDS = 600;
export const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;

/**
 * A presigned POST for one object: the key is chosen by the server, the size is 1 byte to the
 * limit, and SSE-S3 is a signed condition. The store itself refuses anything outside the policy.
 */
export async function presignUpload(
  s3: S3Client,
  bucket: string,
  key: string,
  opts: { maxBytes?: number; expiresSeconds?: number } = {},
) {
  const sse = { 'x-amz-server-side-encryption': 'AES256' };
  const { url, fields } = await createPresignedPost(s3, {
    Bucket: bucket,
    Key: key,
    Conditions: [['content-length-range', 1, opts.maxBytes ?? MAX_UPLOAD_BYTES], ['eq', '$key', key], sse],
    Fields: sse,
    Expires: opts.expiresSeconds ?? UPLOAD_URL_TTL_SECONDS,
  });
  return { url, fields };
}

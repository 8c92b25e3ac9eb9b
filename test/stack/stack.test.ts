import { randomBytes } from 'node:crypto';
import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { TenantDb } from '../../shared/db/tenant-db';
import { isDuplicateKeyError } from '../../shared/db/duplicate-key';
import { Jobs } from '../../shared/jobs/jobs';
import { ping } from '../../shared/system/messages';
import { jobs } from '../../shared/jobs/collection';
import { presignUpload } from '../../shared/s3/client';
import { workflowIdFor } from '../../shared/temporal/workflow-ids';
import { TestDeps, testStack } from '../helpers/stack';

/** The servers are real: each test talks to the server the suite started, the way the service does. */
let deps: TestDeps;

beforeAll(async () => {
  deps = await TestDeps.open();
});
afterAll(() => deps.close());

describe('Temporal', () => {
  test('a job runs as a workflow on the real worker process, with its job record and search attributes', async () => {
    const jobsApi = new Jobs(deps.temporal, deps.config.taskQueue);
    const a = new TenantDb(deps.db, (await deps.tenantWithKey()).tenantId);
    const b = new TenantDb(deps.db, (await deps.tenantWithKey()).tenantId);

    const { job, created } = await jobsApi.start(a, {
      type: 'ping',
      prefix: 'ping',
      workflow: ping,
      workflowInput: (jobId) => ({ tenantId: a.tenantId, jobId, message: 'hello' }),
      idempotencyKey: 'idem-1',
    });
    expect(created).toBe(true);
    expect(job._id).toMatch(/^ping_[0-9A-Z]{26}$/);
    expect(job.workflowId).toBe(workflowIdFor(a.tenantId, job._id));

    const handle = await jobsApi.handle(a, job._id);
    const result = await handle!.result();
    expect(result.echo).toBe('hello');
    // the activity ran in the worker process the stack started, not in this test process
    expect(result.pid).not.toBe(process.pid);

    const record = await a.collection(jobs).findOne({ _id: job._id });
    expect(record).toMatchObject({ status: 'completed', result: { echo: 'hello' } });
    expect(record!.finishedAt).toBeInstanceOf(Date);

    const described = await handle!.describe();
    expect(described.searchAttributes).toMatchObject({ TenantId: [a.tenantId], JobType: ['ping'] });

    // a repeated start with the same Idempotency-Key is the same job
    const again = await jobsApi.start(a, {
      type: 'ping',
      prefix: 'ping',
      workflow: ping,
      workflowInput: (jobId) => ({ tenantId: a.tenantId, jobId, message: 'never started' }),
      idempotencyKey: 'idem-1',
    });
    expect(again).toMatchObject({ created: false, job: { _id: job._id } });

    // another tenant cannot see or address it
    expect(await jobsApi.get(b, job._id)).toBeNull();
    expect(await jobsApi.handle(b, job._id)).toBeNull();
  });

  test('the Temporal UI answers on its port', async () => {
    const { temporalUiUrl } = testStack();
    const res = await fetch(temporalUiUrl!);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<html');
  });
});

describe('MongoDB wire protocol (FerretDB)', () => {
  test('a unique-index violation surfaces as a duplicate error, and the second document is not written', async () => {
    const col = deps.db.collection('test_unique');
    await col.createIndex({ tenantId: 1, sku: 1 }, { unique: true });
    await col.insertOne({ tenantId: 't1', sku: 'ABC' });
    const err = await col.insertOne({ tenantId: 't1', sku: 'ABC' }).catch((e: unknown) => e);
    expect(isDuplicateKeyError(err)).toBe(true);
    const bulkErr = await col
      .bulkWrite([{ insertOne: { document: { tenantId: 't1', sku: 'ABC' } } }])
      .catch((e: unknown) => e);
    expect(isDuplicateKeyError(bulkErr)).toBe(true);
    expect(await col.countDocuments({ tenantId: 't1', sku: 'ABC' })).toBe(1);
    await col.insertOne({ tenantId: 't2', sku: 'ABC' }); // unique per tenant only
    // an update the index refuses is recognised too (FerretDB reports it unlike an insert's)
    await col.insertOne({ tenantId: 't1', sku: 'DEF' });
    const updateErr = await col
      .updateOne({ tenantId: 't1', sku: 'DEF' }, { $set: { sku: 'ABC' } })
      .catch((e: unknown) => e);
    expect(isDuplicateKeyError(updateErr)).toBe(true);
    expect(await col.countDocuments({ tenantId: 't1', sku: 'DEF' })).toBe(1);
  });

  test('an update command of 250 single-document statements completes, and writes go on after it', async () => {
    // FerretDB 1.24 kept every statement's query open to the end of the command: at 100 (its pool)
    // the command waited for a connection for ever, holding every write behind the front door.
    // Our build closes each one (scripts/servers/ferretdb/_overlay/internal/handler/msg_update.go).
    const col = deps.db.collection<{ _id: string; n: number }>('test_bulk_updates');
    const docs = Array.from({ length: 250 }, (_, i) => ({ _id: `doc-${i}`, n: 0 }));
    await col.insertMany(docs);
    const within = <T>(ms: number, p: Promise<T>) =>
      Promise.race([
        p,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms)),
      ]);
    const res = await within(
      30_000,
      col.bulkWrite(docs.map((d) => ({ updateOne: { filter: { _id: d._id }, update: { $inc: { n: 1 } } } }))),
    );
    expect(res.modifiedCount).toBe(250);
    await within(10_000, col.insertOne({ _id: 'after', n: 0 }));
    expect(await col.countDocuments({ n: 1 })).toBe(250);
  });
});

describe('single-document atomicity (the embedded FerretDB serializes writes, as MongoDB isolates them)', () => {
  test('of 20 concurrent guarded moves exactly one matches', async () => {
    const col = deps.db.collection('test_atomic');
    const { insertedId } = await col.insertOne({ state: 'pending' });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        col.findOneAndUpdate(
          { _id: insertedId, state: 'pending' },
          { $set: { state: i % 2 ? 'accepted' : 'rejected', by: i } },
        ),
      ),
    );
    expect(results.filter((r) => r !== null)).toHaveLength(1);
  });

  test('200 concurrent $inc lose nothing, and a guarded decrement never goes below zero', async () => {
    const col = deps.db.collection('test_atomic');
    const { insertedId } = await col.insertOne({ n: 0, stock: 10 });
    await Promise.all(Array.from({ length: 200 }, () => col.updateOne({ _id: insertedId }, { $inc: { n: 1 } })));
    const decrements = await Promise.all(
      Array.from({ length: 50 }, () => col.updateOne({ _id: insertedId, stock: { $gte: 1 } }, { $inc: { stock: -1 } })),
    );
    expect(decrements.filter((r) => r.modifiedCount === 1)).toHaveLength(10);
    expect(await col.findOne({ _id: insertedId })).toMatchObject({ n: 200, stock: 0 });
  });
});

describe('object store (MinIO)', () => {
  const bucket = () => deps.config.s3.bucket;

  async function post(url: string, fields: Record<string, string>, body: Buffer, key?: string): Promise<Response> {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, name === 'key' && key ? key : value);
    form.append('file', new Blob([body]), 'upload.csv');
    return fetch(url, { method: 'POST', body: form });
  }

  test('a presigned POST within its policy uploads the object, encrypted with SSE-S3', async () => {
    const key = `uploads/ten_test/${randomBytes(6).toString('hex')}.csv`;
    const { url, fields } = await presignUpload(deps.s3, bucket(), key, { maxBytes: 1024 });
    const res = await post(url, fields, Buffer.from('sku,title\nA,Alpha\n'));
    expect(res.status).toBeLessThan(300);
    const head = await deps.s3.send(new HeadObjectCommand({ Bucket: bucket(), Key: key }));
    expect(head.ServerSideEncryption).toBe('AES256');
    const got = await deps.s3.send(new GetObjectCommand({ Bucket: bucket(), Key: key }));
    expect(await got.Body!.transformToString()).toBe('sku,title\nA,Alpha\n');
  });

  test('MinIO itself refuses an upload over the size limit', async () => {
    const key = `uploads/ten_test/${randomBytes(6).toString('hex')}.csv`;
    const { url, fields } = await presignUpload(deps.s3, bucket(), key, { maxBytes: 1024 });
    const res = await post(url, fields, Buffer.alloc(2048, 'a'));
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('EntityTooLarge');
    await expect(deps.s3.send(new HeadObjectCommand({ Bucket: bucket(), Key: key }))).rejects.toMatchObject({
      name: 'NotFound',
    });
  });

  test('MinIO itself refuses a key outside the signed one (another prefix)', async () => {
    const key = `uploads/ten_test/${randomBytes(6).toString('hex')}.csv`;
    const { url, fields } = await presignUpload(deps.s3, bucket(), key, { maxBytes: 1024 });
    const other = `uploads/ten_other/${randomBytes(6).toString('hex')}.csv`;
    const res = await post(url, fields, Buffer.from('a,b\n'), other);
    expect(res.status).toBe(403);
    await expect(deps.s3.send(new HeadObjectCommand({ Bucket: bucket(), Key: other }))).rejects.toMatchObject({
      name: 'NotFound',
    });
  });

  test('an empty upload is refused (1 byte minimum)', async () => {
    const key = `uploads/ten_test/${randomBytes(6).toString('hex')}.csv`;
    const { url, fields } = await presignUpload(deps.s3, bucket(), key, { maxBytes: 1024 });
    const res = await post(url, fields, Buffer.alloc(0));
    expect(res.status).toBe(400);
  });
});

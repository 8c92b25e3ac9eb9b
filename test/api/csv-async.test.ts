import { PutObjectCommand } from '@aws-sdk/client-s3';
import { expectError } from '../helpers/expect-error';
import { http, TestDeps, testStack } from '../helpers/stack';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';
import { jobs } from '../../shared/jobs/collection';
import { TenantDb } from '../../shared/db/tenant-db';

/** The async CSV flow through HTTP: upload URL, upload to the object store, validate, import job, poll, error report. */
const { apiUrl } = testStack();
let deps: TestDeps;
let key: string;
let tenantId: string;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  ({ key, tenantId } = await deps.tenantWithKey());
});
afterAll(() => deps.close());

const sku = () => `A${Date.now().toString(36).toUpperCase()}${++n}`;
const csv = (rows: Record<string, string | number>[]) =>
  toCsvText(
    nativeLayout.columns,
    rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, String(v)]))),
  );

async function upload(content: string, k = key): Promise<string> {
  const res = await http(apiUrl, 'POST', '/products/bulk/csv/upload-url', { key: k });
  expect(res.status).toBe(200);
  const form = new FormData();
  for (const [name, value] of Object.entries(res.body.fields as Record<string, string>)) form.append(name, value);
  form.append('file', new Blob([content]), 'products.csv');
  const put = await fetch(res.body.url, { method: 'POST', body: form });
  expect(put.status).toBeLessThan(300);
  return res.body.s3Key;
}

async function finished(jobId: string, k = key) {
  for (let i = 0; i < 300; i++) {
    const res = await http(apiUrl, 'GET', `/products/bulk/csv/import/${jobId}`, { key: k });
    expect(res.status).toBe(200);
    if (['completed', 'failed', 'cancelled'].includes(res.body.status)) return res.body;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`job ${jobId} did not finish`);
}

test('upload-url: a presigned POST under the tenant prefix, 600 s, up to 25 MiB, SSE', async () => {
  const res = await http(apiUrl, 'POST', '/products/bulk/csv/upload-url', { key });
  expect(res.body).toMatchObject({
    s3Key: expect.stringMatching(new RegExp(`^uploads/${tenantId}/upl_[0-9A-Z]{26}\\.csv$`)),
    expiresIn: 600,
    maxBytes: 25 * 1024 * 1024,
  });
  expect(res.body.fields).toMatchObject({ key: res.body.s3Key, 'x-amz-server-side-encryption': 'AES256' });
});

test('validate, import as a job, poll to the end; a failed row is in the error report', async () => {
  const good = [sku(), sku(), sku()];
  const bad = sku();
  const s3Key = await upload(
    csv([...good.map((s) => ({ sku: s, title: `Product ${s}`, price: 5 })), { sku: bad, title: 'Bad', price: -1 }]),
  );
  const validation = await http(apiUrl, 'POST', '/products/bulk/csv/validate', { key, body: { s3Key } });
  expect(validation.body).toEqual({
    rows: 4,
    validRows: 3,
    invalidRows: [{ row: 5, sku: bad, errors: [expect.stringContaining('price')] }],
    exceedsRowCap: false,
    exceedsVariantCap: false,
    structuralErrors: [],
  });
  const started = await http(apiUrl, 'POST', '/products/bulk/csv/import', {
    key,
    body: { s3Key, config: { createIfNotExists: true, maxRows: 1, chunkSize: 1, operationName: 'async load' } },
  });
  expect(started.status).toBe(202);
  expect(started.body.jobId).toMatch(/^csvimp_/);
  const status = await finished(started.body.jobId);
  expect(status).toMatchObject({
    jobId: started.body.jobId,
    status: 'completed',
    percent: 100,
    processedRows: 4,
    totalRows: 4,
    created: 3,
    updated: 0,
    failed: 1,
    skipped: 0,
  });
  // the report needs no API key
  const report = await fetch(status.errorReportUrl);
  expect(report.status).toBe(200);
  const text = await report.text();
  expect(text.split('\r\n')[0]).toBe('row,sku,errors');
  expect(text).toContain(`5,${bad},`);
  for (const s of good)
    expect((await http(apiUrl, 'GET', `/products/sku/${s}/exists`, { key })).body.exists).toBe(true);
  // recorded as a bulk operation that can be rolled back
  const ops = (await http(apiUrl, 'GET', '/products/bulk/operations?type=csv-import', { key })).body.operations;
  expect(ops.find((o: { id: string }) => o.id === `bop_${started.body.jobId}`)).toMatchObject({
    operationName: 'async load',
    status: 'completed',
    counts: { created: 3, failed: 1 },
  });
});

test('a repeated start with the same Idempotency-Key is the same job', async () => {
  const s3Key = await upload(csv([{ sku: sku(), title: 'x', price: 1 }]));
  const headers = { 'idempotency-key': `idem-${sku()}` };
  const a = await http(apiUrl, 'POST', '/products/bulk/csv/import', {
    key,
    headers,
    body: { s3Key, config: { createIfNotExists: true } },
  });
  const b = await http(apiUrl, 'POST', '/products/bulk/csv/import', {
    key,
    headers,
    body: { s3Key, config: { createIfNotExists: true } },
  });
  expect(b.body.jobId).toBe(a.body.jobId);
  await finished(a.body.jobId);
});

test('skipErrorRows false: one bad row and nothing is written', async () => {
  const good = sku();
  const s3Key = await upload(
    csv([
      { sku: good, title: 'Good', price: 1 },
      { sku: sku(), title: 'Bad', price: 'x' },
    ]),
  );
  const started = await http(apiUrl, 'POST', '/products/bulk/csv/import', {
    key,
    body: { s3Key, config: { createIfNotExists: true, skipErrorRows: false } },
  });
  const status = await finished(started.body.jobId);
  expect(status).toMatchObject({ status: 'completed', created: 0, failed: 1, skipped: 1 });
  expect((await http(apiUrl, 'GET', `/products/sku/${good}/exists`, { key })).body.exists).toBe(false);
});

describe('errors', () => {
  test('a key outside the tenant prefix → 403 forbidden/invalid-s3-key (import and validate)', async () => {
    const other = await deps.tenantWithKey();
    const theirs = await upload(csv([{ sku: sku(), title: 'x', price: 1 }]), other.key);
    expectError(
      await http(apiUrl, 'POST', '/products/bulk/csv/import', { key, body: { s3Key: theirs } }),
      403,
      'forbidden/invalid-s3-key',
    );
    expectError(
      await http(apiUrl, 'POST', '/products/bulk/csv/validate', { key, body: { s3Key: theirs } }),
      403,
      'forbidden/invalid-s3-key',
    );
    expectError(
      await http(apiUrl, 'POST', '/products/bulk/csv/import', {
        key,
        body: { s3Key: `uploads/${tenantId}/../${other.tenantId}/x.csv` },
      }),
      403,
      'forbidden/invalid-s3-key',
    );
  });

  test('an absent object → 404 not-found/s3-object', async () => {
    expectError(
      await http(apiUrl, 'POST', '/products/bulk/csv/import', {
        key,
        body: { s3Key: `uploads/${tenantId}/never-uploaded.csv` },
      }),
      404,
      'not-found/s3-object',
    );
  });

  test('a file over 25 MiB (put there by other means) → 400 bad-request/file-too-large: we check too', async () => {
    const s3Key = `uploads/${tenantId}/too-big.csv`;
    await deps.s3.send(
      new PutObjectCommand({
        Bucket: deps.config.s3.bucket,
        Key: s3Key,
        Body: Buffer.alloc(25 * 1024 * 1024 + 1, 'a'),
      }),
    );
    expectError(
      await http(apiUrl, 'POST', '/products/bulk/csv/import', { key, body: { s3Key } }),
      400,
      'bad-request/file-too-large',
    );
  });

  test('invalid config → 400 bad-request/invalid-config; keys outside the allowlist are dropped', async () => {
    const s3Key = await upload(csv([{ sku: sku(), title: 'x', price: 1 }]));
    expectError(
      await http(apiUrl, 'POST', '/products/bulk/csv/import', {
        key,
        body: { s3Key, config: { skipErrorRows: 'yes' } },
      }),
      400,
      'bad-request/invalid-config',
    );
    expectError(
      await http(apiUrl, 'POST', '/products/bulk/csv/import', { key, body: { s3Key, config: { format: 'xml' } } }),
      400,
      'bad-request/invalid-config',
    );
    expectError(
      await http(apiUrl, 'POST', '/products/bulk/csv/import', {
        key,
        body: { s3Key, config: { fieldsToUpdate: ['prcie'] } },
      }),
      400,
      'bad-request/invalid-config',
    );
    expectError(
      await http(apiUrl, 'POST', '/products/bulk/csv/import', {
        key,
        body: { s3Key, config: { mappings: { constructor: 'sku' } } },
      }),
      400,
      'bad-request/invalid-config',
    );
    // a __proto__ key is refused by the JSON parser itself, before any handler sees it
    const proto = await http(apiUrl, 'POST', '/products/bulk/csv/import', {
      key,
      body: { s3Key, config: { mappings: JSON.parse('{"__proto__":"sku"}') } },
    });
    expectError(proto, 400, 'validation-error');
    expect(proto.body.message).toContain('prototype');
  });

  test('not a CSV → the job fails with a structural error', async () => {
    const s3Key = await upload('sku,title\n"unclosed,quote\n');
    const validation = await http(apiUrl, 'POST', '/products/bulk/csv/validate', { key, body: { s3Key } });
    expect(validation.body.structuralErrors).toHaveLength(1);
    const started = await http(apiUrl, 'POST', '/products/bulk/csv/import', { key, body: { s3Key } });
    expect((await finished(started.body.jobId)).status).toBe('failed');
  });

  test("unknown job, or another tenant's → 404 not-found", async () => {
    expectError(await http(apiUrl, 'GET', '/products/bulk/csv/import/csvimp_NOPE', { key }), 404, 'not-found');
    const s3Key = await upload(csv([{ sku: sku(), title: 'x', price: 1 }]));
    const started = await http(apiUrl, 'POST', '/products/bulk/csv/import', { key, body: { s3Key } });
    const other = await deps.tenantWithKey();
    expectError(
      await http(apiUrl, 'GET', `/products/bulk/csv/import/${started.body.jobId}`, { key: other.key }),
      404,
      'not-found',
    );
    await finished(started.body.jobId);
  });

  test('too many async jobs running → 429 rate-limited with Retry-After', async () => {
    const t = await deps.tenantWithKey();
    const s3Key = await upload(csv([{ sku: sku(), title: 'x', price: 1 }]), t.key);
    const now = new Date();
    await new TenantDb(deps.db, t.tenantId)
      .collection(jobs)
      .insertMany(
        [1, 2, 3].map((i) => ({
          _id: `csvimp_busy${i}${Date.now()}`,
          type: 'csv-import',
          workflowId: 'x',
          status: 'processing' as const,
          idempotencyKey: `busy${i}`,
          input: {},
          result: null,
          error: null,
          createdAt: now,
          updatedAt: now,
          finishedAt: null,
        })),
      );
    const res = await http(apiUrl, 'POST', '/products/bulk/csv/import', { key: t.key, body: { s3Key } });
    expectError(res, 429, 'rate-limited');
    expect(res.headers.get('retry-after')).toBe('30');
  });
});

test('a job whose workflow an operator terminated ends failed, and frees its running slot', async () => {
  const t = await deps.tenantWithKey();
  const now = new Date();
  // two jobs hold slots (their workflows cannot be found: they count as running)
  await new TenantDb(deps.db, t.tenantId)
    .collection(jobs)
    .insertMany(
      [1, 2].map((i) => ({
        _id: `csvimp_held${i}${Date.now()}`,
        type: 'csv-import',
        workflowId: 'x',
        status: 'processing' as const,
        idempotencyKey: `held${i}`,
        input: {},
        result: null,
        error: null,
        createdAt: now,
        updatedAt: now,
        finishedAt: null,
      })),
    );
  const rows = Array.from({ length: 2000 }, () => ({ sku: sku(), title: 'x', price: 1 }));
  const started = await http(apiUrl, 'POST', '/products/bulk/csv/import', {
    key: t.key,
    body: { s3Key: await upload(csv(rows), t.key) },
  });
  expect(started.status).toBe(202);
  const record = await new TenantDb(deps.db, t.tenantId).collection(jobs).findOne({ _id: started.body.jobId });
  await deps.temporal.workflow.getHandle(record!.workflowId).terminate('operator: stuck');

  // the third slot is free again without anyone polling the terminated job first
  const next = await http(apiUrl, 'POST', '/products/bulk/csv/import', {
    key: t.key,
    body: { s3Key: await upload(csv([{ sku: sku(), title: 'y', price: 1 }]), t.key) },
  });
  expect(next.status).toBe(202);
  const status = await http(apiUrl, 'GET', `/products/bulk/csv/import/${started.body.jobId}`, { key: t.key });
  expect(status.body).toMatchObject({ status: 'failed', error: expect.stringContaining('terminated') });
  expect(await new TenantDb(deps.db, t.tenantId).collection(jobs).findOne({ _id: started.body.jobId })).toMatchObject({
    status: 'failed',
    finishedAt: expect.any(Date),
  });
  await finished(next.body.jobId, t.key);

  // a job whose workflow is gone (purged after Temporal's retention) ends failed too, once old enough
  const old = new Date(Date.now() - 11 * 60_000);
  const gone = `csvimp_gone${Date.now()}`;
  await new TenantDb(deps.db, t.tenantId)
    .collection(jobs)
    .insertOne({
      _id: gone,
      type: 'csv-import',
      workflowId: `${t.tenantId}/${gone}`,
      status: 'processing',
      idempotencyKey: gone,
      input: {},
      result: null,
      error: null,
      createdAt: old,
      updatedAt: old,
      finishedAt: null,
    });
  expect((await http(apiUrl, 'GET', `/products/bulk/csv/import/${gone}`, { key: t.key })).body).toMatchObject({
    status: 'failed',
    error: expect.stringContaining('gone'),
  });
});

describe('async export', () => {
  async function exported(jobId: string, k = key) {
    for (let i = 0; i < 300; i++) {
      const res = await http(apiUrl, 'GET', `/products/bulk/csv/export/${jobId}`, { key: k });
      expect(res.status).toBe(200);
      if (res.body.status === 'completed' || res.body.status === 'failed') return res.body;
      expect(res.body.downloadUrl).toBeUndefined();
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error('export did not finish');
  }

  test('a job streams the selection to the object store; the download needs no key; importing it changes nothing', async () => {
    const t = await deps.tenantWithKey();
    const skus = [sku(), sku(), sku()];
    for (const s of skus)
      await http(apiUrl, 'POST', '/products', {
        key: t.key,
        body: { sku: s, title: { value: s }, price: 2, brand: 'Exported' },
      });
    const started = await http(apiUrl, 'POST', '/products/bulk/csv/export', {
      key: t.key,
      body: { format: 'native', selection: 'filter', filters: { brands: ['Exported'] } },
    });
    expect(started.status).toBe(202);
    expect(started.body.jobId).toMatch(/^csvexp_/);
    const status = await exported(started.body.jobId, t.key);
    expect(status).toMatchObject({ status: 'completed', percent: 100, count: 3, totalRows: 3, processedRows: 3 });
    const file = await fetch(status.downloadUrl);
    expect(file.status).toBe(200);
    const text = await file.text();
    for (const s of skus) expect(text).toContain(s);
    const again = await http(apiUrl, 'POST', '/products/bulk/csv/import', { key: t.key, body: { content: text } });
    expect(again.body).toMatchObject({ totalProcessed: 3, skipped: 3, created: 0, updated: 0, errors: [] });
  });

  test.each([
    [{ format: 'xml', selection: 'all' }, 'unsupported-format'],
    [{ format: 'native', selection: 'everything' }, 'invalid-selection'],
    [{ format: 'native', selection: 'selected' }, 'missing-products'],
    [{ format: 'native', selection: 'filter' }, 'missing-filters'],
    [
      { format: 'native', selection: 'selected', productIds: Array.from({ length: 5001 }, (_, i) => `S${i}`) },
      'too-many-products',
    ],
  ])('%j → 400 %s', async (body, code) => {
    expectError(await http(apiUrl, 'POST', '/products/bulk/csv/export', { key, body }), 400, code);
  });

  test("unknown or another tenant's export job → 404", async () => {
    expectError(await http(apiUrl, 'GET', '/products/bulk/csv/export/csvexp_NOPE', { key }), 404, 'not-found');
    const started = await http(apiUrl, 'POST', '/products/bulk/csv/export', {
      key,
      body: { format: 'native', selection: 'all' },
    });
    const other = await deps.tenantWithKey();
    expectError(
      await http(apiUrl, 'GET', `/products/bulk/csv/export/${started.body.jobId}`, { key: other.key }),
      404,
      'not-found',
    );
    await exported(started.body.jobId);
  });
});

import { PutObjectCommand } from '@aws-sdk/client-s3';
import { expectError } from '../helpers/expect-error';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';
import { FINISHED_JOB_STATUSES, jobs, type JobStatus } from '../../shared/jobs/collection';
import { TenantDb } from '../../shared/db/tenant-db';

/** The async CSV flow through HTTP: upload URL, upload to the object store, validate, import job, poll, error report. */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  api = new ApiClient(tenant.key);
  tenantId = tenant.tenantId;
});
afterAll(() => deps.close());

const sku = () => `A${Date.now().toString(36).toUpperCase()}${++n}`;
const csv = (rows: Record<string, string | number>[]) =>
  toCsvText(
    nativeLayout.columns,
    rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, String(v)]))),
  );

async function upload(content: string, client = api): Promise<string> {
  const res = await client.post('/products/bulk/csv/upload-url');
  expect(res.status).toBe(200);
  const form = new FormData();
  for (const [name, value] of Object.entries(res.body.fields as Record<string, string>)) form.append(name, value);
  form.append('file', new Blob([content]), 'products.csv');
  const put = await fetch(res.body.url, { method: 'POST', body: form });
  expect(put.status).toBeLessThan(300);
  return res.body.s3Key;
}

async function finished(jobId: string, client = api) {
  for (let i = 0; i < 300; i++) {
    const res = await client.get(`/products/bulk/csv/import/${jobId}`);
    expect(res.status).toBe(200);
    if (FINISHED_JOB_STATUSES.includes(res.body.status as JobStatus)) return res.body;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`job ${jobId} did not finish`);
}

const startImport = (body: Record<string, unknown>, client = api) => client.post('/products/bulk/csv/import', body);

/**
 * Running csv-import jobs of a tenant whose workflows cannot be found: each holds one of its
 * async slots (Jobs.settle counts such a job as running).
 */
async function holdRunningSlots(tenantId: string, n: number, tag: string): Promise<void> {
  await recordJobs(tenantId, n, tag, { status: 'processing', createdAt: new Date(), types: ['csv-import'] });
}

/** Job records as earlier starts left them (their workflows are nowhere). */
async function recordJobs(
  tenantId: string,
  n: number,
  tag: string,
  {
    status,
    createdAt,
    types,
  }: { status: 'processing' | 'completed'; createdAt: Date; types: ('csv-import' | 'csv-export')[] },
): Promise<void> {
  await new TenantDb(deps.db, tenantId).collection(jobs).insertMany(
    Array.from({ length: n }, (_, i) => ({
      _id: `csvimp_${tag}${i + 1}${Date.now()}`,
      type: types[i % types.length],
      workflowId: 'x',
      status,
      idempotencyKey: `${tag}${i + 1}`,
      input: {},
      result: null,
      error: null,
      createdAt,
      updatedAt: createdAt,
      finishedAt: status === 'completed' ? createdAt : null,
    })),
  );
}

test('upload-url: a presigned POST under the tenant prefix, 600 s, up to 25 MiB, SSE', async () => {
  const res = await api.post('/products/bulk/csv/upload-url');
  expect(res.body).toMatchObject({
    s3Key: expect.stringMatching(new RegExp(`^uploads/${tenantId}/upl_[0-9A-Z]{26}\\.csv$`)),
    expiresIn: 600,
    maxBytes: 25 * 1024 * 1024,
  });
  expect(res.body.fields).toMatchObject({ key: res.body.s3Key, 'x-amz-server-side-encryption': 'AES256' });
});

// Before, validate counted only the rows that make products (1 here) against the row cap while
// the import counts every record the file holds, so validate answered exceedsRowCap false for a
// file the import then refused.
test('validate counts the row cap as the import does (every record, blank ones too) and says the file is refused', async () => {
  const content = `sku,title,price\n${sku()},Padded,5\n${',,\n'.repeat(100_000)}`;
  const validation = await api.post('/products/bulk/csv/validate', { s3Key: await upload(content) });
  expect(validation.body).toMatchObject({
    exceedsRowCap: true,
    validRows: 0,
    structuralErrors: ['the file has 100001 rows, over the cap'],
  });
}, 120_000);

test('validate, import as a job, poll to the end; a failed row is in the error report', async () => {
  const good = [sku(), sku(), sku()];
  const bad = sku();
  const s3Key = await upload(
    csv([...good.map((s) => ({ sku: s, title: `Product ${s}`, price: 5 })), { sku: bad, title: 'Bad', price: -1 }]),
  );
  const validation = await api.post('/products/bulk/csv/validate', { s3Key });
  expect(validation.body).toEqual({
    rows: 4,
    validRows: 3,
    invalidRows: [{ row: 5, sku: bad, errors: [expect.stringContaining('price')] }],
    exceedsRowCap: false,
    exceedsVariantCap: false,
    structuralErrors: [],
  });
  const started = await startImport({
    s3Key,
    config: { createIfNotExists: true, maxRows: 1, chunkSize: 1, operationName: 'async load' },
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
    // what rolls it back
    operationId: `bop_${started.body.jobId}`,
  });
  // the report needs no API key
  const report = await fetch(status.errorReportUrl);
  expect(report.status).toBe(200);
  const text = await report.text();
  expect(text.split('\r\n')[0]).toBe('row,sku,errors');
  expect(text).toContain(`5,${bad},`);
  for (const s of good) expect((await api.get(`/products/sku/${s}/exists`)).body.exists).toBe(true);
  // recorded as a bulk operation that can be rolled back
  const ops = (await api.get('/products/bulk/operations?type=csv-import')).body.operations;
  expect(ops.find((o: { id: string }) => o.id === `bop_${started.body.jobId}`)).toMatchObject({
    operationName: 'async load',
    status: 'completed',
    counts: { created: 3, failed: 1 },
  });
});

test('a repeated start with the same Idempotency-Key is the same job', async () => {
  const s3Key = await upload(csv([{ sku: sku(), title: 'x', price: 1 }]));
  const headers = { 'idempotency-key': `idem-${sku()}` };
  const body = { s3Key, config: { createIfNotExists: true } };
  const a = await api.post('/products/bulk/csv/import', body, { headers });
  const b = await api.post('/products/bulk/csv/import', body, { headers });
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
  const started = await startImport({ s3Key, config: { createIfNotExists: true, skipErrorRows: false } });
  const status = await finished(started.body.jobId);
  expect(status).toMatchObject({ status: 'completed', created: 0, failed: 1, skipped: 1 });
  expect((await api.get(`/products/sku/${good}/exists`)).body.exists).toBe(false);
});

describe('errors', () => {
  test('a key outside the tenant prefix → 403 forbidden/invalid-s3-key (import and validate)', async () => {
    const other = await deps.tenantWithKey();
    const theirs = await upload(csv([{ sku: sku(), title: 'x', price: 1 }]), api.as(other.key));
    expectError(await startImport({ s3Key: theirs }), 403, 'forbidden/invalid-s3-key');
    expectError(await api.post('/products/bulk/csv/validate', { s3Key: theirs }), 403, 'forbidden/invalid-s3-key');
    expectError(
      await startImport({ s3Key: `uploads/${tenantId}/../${other.tenantId}/x.csv` }),
      403,
      'forbidden/invalid-s3-key',
    );
  });

  test.each([
    ['half of a UTF-16 pair', () => `uploads/${tenantId}/\ud800.csv`],
    ['more than S3’s 1,024 bytes', () => `uploads/${tenantId}/${'a'.repeat(5000)}.csv`],
  ])('a key with %s → 403 forbidden/invalid-s3-key (import and validate)', async (_what, key) => {
    expectError(await startImport({ s3Key: key() }), 403, 'forbidden/invalid-s3-key');
    expectError(await api.post('/products/bulk/csv/validate', { s3Key: key() }), 403, 'forbidden/invalid-s3-key');
  });

  test('an absent object → 404 not-found/s3-object', async () => {
    expectError(await startImport({ s3Key: `uploads/${tenantId}/never-uploaded.csv` }), 404, 'not-found/s3-object');
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
    expectError(await startImport({ s3Key }), 400, 'bad-request/file-too-large');
  });

  test('invalid config → 400 bad-request/invalid-config; keys outside the allowlist are dropped', async () => {
    const s3Key = await upload(csv([{ sku: sku(), title: 'x', price: 1 }]));
    expectError(await startImport({ s3Key, config: { skipErrorRows: 'yes' } }), 400, 'bad-request/invalid-config');
    expectError(await startImport({ s3Key, config: { format: 'xml' } }), 400, 'bad-request/invalid-config');
    expectError(await startImport({ s3Key, config: { fieldsToUpdate: ['prcie'] } }), 400, 'bad-request/invalid-config');
    expectError(
      await startImport({ s3Key, config: { mappings: { constructor: 'sku' } } }),
      400,
      'bad-request/invalid-config',
    );
    // a __proto__ key is refused by the JSON parser itself, before any handler sees it
    const proto = await startImport({ s3Key, config: { mappings: JSON.parse('{"__proto__":"sku"}') } });
    expectError(proto, 400, 'validation-error');
    expect(proto.body.message).toContain('prototype');
  });

  test('keys outside the allowlist are ignored, whatever their value; only allowlisted keys reach the job', async () => {
    const s3Key = await upload(csv([{ sku: sku(), title: 'x', price: 1 }]));
    const started = await startImport({
      s3Key,
      config: { createIfNotExists: true, maxRows: 'many', chunkSize: -1, maxVariantsPerProduct: { any: 'thing' } },
    });
    expect(started.status).toBe(202);
    const record = await new TenantDb(deps.db, tenantId).collection(jobs).findOne({ _id: started.body.jobId });
    expect(record?.input.config).toEqual({
      format: 'native',
      skipErrorRows: true,
      createIfNotExists: true,
      enableSideEffects: false,
    });
    expect(await finished(started.body.jobId)).toMatchObject({ status: 'completed', created: 1 });
  });

  test('column names with a dot or a leading $ are mapped, and the job records them (no 500)', async () => {
    const code = sku();
    const s3Key = await upload(`Item.SKU,$title,price\n${code},Dotted,3\n`);
    const started = await startImport({
      s3Key,
      config: { mappings: { 'Item.SKU': 'sku', $title: 'title' }, createIfNotExists: true },
    });
    expect(started.status).toBe(202);
    const record = await new TenantDb(deps.db, tenantId).collection(jobs).findOne({ _id: started.body.jobId });
    expect(record?.input.config).toMatchObject({
      mappings: [
        { column: 'Item.SKU', to: 'sku' },
        { column: '$title', to: 'title' },
      ],
    });
    expect(await finished(started.body.jobId)).toMatchObject({ status: 'completed', created: 1 });
  });

  test.each(['__proto__', 'toString', 'constructor'])(
    'a config format %s → 400 bad-request/invalid-config (import and validate), as any unknown format',
    async (format) => {
      const s3Key = await upload(csv([{ sku: sku(), title: 'x', price: 1 }]));
      expectError(await startImport({ s3Key, config: { format } }), 400, 'bad-request/invalid-config');
      expectError(
        await api.post('/products/bulk/csv/validate', { s3Key, config: { format } }),
        400,
        'bad-request/invalid-config',
      );
    },
  );

  test('not a CSV → the job fails with a structural error', async () => {
    const s3Key = await upload('sku,title\n"unclosed,quote\n');
    const validation = await api.post('/products/bulk/csv/validate', { s3Key });
    expect(validation.body.structuralErrors).toHaveLength(1);
    const started = await startImport({ s3Key });
    expect((await finished(started.body.jobId)).status).toBe('failed');
  });

  test("unknown job, or another tenant's → 404 not-found", async () => {
    expectError(await api.get('/products/bulk/csv/import/csvimp_NOPE'), 404, 'not-found');
    const s3Key = await upload(csv([{ sku: sku(), title: 'x', price: 1 }]));
    const started = await startImport({ s3Key });
    const other = await deps.tenantWithKey();
    expectError(await api.as(other.key).get(`/products/bulk/csv/import/${started.body.jobId}`), 404, 'not-found');
    await finished(started.body.jobId);
  });

  test('too many async jobs running → 429 rate-limited with Retry-After', async () => {
    const t = await deps.tenantWithKey();
    const s3Key = await upload(csv([{ sku: sku(), title: 'x', price: 1 }]), api.as(t.key));
    await holdRunningSlots(t.tenantId, 3, 'busy');
    const res = await startImport({ s3Key }, api.as(t.key));
    expectError(res, 429, 'rate-limited');
    expect(res.headers.get('retry-after')).toBe('30');
  });

  test('60 async jobs started in the last hour → 429 rate-limited with Retry-After 600; older ones do not count', async () => {
    const t = await deps.tenantWithKey();
    const theirs = api.as(t.key);
    const s3Key = await upload(csv([{ sku: sku(), title: 'x', price: 1 }]), theirs);
    // imports and exports share the allowance
    const types: ('csv-import' | 'csv-export')[] = ['csv-import', 'csv-export'];
    await recordJobs(t.tenantId, 59, 'hour', {
      status: 'completed',
      createdAt: new Date(Date.now() - 59 * 60_000),
      types,
    });
    await recordJobs(t.tenantId, 10, 'older', {
      status: 'completed',
      createdAt: new Date(Date.now() - 61 * 60_000),
      types,
    });
    const sixtieth = await startImport({ s3Key }, theirs);
    expect(sixtieth.status).toBe(202);
    const more = await theirs.post('/products/bulk/csv/export', { format: 'native', selection: 'all' });
    expectError(more, 429, 'rate-limited');
    expect(more.body.message).toContain('60 async jobs were started in the last hour');
    expect(more.headers.get('retry-after')).toBe('600');
    await finished(sixtieth.body.jobId, theirs);
  });

  test.each(['import', 'export'])(
    'a retried %s start (same Idempotency-Key) answers its job even once the allowance is used up',
    async (kind) => {
      const t = await deps.tenantWithKey();
      const theirs = api.as(t.key);
      const path = `/products/bulk/csv/${kind}`;
      const body =
        kind === 'import'
          ? { s3Key: await upload(csv([{ sku: sku(), title: 'x', price: 1 }]), theirs) }
          : { format: 'native', selection: 'all' };
      const headers = { 'idempotency-key': `idem-${sku()}` };
      const first = await theirs.post(path, body, { headers });
      expect(first.status).toBe(202);
      await holdRunningSlots(t.tenantId, 3, 'full');
      const again = await theirs.post(path, body, { headers });
      expect([again.status, again.body.jobId]).toEqual([202, first.body.jobId]);
      const other = await theirs.post(path, body, { headers: { 'idempotency-key': `idem-${sku()}` } });
      expectError(other, 429, 'rate-limited');
      const tenantJobs = new TenantDb(deps.db, t.tenantId).collection(jobs);
      expect(await tenantJobs.countDocuments({ type: `csv-${kind}` })).toBe(kind === 'import' ? 4 : 1);
    },
  );

  test('8 starts at once with room for 3: at most 3 run, the others are refused 429 and leave no job', async () => {
    const t = await deps.tenantWithKey();
    const theirs = api.as(t.key);
    const s3Key = await upload(csv([{ sku: sku(), title: 'x', price: 1 }]), theirs);
    const starts = await Promise.all(Array.from({ length: 8 }, () => startImport({ s3Key }, theirs)));
    const admitted = starts.filter((r) => r.status === 202);
    for (const r of starts) if (r.status !== 202) expectError(r, 429, 'rate-limited');
    expect(admitted.length).toBeGreaterThanOrEqual(1);
    expect(admitted.length).toBeLessThanOrEqual(3);
    const recorded = await new TenantDb(deps.db, t.tenantId).collection(jobs).find({}).toArray();
    expect(recorded.map((j) => j._id).sort()).toEqual(admitted.map((r) => r.body.jobId as string).sort());
    for (const r of admitted) await finished(r.body.jobId as string, theirs);
  });
});

test('a job whose workflow an operator terminated ends failed, and frees its running slot', async () => {
  const t = await deps.tenantWithKey();
  const theirs = api.as(t.key);
  // two jobs hold slots (their workflows cannot be found: they count as running)
  await holdRunningSlots(t.tenantId, 2, 'held');
  const rows = Array.from({ length: 2000 }, () => ({ sku: sku(), title: 'x', price: 1 }));
  const started = await startImport({ s3Key: await upload(csv(rows), theirs) }, theirs);
  expect(started.status).toBe(202);
  const record = await new TenantDb(deps.db, t.tenantId).collection(jobs).findOne({ _id: started.body.jobId });
  await deps.temporal.workflow.getHandle(record!.workflowId).terminate('operator: stuck');

  // the third slot is free again without anyone polling the terminated job first
  const next = await startImport({ s3Key: await upload(csv([{ sku: sku(), title: 'y', price: 1 }]), theirs) }, theirs);
  expect(next.status).toBe(202);
  const status = await theirs.get(`/products/bulk/csv/import/${started.body.jobId}`);
  expect(status.body).toMatchObject({ status: 'failed', error: expect.stringContaining('terminated') });
  expect(await new TenantDb(deps.db, t.tenantId).collection(jobs).findOne({ _id: started.body.jobId })).toMatchObject({
    status: 'failed',
    finishedAt: expect.any(Date),
  });
  await finished(next.body.jobId, theirs);

  // a job whose workflow is gone (purged after Temporal's retention) ends failed too, once old enough
  const old = new Date(Date.now() - 11 * 60_000);
  const gone = `csvimp_gone${Date.now()}`;
  await new TenantDb(deps.db, t.tenantId).collection(jobs).insertOne({
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
  expect((await theirs.get(`/products/bulk/csv/import/${gone}`)).body).toMatchObject({
    status: 'failed',
    error: expect.stringContaining('gone'),
  });
});

describe('async export', () => {
  async function exported(jobId: string, client = api) {
    for (let i = 0; i < 300; i++) {
      const res = await client.get(`/products/bulk/csv/export/${jobId}`);
      expect(res.status).toBe(200);
      if (res.body.status === 'completed' || res.body.status === 'failed') return res.body;
      expect(res.body.downloadUrl).toBeUndefined();
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error('export did not finish');
  }

  test('a job streams the selection to the object store; the download needs no key; importing it changes nothing', async () => {
    const t = await deps.tenantWithKey();
    const theirs = api.as(t.key);
    const skus = [sku(), sku(), sku()];
    for (const s of skus) await theirs.post('/products', { sku: s, title: { value: s }, price: 2, brand: 'Exported' });
    const started = await theirs.post('/products/bulk/csv/export', {
      format: 'native',
      selection: 'filter',
      filters: { brands: ['Exported'] },
    });
    expect(started.status).toBe(202);
    expect(started.body.jobId).toMatch(/^csvexp_/);
    const status = await exported(started.body.jobId, theirs);
    expect(status).toMatchObject({ status: 'completed', percent: 100, count: 3, totalRows: 3, processedRows: 3 });
    const file = await fetch(status.downloadUrl);
    expect(file.status).toBe(200);
    const text = await file.text();
    for (const s of skus) expect(text).toContain(s);
    const again = await theirs.post('/products/bulk/csv/import', { content: text });
    expect(again.body).toMatchObject({ totalProcessed: 3, skipped: 3, created: 0, updated: 0, errors: [] });
  });

  test.each([
    [{ format: 'xml', selection: 'all' }, 'unsupported-format'],
    [{ format: '__proto__', selection: 'all' }, 'unsupported-format'],
    [{ format: 'toString', selection: 'all' }, 'unsupported-format'],
    [{ format: 'constructor', selection: 'all' }, 'unsupported-format'],
    [{ format: 'native', selection: 'everything' }, 'invalid-selection'],
    [{ format: 'native', selection: 'selected' }, 'missing-products'],
    [{ format: 'native', selection: 'filter' }, 'missing-filters'],
    [
      { format: 'native', selection: 'selected', productIds: Array.from({ length: 5001 }, (_, i) => `S${i}`) },
      'too-many-products',
    ],
    [{ format: 'native', selection: 'filter', filters: { brands: ['A'], colour: 'red' } }, 'bad-request'],
    [
      { format: 'native', selection: 'filter', filters: { tags: Array.from({ length: 101 }, (_, i) => `t${i}`) } },
      'bad-request',
    ],
  ])('%j → 400 %s', async (body, code) => {
    expectError(await api.post('/products/bulk/csv/export', body), 400, code);
  });

  test("unknown or another tenant's export job → 404", async () => {
    expectError(await api.get('/products/bulk/csv/export/csvexp_NOPE'), 404, 'not-found');
    const started = await api.post('/products/bulk/csv/export', { format: 'native', selection: 'all' });
    const other = await deps.tenantWithKey();
    expectError(await api.as(other.key).get(`/products/bulk/csv/export/${started.body.jobId}`), 404, 'not-found');
    await exported(started.body.jobId);
  });
});

/**
 * Async CSV import and export: ours next to the raw driver, in the same run, on the same database.
 *
 * 1. Starts the whole stack on free ports in a temporary data directory (as the catalog bench).
 * 2. Generates a native-layout file of BENCH_ROWS rows (100,000 by default): products with two
 *    variants each (one row per variant), brands, tags, a description; checks it is ≤ 25 MiB.
 * 3. Uploads it through the API's presigned POST and imports it as an async job
 *    (createIfNotExists), polling the job until it ends; samples the worker's RSS meanwhile and
 *    reads its peak (VmHWM) at the end. Checks the job's counts and the products stored.
 * 4. Baseline: the very documents the import stored, read back, written again with the driver's
 *    raw unordered `bulkWrite` of `replaceOne` upserts (1,000 per call) into a fresh collection
 *    with the products collection's indexes.
 * 5. Export: an async export (selection all, native) of the imported catalog, next to a raw
 *    cursor read of the same documents.
 * 6. Prints a table and writes it to bench/results/import.md.
 *
 * Environment: BENCH_ROWS (100000), BENCH_KEEP_DATA=1, BENCH_LOG_LEVEL (warn), BENCH_WORKERS (1: how many
 * worker processes poll the task queue; the import's chunks run two at a time, so a second worker
 * can take one), BENCH_RESULTS (import.md: the file in bench/results).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import type { Document } from 'mongodb';
import { startStack, type Stack } from '../scripts/stack/stack';
import { startNodeProcess, type Proc } from '../scripts/stack/process';
import { Tenancy } from '../shared/auth/tenancy';
import { connectMongo, ensureIndexes, type Mongo } from '../shared/db/mongo';
import { allCollections } from '../shared/collections';
import { nativeLayout } from '../shared/csv/layouts/native';
import { toCsvText } from '../shared/csv/parse';
import { products } from '../shared/products/collections';
import { MAX_UPLOAD_BYTES } from '../shared/s3/client';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const KEEP_DATA = process.env.BENCH_KEEP_DATA === '1';
const GOAL = 0.75;
const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);
const RESULTS_FILE = process.env.BENCH_RESULTS ?? 'import.md';
const RSS_LIMIT_MB = 300;
const ROOT = resolve(__dirname, '..');
const RESULTS_DIR = join(ROOT, 'bench', 'results');
const BRANDS = ['Northwood', 'Bluepeak', 'Ironforge', 'Silverworks', 'Redcraft', 'Oakwood', 'Stonepeak', 'Riverforge'];
const TAGS = ['new', 'sale', 'gift', 'eco', 'bestseller', 'limited', 'handmade', 'outdoor'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes: number) => bytes / 1024 / 1024;
const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 1 });

/** BENCH_ROWS rows: products of two variants (the last may have one), deterministic. */
function generateCsv(rows: number): { text: string; products: number } {
  const records: Record<string, string>[] = [];
  let i = 0;
  while (records.length < rows) {
    const sku = `IMP-${String(i).padStart(6, '0')}`;
    const base = {
      sku,
      title: `Product ${i}`,
      description: `<p>Product ${i}, a sturdy everyday thing.</p>`,
      brand: BRANDS[i % BRANDS.length],
      status: i % 3 ? 'active' : 'draft',
      price: String(5 + (i % 400)),
      tags: [TAGS[i % TAGS.length], TAGS[(i + 3) % TAGS.length]].join(', '),
    };
    for (let v = 1; v <= 2 && records.length < rows; v++) {
      records.push({
        ...base,
        'variant.sku': `${sku}-V${v}`,
        'variant.title': v === 1 ? 'Small' : 'Large',
        'variant.price': String(6 + (i % 400) + v),
        'variant.position': String(v - 1),
      });
    }
    i++;
  }
  return { text: toCsvText(nativeLayout.columns, records), products: i };
}

/** Peak and current resident memory of a process (Linux /proc), in bytes. */
function memoryOf(pid: number): { peak: number; rss: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
    return { peak: kb('VmHWM'), rss: kb('VmRSS') };
  } catch {
    return null;
  }
}

async function api(base: string, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function poll(
  base: string,
  key: string,
  path: string,
  done: (b: any) => boolean,
  onTick?: () => void,
): Promise<any> {
  for (;;) {
    const b = await api(base, key, 'GET', path);
    onTick?.();
    if (done(b)) return b;
    await sleep(500);
  }
}

async function main(): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-import-'));
  const loadBefore = loadavg();
  let stack: Stack | null = null;
  let mongo: Mongo | null = null;
  const extraWorkers: Proc[] = [];
  try {
    console.log(
      `Import benchmark: ${fmt(ROWS)} rows; machine ${cpus().length} cores, load ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`,
    );
    // generated first: a generation longer than the API's keep-alive would leave the first request on a closed socket
    const { text, products: productCount } = generateCsv(ROWS);
    const bytes = Buffer.byteLength(text);
    console.log(`File: ${fmt(ROWS)} rows, ${fmt(productCount)} products, ${fmt(mb(bytes))} MiB`);
    if (bytes > MAX_UPLOAD_BYTES) throw new Error(`the file is over the upload limit (${bytes} bytes)`);
    stack = await startStack({
      dataDir,
      ports: 'free',
      withApp: true,
      env: { ...process.env, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', MONGODB_DB: 'bench_import' },
      log: (l) => console.log(`  ${l}`),
    });
    const base = stack.apiUrl!;
    mongo = await connectMongo(stack.env.MONGODB_URI, stack.env.MONGODB_DB);
    await ensureIndexes(mongo.db, allCollections);
    const tenancy = new Tenancy(mongo.db);
    const tenant = await tenancy.createTenant('Import benchmark');
    const { key } = await tenancy.issueKey(
      tenant._id,
      ['products:read', 'products:import', 'products:export'],
      'bench',
    );
    const worker = stack.procs.find((p) => p.name === 'worker')!;
    const workerPid = worker.child.pid!;
    // more workers on the same task queue: what one more worker process buys
    for (let n = 2; n <= WORKERS; n++)
      extraWorkers.push(
        startNodeProcess(`worker-${n}`, join(ROOT, 'worker', 'main.ts'), {
          cwd: ROOT,
          logDir: join(dataDir, 'logs'),
          env: { ...process.env, ...stack.env },
        }),
      );
    if (extraWorkers.length) await sleep(5000); // polling before the job starts

    // upload through the presigned POST, as a client does
    const up = await api(base, key, 'POST', '/products/bulk/csv/upload-url');
    console.log(`Uploading to ${up.s3Key} …`);
    const form = new FormData();
    for (const [k, v] of Object.entries(up.fields as Record<string, string>)) form.append(k, v);
    form.append('file', new Blob([text], { type: 'text/csv' }), 'bench.csv');
    const upRes = await fetch(up.url, { method: 'POST', body: form });
    if (upRes.status >= 300) throw new Error(`upload: ${upRes.status} ${await upRes.text()}`);

    console.log('Uploaded; importing …');
    const rssBefore = memoryOf(workerPid);
    let rssMax = rssBefore?.rss ?? 0;
    const sampleRss = () => {
      const m = memoryOf(workerPid);
      if (m) rssMax = Math.max(rssMax, m.rss);
    };
    let t = Date.now();
    const { jobId } = await api(base, key, 'POST', '/products/bulk/csv/import', {
      s3Key: up.s3Key,
      config: { format: 'native', createIfNotExists: true },
    });
    const job = await poll(
      base,
      key,
      `/products/bulk/csv/import/${jobId}`,
      (b) => b.status === 'completed' || b.status === 'failed',
      sampleRss,
    );
    const importSeconds = (Date.now() - t) / 1000;
    const peak = memoryOf(workerPid)?.peak ?? rssMax;
    const stored = await mongo.db.collection('products').countDocuments({ tenantId: tenant._id });
    console.log(
      `Import: ${job.status} in ${importSeconds.toFixed(1)} s; created ${job.created}, failed ${job.failed}, skipped ${job.skipped}; ${stored} products stored; worker RSS ${fmt(mb(rssBefore?.rss ?? 0))} → peak ${fmt(mb(peak))} MiB`,
    );
    const importOk = job.status === 'completed' && job.created === ROWS && job.failed === 0 && stored === productCount;

    // baseline: the same documents, raw unordered bulkWrite upserts into a collection with the same indexes
    const docs: Document[] = await mongo.db.collection('products').find({ tenantId: tenant._id }).toArray();
    const baseCol = mongo.db.collection('baseline_products');
    await baseCol.drop().catch(() => undefined);
    for (const ix of products.indexes) await baseCol.createIndex(ix.key, ix.options ?? {});
    t = Date.now();
    for (let i = 0; i < docs.length; i += 1000) {
      await baseCol.bulkWrite(
        docs.slice(i, i + 1000).map((d) => ({ replaceOne: { filter: { _id: d._id }, replacement: d, upsert: true } })),
        { ordered: false },
      );
    }
    const baseSeconds = (Date.now() - t) / 1000;
    console.log(`Baseline write: ${docs.length} documents in ${baseSeconds.toFixed(1)} s`);

    // export: async job vs a raw cursor over the same documents
    t = Date.now();
    const exp = await api(base, key, 'POST', '/products/bulk/csv/export', { format: 'native', selection: 'all' });
    const expJob = await poll(
      base,
      key,
      `/products/bulk/csv/export/${exp.jobId}`,
      (b) => b.status === 'completed' || b.status === 'failed',
      sampleRss,
    );
    const exportSeconds = (Date.now() - t) / 1000;
    const exportText = expJob.downloadUrl ? await (await fetch(expJob.downloadUrl)).text() : '';
    const exportRows = exportText ? exportText.split('\r\n').filter(Boolean).length - 1 : 0;
    t = Date.now();
    let cursorRows = 0;
    for await (const d of mongo.db.collection('products').find({ tenantId: tenant._id }))
      cursorRows += Math.max(1, (d.variants as unknown[] | undefined)?.length ?? 0);
    const cursorSeconds = (Date.now() - t) / 1000;
    console.log(
      `Export: ${expJob.status} in ${exportSeconds.toFixed(1)} s, ${exportRows} rows; raw cursor ${cursorRows} rows in ${cursorSeconds.toFixed(1)} s`,
    );
    const peakAll = memoryOf(workerPid)?.peak ?? rssMax;

    const importRate = ROWS / importSeconds;
    const baseRate = ROWS / baseSeconds;
    const exportRate = exportRows / exportSeconds;
    const cursorRate = cursorRows / cursorSeconds;
    const ratio = importRate / baseRate;
    const checks = [
      ['import completed, every row created, product count as the file implies', importOk],
      ['export has a row per variant', exportRows === ROWS],
      [`worker peak RSS < ${RSS_LIMIT_MB} MB`, mb(peakAll) < RSS_LIMIT_MB],
    ] as const;
    const date = new Date().toISOString().slice(0, 10);
    const lines = [
      `# CSV import and export: ours vs the raw driver (${date})`,
      '',
      `- ${fmt(ROWS)} rows (${fmt(productCount)} products of 2 variants), native layout, ${fmt(mb(bytes))} MiB; ${WORKERS} worker process${WORKERS === 1 ? '' : 'es'}`,
      `- machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
      `- ours: upload by presigned POST, POST /products/bulk/csv/import, poll until done (stream-parse, stage, plan, batched claims/products/operation items, per-chunk job progress); baseline: the stored documents written again by unordered bulkWrite replaceOne upserts, 1,000 per call, into a collection with the same indexes`,
      '',
      '| measure | ours | baseline | ours / baseline | goal |',
      '|---|---:|---:|---:|---|',
      `| import rows/s | ${fmt(importRate)} (${importSeconds.toFixed(1)} s) | ${fmt(baseRate)} (${baseSeconds.toFixed(1)} s) | ${ratio.toFixed(2)} | ≥ ${GOAL} ${ratio >= GOAL ? 'PASS' : 'MISS'} |`,
      `| export rows/s | ${fmt(exportRate)} (${exportSeconds.toFixed(1)} s) | ${fmt(cursorRate)} (${cursorSeconds.toFixed(1)} s, raw cursor) | ${(exportRate / cursorRate).toFixed(2)} | — |`,
      `| worker RSS MiB | idle ${fmt(mb(rssBefore?.rss ?? 0))}, peak ${fmt(mb(peakAll))} | — | — | < ${RSS_LIMIT_MB} ${mb(peakAll) < RSS_LIMIT_MB ? 'PASS' : 'MISS'} |`,
      '',
      ...checks.map(([what, ok]) => `- ${ok ? 'ok' : 'FAILED'}: ${what}`),
    ];
    const report = lines.join('\n') + '\n';
    console.log('\n' + report);
    mkdirSync(RESULTS_DIR, { recursive: true });
    // one file per benchmark, the newest run (git keeps the earlier ones)
    const file = join(RESULTS_DIR, RESULTS_FILE);
    writeFileSync(file, report);
    console.log(`Written to ${file}`);
    return checks.every(([, ok]) => ok) ? 0 : 1;
  } finally {
    for (const w of extraWorkers) await w.stop().catch(() => undefined);
    await mongo?.client.close().catch(() => undefined);
    await stack?.stop().catch((err) => console.error('stopping the stack:', err));
    if (KEEP_DATA) console.log(`data kept in ${dataDir}`);
    else rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);

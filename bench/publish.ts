/**
 * Publication: products/s of a 5,000-product publication next to the raw rate of the same HTTP
 * calls made in a plain loop, with the same concurrency, in the same run.
 *
 * 1. Starts the whole stack (API, worker, servers) on free ports in a temporary directory.
 * 2. Seeds BENCH_PRODUCTS products (5,000 by default; 2 variants each, an image, a category)
 *    through `Catalog.insertMany` (the import's path), and starts a local channel server (node:http)
 *    that answers every PUT at once with a handle.
 * 3. ours: POST /channels (concurrency BENCH_CONCURRENCY, 8 by default), POST /products/export
 *    mode all (a job: 202), polled until it ends. Time from the POST to the end.
 * 4. baseline: the same PUTs (the payloads the channel received from us, same URLs and headers),
 *    sent by a plain loop with the same number in flight.
 * 5. Checks the job published every product and the server got one distinct Idempotency-Key per
 *    product; writes bench/results/publish.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ObjectId } from 'mongodb';
import { startStack, type Stack } from '../scripts/stack/stack';
import { Tenancy } from '../shared/auth/tenancy';
import { mapLimit } from '../shared/concurrency';
import { connectMongo, ensureIndexes, type Mongo } from '../shared/db/mongo';
import { allCollections } from '../shared/collections';
import { TenantDb } from '../shared/db/tenant-db';
import { Catalog } from '../shared/products/catalog';

const PRODUCTS = Number(process.env.BENCH_PRODUCTS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const RESULTS_DIR = join(resolve(__dirname, '..'), 'bench', 'results');

async function main(): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-publish-'));
  const loadBefore = loadavg();
  let stack: Stack | null = null;
  let mongo: Mongo | null = null;
  const received: { url: string; headers: Record<string, string>; body: string }[] = [];
  const keys = new Set<string>();
  let record = true;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'PUT') {
        // a channel without a category predictor: publication asks once per batch, then sends
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"no such route"}');
        return;
      }
      if (record) {
        received.push({
          url: req.url!,
          headers: {
            'content-type': 'application/json',
            'idempotency-key': String(req.headers['idempotency-key']),
            'x-timestamp': String(req.headers['x-timestamp']),
            'x-signature': String(req.headers['x-signature']),
          },
          body: Buffer.concat(chunks).toString(),
        });
        keys.add(String(req.headers['idempotency-key']));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ handle: `h-${req.url?.split('/').pop()}` }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const channelUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    stack = await startStack({
      dataDir,
      ports: 'free',
      withApp: true,
      env: { ...process.env, LOG_LEVEL: 'warn', MONGODB_DB: 'bench_publish' },
      log: (l) => console.log(`  ${l}`),
    });
    const base = stack.apiUrl!;
    mongo = await connectMongo(stack.env.MONGODB_URI, stack.env.MONGODB_DB);
    await ensureIndexes(mongo.db, allCollections);
    const tenancy = new Tenancy(mongo.db);
    const tenant = await tenancy.createTenant('Publish benchmark');
    const { key } = await tenancy.issueKey(
      tenant._id,
      ['products:read', 'products:export', 'channels:read', 'channels:update'],
      'bench',
    );
    const catalog = new Catalog(new TenantDb(mongo.db, tenant._id));
    let t = Date.now();
    for (let i = 0; i < PRODUCTS; i += 500) {
      const batch = [];
      for (let j = i; j < Math.min(PRODUCTS, i + 500); j++) {
        const sku = `PUB-${String(j).padStart(6, '0')}`;
        batch.push({
          _id: new ObjectId(),
          product: await catalog.prepare({
            sku,
            title: { value: `Product ${j}` },
            price: 10 + (j % 90),
            status: 'active',
            brand: 'Acme',
            category: { name: 'Tools', path: 'Home > Tools' },
            media: [{ src: `https://img.example.com/${j}.jpg`, name: 'front', alt: { value: 'front' }, position: 0 }],
            variants: [1, 2].map((v) => ({
              sku: `${sku}-V${v}`,
              title: { value: `V${v}` },
              price: 10 + v,
              position: v - 1,
            })),
          }),
        });
      }
      await catalog.insertMany(batch);
    }
    console.log(`Seeded ${PRODUCTS} products in ${((Date.now() - t) / 1000).toFixed(1)} s`);

    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(base + path, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body ? JSON.stringify(body) : undefined,
      });
      const json = (await res.json()) as any;
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const ch = await api('POST', '/channels', {
      name: 'Bench channel',
      type: 'custom',
      settings: { endpointUrl: channelUrl, concurrency: CONCURRENCY },
      secret: 'bench-signing-secret-0123456789',
    });
    t = Date.now();
    const { jobId } = await api('POST', '/products/export', { channelId: ch.id, mode: 'all' });
    let job: any;
    for (;;) {
      job = await api('GET', `/products/export/${jobId}`);
      if (['completed', 'failed', 'cancelled'].includes(job.status)) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const oursSeconds = (Date.now() - t) / 1000;
    console.log(`ours: ${job.status}, ${job.published} published in ${oursSeconds.toFixed(1)} s`);

    record = false;
    const calls = received.slice();
    t = Date.now();
    await mapLimit(calls, CONCURRENCY, async (c) => {
      const res = await fetch(channelUrl + c.url, { method: 'PUT', headers: c.headers, body: c.body });
      await res.text();
      if (res.status !== 200) throw new Error(`baseline PUT ${res.status}`);
    });
    const baseSeconds = (Date.now() - t) / 1000;
    const ours = PRODUCTS / oursSeconds;
    const raw = calls.length / baseSeconds;
    const ok =
      job.status === 'completed' && job.published === PRODUCTS && keys.size === PRODUCTS && calls.length === PRODUCTS;
    const date = new Date().toISOString().slice(0, 10);
    const report =
      [
        `# Publication: ours vs the same HTTP calls in a plain loop (${date})`,
        '',
        `- ${PRODUCTS} products (2 variants each), channel type custom, ${CONCURRENCY} requests in flight on both sides; a local node:http channel that answers at once`,
        `- machine ${cpus().length} cores, load before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
        '- ours: POST /products/export (mode all) → job polled until done: the workflow in batches of 250, each product mapped, signed and sent, its binding and outcome written with those of the sends that ended meanwhile (group commit); baseline: the very PUTs the channel got from us, replayed by a loop',
        '',
        '| measure | ours | baseline | ours / baseline |',
        '|---|---:|---:|---:|',
        `| products/s | ${ours.toFixed(1)} (${oursSeconds.toFixed(1)} s) | ${raw.toFixed(1)} (${baseSeconds.toFixed(1)} s) | ${(ours / raw).toFixed(2)} |`,
        '',
        `- ${ok ? 'ok' : 'FAILED'}: job ${job.status}, ${job.published} published, ${keys.size} distinct Idempotency-Keys for ${PRODUCTS} products`,
      ].join('\n') + '\n';
    console.log('\n' + report);
    mkdirSync(RESULTS_DIR, { recursive: true });
    // one file per benchmark, the newest run (git keeps the earlier ones)
    const file = join(RESULTS_DIR, 'publish.md');
    writeFileSync(file, report);
    return ok ? 0 : 1;
  } finally {
    server.close();
    await mongo?.client.close().catch(() => undefined);
    await stack?.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);

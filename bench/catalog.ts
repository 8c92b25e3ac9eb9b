/**
 * Catalog read benchmark: our API against a bare driver baseline, measured in the same run.
 *
 *   npx tsx bench/catalog.ts        (or: npm run bench:catalog)
 *
 * 1. Starts the whole stack on free ports in a temporary data directory (embedded FerretDB,
 *    Temporal, MinIO, our worker and API, all real processes), as the tests do.
 * 2. Creates a tenant and a `products:read` key, seeds BENCH_PRODUCTS products (50,000 by default)
 *    straight into `products` and `product_skus`, shaped exactly as Catalog.create stores them
 *    (the same validation and normalisation code builds each document), and checks one reads back
 *    through the API.
 * 3. Starts the baseline in this process: a bare node:http server on its own MongoClient that
 *    answers the same three reads with the raw driver and nothing else (no Koa, no auth, no
 *    presentation).
 * 4. Runs autocannon against each read of ours and of the baseline, and reports requests/s,
 *    p50/p99 latency, failures and the ratio ours/baseline as a Markdown table (printed and
 *    written to bench/results/catalog.md, or BENCH_RESULTS).
 *
 * Exits non-zero when any request failed (non-2xx, connection error or timeout) or a check failed;
 * the ratio is reported against the goal (>= 0.60) but never fails the run.
 *
 * Between runs it waits until FerretDB and the API are idle again: when autocannon stops, the
 * requests it had in flight are still being answered, and that work must not land in the next run.
 *
 * Environment: BENCH_PRODUCTS (50000), BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (2),
 * BENCH_CONNECTIONS (32), BENCH_TIMEOUT_SECONDS (60, per request), BENCH_SETTLE_SECONDS (1800, the
 * longest wait for idle between runs), BENCH_KEEP_DATA=1 to keep the temporary data directory,
 * BENCH_READS (id,list,count: which reads to run), BENCH_SECONDS_ID / _LIST / _COUNT (one read's
 * run length, when its requests take much longer than the others').
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { MongoClient, ObjectId, type Document } from 'mongodb';
import { startStack, type Stack } from '../scripts/stack/stack';
import { Tenancy } from '../shared/auth/tenancy';
import { connectMongo, ensureIndexes, type Mongo } from '../shared/db/mongo';
import { allCollections } from '../shared/collections';
import { claimId, productSkus, products, type SkuClaim } from '../shared/products/collections';
import { normalizeProduct, skusOf } from '../shared/products/normalize';
import { withSearch } from '../shared/products/search';
import { buildFilter } from '../shared/products/query';
import { crossFieldErrors, validateProductInput } from '../shared/products/rules';
import type { ProductDoc } from '../shared/products/types';
import { intEnv } from './support';

// ---------------------------------------------------------------------------------------------
// Settings

const PRODUCTS = intEnv('BENCH_PRODUCTS', 50_000);
const SECONDS = intEnv('BENCH_SECONDS', 10);
const WARMUP_SECONDS = intEnv('BENCH_WARMUP_SECONDS', 2);
const CONNECTIONS = intEnv('BENCH_CONNECTIONS', 32);
const TIMEOUT_SECONDS = intEnv('BENCH_TIMEOUT_SECONDS', 60);
const SETTLE_SECONDS = intEnv('BENCH_SETTLE_SECONDS', 1800);
/** The warm-up only has to compile code and open connections; few connections leave little work behind. */
const WARMUP_CONNECTIONS = Math.min(4, CONNECTIONS);
const KEEP_DATA = process.env.BENCH_KEEP_DATA === '1';
/** A read's run length: BENCH_SECONDS_<READ> (e.g. BENCH_SECONDS_COUNT) when set, else BENCH_SECONDS. */
const secondsFor = (read: string) => intEnv(`BENCH_SECONDS_${read.toUpperCase()}`, SECONDS);
const runLengths = () => ['id', 'list', 'count', 'search'].map((r) => `${r} ${secondsFor(r)} s`).join(', ');
/** Which reads to run: any of id, list, count, search (all by default). */
const READS = new Set((process.env.BENCH_READS || 'id,list,count,search').split(',').map((s) => s.trim()));
const BATCH = 1000;
/** How many product ids GET /products/{id} rotates through (spread over the whole catalog). */
const ID_SAMPLE = 1000;
const GOAL = 0.6;
const DB_NAME = 'bench_catalog';
const ROOT = resolve(__dirname, '..');
const RESULTS_DIR = join(ROOT, 'bench', 'results');

// ---------------------------------------------------------------------------------------------
// Seed data: deterministic, so two runs seed the same catalog

/** mulberry32: a small seeded PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BRAND_HEADS = ['North', 'Blue', 'Iron', 'Silver', 'Red', 'Oak', 'Stone', 'River', 'Bright', 'Swift'];
const BRAND_TAILS = ['wood', 'peak', 'forge', 'works', 'craft'];
/** 50 brands: Northwood, Northpeak, … */
const BRANDS = BRAND_HEADS.flatMap((h) => BRAND_TAILS.map((t) => `${h}${t}`));
const ADJECTIVES = [
  'Classic',
  'Modern',
  'Compact',
  'Deluxe',
  'Rugged',
  'Slim',
  'Vintage',
  'Premium',
  'Everyday',
  'Travel',
  'Heavy-duty',
  'Lightweight',
];
const MATERIALS = ['Cotton', 'Linen', 'Leather', 'Steel', 'Bamboo', 'Wool', 'Ceramic', 'Walnut', 'Canvas', 'Copper'];
const NOUNS = [
  'Shirt',
  'Backpack',
  'Mug',
  'Lamp',
  'Wallet',
  'Chair',
  'Blanket',
  'Bottle',
  'Notebook',
  'Jacket',
  'Tray',
  'Apron',
  'Scarf',
  'Planter',
  'Belt',
];
const TAGS = [
  'new',
  'sale',
  'gift',
  'eco',
  'bestseller',
  'limited',
  'handmade',
  'outdoor',
  'kitchen',
  'office',
  'travel',
  'summer',
  'winter',
  'kids',
  'unisex',
  'premium',
  'clearance',
  'bundle-ready',
  'local',
  'imported',
  'vegan',
  'organic',
  'recycled',
  'waterproof',
  'wireless',
  'fragile',
  'oversize',
  'seasonal',
  'classic',
  'trending',
];
const CATEGORIES = [
  { id: 'cat-apparel', name: 'Apparel', path: 'Home > Apparel' },
  { id: 'cat-bags', name: 'Bags', path: 'Home > Accessories > Bags' },
  { id: 'cat-kitchen', name: 'Kitchen', path: 'Home > House > Kitchen' },
  { id: 'cat-lighting', name: 'Lighting', path: 'Home > House > Lighting' },
  { id: 'cat-furniture', name: 'Furniture', path: 'Home > House > Furniture' },
  { id: 'cat-stationery', name: 'Stationery', path: 'Home > Office > Stationery' },
  { id: 'cat-garden', name: 'Garden', path: 'Home > Outdoor > Garden' },
  { id: 'cat-accessories', name: 'Accessories', path: 'Home > Accessories' },
];
const SIZES = ['S', 'M'];

/** The brand the list read filters on, and the term the count read searches for (a title word in ~1 of 10 products). */
const LIST_BRAND = BRANDS[17];
const COUNT_TERM = 'linen';

const money = (n: number) => Math.round(n * 100) / 100;

/** A product as a client would POST it: 2 variants, mixed statuses, ~50 brands, tags, prices. */
function productBody(i: number, rnd: () => number): Record<string, unknown> {
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)];
  const sku = `bench-${String(i).padStart(6, '0')}`;
  const r = rnd();
  const status = r < 0.6 ? 'active' : r < 0.85 ? 'draft' : 'disabled';
  const brand = pick(BRANDS);
  const noun = pick(NOUNS);
  const title = `${pick(ADJECTIVES)} ${pick(MATERIALS)} ${noun}`;
  const price = money(5 + rnd() * 495);
  const tags = new Set<string>();
  const tagCount = 2 + Math.floor(rnd() * 3);
  while (tags.size < tagCount) tags.add(pick(TAGS));
  return {
    sku,
    status,
    productType: 'physical',
    title: { value: title },
    description: { value: `${title} by ${brand}.` },
    brand,
    productKind: noun,
    price,
    ...(rnd() < 0.3 ? { compareAtPrice: money(price * 1.25) } : {}),
    tags: [...tags],
    category: { ...pick(CATEGORIES) },
    options: [{ id: 'size', name: 'Size', values: [...SIZES] }],
    variants: SIZES.map((size, position) => ({
      sku: `${sku}-${size.toLowerCase()}`,
      title: { value: `${title} ${size}` },
      price: position === 0 ? price : money(price * 1.1),
      position,
      options: [{ id: 'size', name: 'Size', value: size }],
    })),
  };
}

/**
 * The documents Catalog.create would store for product `i`: the same validation (defaults filled),
 * cross-field rules and normalisation (upper-case SKUs, variant ids and parent SKUs), then the
 * server-managed fields in the order Catalog.create and the tenant layer add them.
 */
function seedDocs(
  i: number,
  rnd: () => number,
  tenantId: string,
  createdAt: Date,
): { product: ProductDoc; claims: SkuClaim[] } {
  const input = validateProductInput(productBody(i, rnd));
  const errs = crossFieldErrors(input);
  if (errs.length) throw new Error(`seed product ${i} is invalid: ${JSON.stringify(errs)}`);
  const normalized = normalizeProduct(input);
  const _id = new ObjectId();
  const productId = _id.toHexString();
  const product = {
    ...withSearch(normalized),
    _id,
    createdAt,
    updatedAt: createdAt,
    version: 1,
    tenantId,
  } as ProductDoc;
  // as Catalog.claim inserts them: keyed `<tenantId>:<SKU>`, then stamped with the tenant
  const claims = skusOf(normalized).map(({ sku, kind }): SkuClaim => ({
    _id: claimId(tenantId, sku),
    sku,
    kind,
    productId,
    createdAt,
    tenantId,
  }));
  return { product, claims };
}

interface Seeded {
  /** A sample of seeded products, spread over the catalog, for GET /products/{id}. */
  sample: { id: string; sku: string }[];
  seconds: number;
}

async function seed(mongo: Mongo, tenantId: string): Promise<Seeded> {
  const started = Date.now();
  const rnd = prng(20_240_601);
  const pickRnd = prng(7);
  const productsCol = mongo.db.collection<ProductDoc>(products.name);
  const skusCol = mongo.db.collection<SkuClaim>(productSkus.name);
  const sampleEvery = Math.max(1, Math.floor(PRODUCTS / ID_SAMPLE));
  const sample: Seeded['sample'] = [];
  let offset = 0;
  // one product a minute, ending now: createdAt order differs from insertion order only in ties
  const base = Date.now() - PRODUCTS * 60_000;
  for (let from = 0; from < PRODUCTS; from += BATCH) {
    const batch: ProductDoc[] = [];
    const claims: SkuClaim[] = [];
    for (let i = from; i < Math.min(PRODUCTS, from + BATCH); i++) {
      const { product, claims: c } = seedDocs(i, rnd, tenantId, new Date(base + i * 60_000));
      batch.push(product);
      claims.push(...c);
      // one id per stride, at a random position inside the stride, so reads hit the whole table
      if (i % sampleEvery === 0) offset = Math.floor(pickRnd() * sampleEvery);
      if (i % sampleEvery === offset && sample.length < ID_SAMPLE) {
        sample.push({ id: product._id.toHexString(), sku: product.sku });
      }
    }
    await productsCol.insertMany(batch);
    for (let c = 0; c < claims.length; c += BATCH) await skusCol.insertMany(claims.slice(c, c + BATCH));
    const done = Math.min(PRODUCTS, from + BATCH);
    if (done % 10_000 === 0 || done === PRODUCTS) {
      console.log(
        `  seeded ${done.toLocaleString('en-US')} / ${PRODUCTS.toLocaleString('en-US')} products (${((Date.now() - started) / 1000).toFixed(1)} s)`,
      );
    }
  }
  // a fixed shuffle, so consecutive requests do not walk the table in order
  const shuffle = prng(99);
  for (let i = sample.length - 1; i > 0; i--) {
    const j = Math.floor(shuffle() * (i + 1));
    [sample[i], sample[j]] = [sample[j], sample[i]];
  }
  return { sample, seconds: (Date.now() - started) / 1000 };
}

// ---------------------------------------------------------------------------------------------
// Baseline: the same reads with the raw driver, nothing else

interface Baseline {
  url: string;
  /** Requests answered 500 so far (a failed query), whether or not the client was still there. */
  serverErrors(): number;
  close(): Promise<void>;
}

async function startBaseline(uri: string, dbName: string, tenantId: string): Promise<Baseline> {
  const client = new MongoClient(uri, { appName: 'bench-baseline' });
  await client.connect();
  const col = client.db(dbName).collection<Document>(products.name);

  const send = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://baseline');
    const byId = /^\/p\/([0-9a-f]{24})$/i.exec(url.pathname);
    if (req.method === 'GET' && byId) {
      const doc = await col.findOne({ _id: new ObjectId(byId[1]), tenantId });
      return doc ? send(res, 200, doc) : send(res, 404, { code: 'not-found' });
    }
    if (req.method === 'GET' && url.pathname === '/list') {
      const status = (url.searchParams.get('status') ?? 'active').split(',');
      const brands = (url.searchParams.get('brands') ?? '').split(',');
      const limit = Number(url.searchParams.get('limit') ?? 50);
      const docs = await col
        .find({ tenantId, status: { $in: status }, brand: { $in: brands } })
        .sort({ createdAt: -1, _id: -1 })
        .limit(limit)
        .toArray();
      return send(res, 200, docs);
    }
    if (req.method === 'GET' && url.pathname === '/search') {
      const { filter } = buildFilter({ q: url.searchParams.get('q') ?? '' });
      const docs = await col
        .find({ ...filter, tenantId } as Document)
        .sort({ createdAt: -1, _id: -1 })
        .limit(Number(url.searchParams.get('limit') ?? 50))
        .toArray();
      return send(res, 200, docs);
    }
    if (req.method === 'GET' && url.pathname === '/count') {
      const { filter } = buildFilter({ q: url.searchParams.get('q') ?? '' });
      const count = await col.countDocuments({ ...filter, tenantId } as Document);
      return send(res, 200, { count });
    }
    return send(res, 404, { code: 'not-found' });
  };

  let closing = false;
  let serverErrors = 0;
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!closing) {
        serverErrors++;
        console.error(`baseline error: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
      }
      if (!res.headersSent) send(res, 500, { code: 'internal' });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    serverErrors: () => serverErrors,
    async close() {
      closing = true; // requests still waiting on the database fail now; that is expected
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
      await client.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// HTTP checks

async function getJson(url: string, key?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: res.status, body };
}

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`check failed: ${message}`);
}

/** The API answers the three reads correctly, and the baseline answers them the same. */
async function verify(
  apiUrl: string,
  baselineUrl: string,
  key: string,
  sample: Seeded['sample'],
): Promise<{ listed: number; counted: number }> {
  const { id, sku } = sample[0];
  const one = await getJson(`${apiUrl}/products/${id}`, key);
  check(one.status === 200, `GET /products/${id} answered ${one.status}: ${JSON.stringify(one.body)}`);
  check(
    one.body.id === id && one.body.sku === sku,
    `GET /products/${id} returned sku ${one.body.sku}, expected ${sku}`,
  );
  // the SKU claims are keyed as Catalog keeps them: the API finds their holder by primary key
  for (const [claimed, kind] of [
    [sku, 'product'],
    [`${sku}-S`, 'variant'],
  ] as const) {
    const owner = await getJson(`${apiUrl}/products/sku/${encodeURIComponent(claimed)}/exists`, key);
    check(owner.status === 200, `GET /products/sku/${claimed}/exists answered ${owner.status}`);
    check(
      owner.body.exists === true && owner.body.kind === kind && owner.body.productId === id,
      `SKU ${claimed} is not claimed by product ${id}: ${JSON.stringify(owner.body)}`,
    );
  }
  const baseOne = await getJson(`${baselineUrl}/p/${id}`);
  check(
    baseOne.status === 200 && baseOne.body.sku === sku,
    `baseline /p/${id} answered ${baseOne.status} sku ${baseOne.body?.sku}`,
  );

  const list = await getJson(`${apiUrl}${listPath()}`, key);
  check(list.status === 200 && Array.isArray(list.body), `GET ${listPath()} answered ${list.status}`);
  check(list.body.length > 0, `GET ${listPath()} returned no products`);
  check(
    list.body.every((p: { status: string; brand: string }) => p.status === 'active' && p.brand === LIST_BRAND),
    `GET ${listPath()} returned products of another status or brand`,
  );
  const baseList = await getJson(`${baselineUrl}/list?status=active&brands=${encodeURIComponent(LIST_BRAND)}&limit=50`);
  check(baseList.status === 200 && Array.isArray(baseList.body), `baseline /list answered ${baseList.status}`);
  const ids = (rows: { id?: string; _id?: string }[]) => rows.map((r) => r.id ?? r._id).join(',');
  check(ids(list.body) === ids(baseList.body), 'the API and the baseline list different products');

  const search = await getJson(`${apiUrl}${searchPath()}`, key);
  check(search.status === 200 && Array.isArray(search.body), `GET ${searchPath()} answered ${search.status}`);
  check(search.body.length === 50, `GET ${searchPath()} returned ${search.body.length} products, not a full page`);
  const baseSearch = await getJson(`${baselineUrl}/search?q=${encodeURIComponent(COUNT_TERM)}&limit=50`);
  check(ids(search.body) === ids(baseSearch.body), 'the API and the baseline find different products');
  const count = await getJson(`${apiUrl}${countPath()}`, key);
  check(count.status === 200 && typeof count.body.count === 'number', `GET ${countPath()} answered ${count.status}`);
  check(count.body.count > 0, `GET ${countPath()} counted nothing`);
  const baseCount = await getJson(`${baselineUrl}/count?q=${encodeURIComponent(COUNT_TERM)}`);
  check(
    baseCount.status === 200 && baseCount.body.count === count.body.count,
    `baseline counted ${baseCount.body?.count}, the API ${count.body.count}`,
  );
  return { listed: list.body.length, counted: count.body.count };
}

const listPath = () => `/products?status=active&brands=${encodeURIComponent(LIST_BRAND)}&limit=50`;
const countPath = () => `/products/count?q=${encodeURIComponent(COUNT_TERM)}`;
const searchPath = () => `/products?q=${encodeURIComponent(COUNT_TERM)}&limit=50`;

// ---------------------------------------------------------------------------------------------
// Load

interface Load {
  /** A fixed path, or a rotating list of paths. */
  path?: string;
  paths?: string[];
  headers?: Record<string, string>;
}

async function cannon(
  url: string,
  load: Load,
  seconds: number,
  connections: number,
  title: string,
): Promise<autocannon.Result> {
  let next = 0;
  const request: autocannon.Request = load.paths
    ? { method: 'GET', setupRequest: (req) => ({ ...req, path: load.paths![next++ % load.paths!.length] }) }
    : { method: 'GET', path: load.path };
  return autocannon({
    url,
    title,
    connections,
    duration: seconds,
    timeout: TIMEOUT_SECONDS,
    headers: load.headers ?? {},
    requests: [request],
  });
}

/** CPU ticks (user + system) a process has used so far; null when /proc is not there. */
function cpuTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
  } catch {
    return null;
  }
}

/** CPU ticks of one of the stack's processes (10 ms each: USER_HZ is 100 on Linux). */
function procTicks(stack: Stack, name: string): number | null {
  const pid = stack.procs.find((p) => p.name === name)?.child.pid;
  return pid ? cpuTicks(pid) : null;
}

/**
 * Waits until the server side is idle again and returns how long that took, in seconds. When
 * autocannon stops, the requests it had in flight are still being answered (the database does
 * not cancel them), and that tail would otherwise land in the next measurement. Idle: FerretDB and
 * the API together under 10% of a core for 2 s, and then a `ping` through FerretDB's front door
 * answers at once (reads queued behind a waiting write use no CPU, so the CPU alone would call
 * that idle). At most BENCH_SETTLE_SECONDS; without /proc, a fixed 5 s pause.
 */
async function settle(stack: Stack, mongo: Mongo): Promise<number> {
  const started = Date.now();
  const pids = stack.procs
    .filter((p) => p.name === 'ferretdb' || p.name === 'api')
    .map((p) => p.child.pid)
    .filter((p): p is number => !!p);
  const total = () => {
    const ticks = pids.map(cpuTicks);
    return ticks.some((t) => t === null) ? null : (ticks as number[]).reduce((a, b) => a + b, 0);
  };
  if (total() === null) {
    await sleep(5000);
    return 5;
  }
  const deadline = started + SETTLE_SECONDS * 1000;
  let before = total()!;
  let quiet = 0;
  for (;;) {
    await sleep(500);
    const now = total()!;
    quiet = now - before <= 5 ? quiet + 1 : 0; // 5 ticks of 10 ms in 500 ms = 10% of a core
    before = now;
    if (quiet >= 4) {
      const pinged = Date.now();
      const ok = await mongo.db.command({ ping: 1 }).then(
        () => Date.now() - pinged < 250,
        () => false,
      );
      if (ok) break;
      quiet = 0;
      before = total()!;
    }
    if (Date.now() > deadline) {
      console.warn(`  (still busy after ${SETTLE_SECONDS} s; going on)`);
      break;
    }
  }
  return (Date.now() - started) / 1000;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The API deletes expired tokens every 10 minutes from its start (api/server.ts). That delete is
 * a write, and FerretDB's front door (scripts/servers/ferretdb/serialize.go) runs a write only
 * when no read runs, holding back every read that arrives meanwhile, the drivers' heartbeats
 * included. Behind reads that take tens of seconds the heartbeats time out (30 s), the drivers
 * declare the server gone, interrupt what is in flight and answer 500s for a while. A measured
 * run therefore does not start when a sweep is due during it; a sweep that still falls into a
 * run or its tail is named in the results.
 */
const SWEEP_EVERY_MS = 10 * 60_000;
/** The interval starts a little before the API answers /health: a sweep is due in [k·10 min − 25 s, k·10 min + 5 s] after. */
const SWEEP_EARLY_MS = 25_000;
const SWEEP_LATE_MS = 5_000;

/** The windows of the sweeps due between `from` and `to`. */
function sweepsBetween(apiReadyAt: number, from: number, to: number): { from: number; to: number }[] {
  const windows: { from: number; to: number }[] = [];
  for (let k = Math.max(1, Math.floor((from - apiReadyAt) / SWEEP_EVERY_MS)); ; k++) {
    const due = apiReadyAt + k * SWEEP_EVERY_MS;
    if (due - SWEEP_EARLY_MS > to) return windows;
    if (due + SWEEP_LATE_MS >= from) windows.push({ from: due - SWEEP_EARLY_MS, to: due + SWEEP_LATE_MS });
  }
}

/** What autocannon saw of one run. */
interface Sample {
  rps: number;
  p50: number;
  p99: number;
  /** Responses received. */
  total: number;
  sent: number;
  non2xx: number;
  fivexx: number;
  /** Connection errors, timeouts included. */
  errors: number;
  timeouts: number;
}

interface Measured extends Sample {
  /** Seconds the servers needed after the run to finish the requests autocannon left in flight. */
  settle: number;
  /** Whether one of the API's token sweeps fell into the run ('run') or its tail ('tail'). */
  sweep: 'run' | 'tail' | null;
  /** CPU time FerretDB and the API process spent on the run and its tail, per request sent (ms; null without /proc). */
  ferretdbCpuMs: number | null;
  apiCpuMs: number | null;
  /**
   * Requests of the run the server answered 500 after autocannon had gone (it counts only the
   * answers it receives): from the API's log, or the baseline's own count.
   */
  late: number;
}

function sample(r: autocannon.Result): Sample {
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    total: r.requests.total,
    sent: r.requests.sent,
    non2xx: r.non2xx,
    fivexx: r['5xx'],
    errors: r.errors,
    timeouts: r.timeouts,
  };
}

/** autocannon counts a timeout as an error too. */
const failures = (m: Measured) => m.non2xx + m.errors + m.late;

/** 500s the API has logged so far (`unhandled error`: LOG_LEVEL=warn keeps them). */
function apiServerErrors(stack: Stack): number {
  const api = stack.procs.find((p) => p.name === 'api');
  if (!api || !existsSync(api.logFile)) return 0;
  return readFileSync(api.logFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"msg":"unhandled error"')).length;
}

interface Row {
  read: string;
  ours: Measured;
  base: Measured;
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = (n: number, digits = 1) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function table(rows: Row[]): string {
  const lines = [
    `| read | ours req/s | ours p50 ms | ours p99 ms | baseline req/s | baseline p50 ms | baseline p99 ms | failed (ours / baseline) | ours / baseline | goal ≥ ${GOAL.toFixed(2)} |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  // latency of a run that completed nothing is unknown, and so is a ratio over a baseline of zero
  const ms = (m: Measured, v: number) => (m.total > 0 ? fmt(v, 0) : '—');
  for (const { read, ours, base } of rows) {
    const ratio = base.rps > 0 ? ours.rps / base.rps : null;
    const verdict = ratio === null ? 'n/a' : ratio >= GOAL ? 'PASS' : 'BELOW';
    lines.push(
      `| ${read} | ${fmt(ours.rps)} | ${ms(ours, ours.p50)} | ${ms(ours, ours.p99)} | ${fmt(base.rps)} | ${ms(base, base.p50)} | ${ms(base, base.p99)} | ${failures(ours)} / ${failures(base)} | ${ratio === null ? '—' : ratio.toFixed(2)} | ${verdict} |`,
    );
  }
  return lines.join('\n');
}

function details(rows: Row[]): string {
  const lines = [
    '| read | side | sent | answered | non-2xx | errors (with timeouts) | of which timeouts | 500 after the run | busy after the run (s) | FerretDB CPU ms / request | API CPU ms / request | token sweep |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  const cpu = (v: number | null) => (v === null ? '—' : fmt(v, 0));
  const sweep = { run: 'during the run', tail: 'after the run', none: '' };
  for (const { read, ours, base } of rows) {
    for (const [side, m] of [
      ['ours', ours],
      ['baseline', base],
    ] as const) {
      lines.push(
        `| ${read} | ${side} | ${m.sent} | ${m.total} | ${m.non2xx} | ${m.errors} | ${m.timeouts} | ${m.late} | ${m.settle.toFixed(1)} | ${cpu(m.ferretdbCpuMs)} | ${cpu(m.apiCpuMs)} | ${sweep[m.sweep ?? 'none']} |`,
      );
    }
  }
  return lines.join('\n');
}

/** One file per benchmark, the newest run (git keeps the earlier ones). */
function resultsFile(): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  return join(RESULTS_DIR, process.env.BENCH_RESULTS ?? 'catalog.md');
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const startedAt = new Date();
  const loadBefore = loadavg();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-catalog-'));
  let stack: Stack | null = null;
  let mongo: Mongo | null = null;
  let baseline: Baseline | null = null;
  let interrupted: Promise<void> | null = null;

  const cleanup = async () => {
    await baseline?.close().catch(() => undefined);
    baseline = null;
    await mongo?.client.close().catch(() => undefined);
    mongo = null;
    await stack?.stop().catch((err) => console.error('stopping the stack:', err));
    stack = null;
    if (KEEP_DATA) console.log(`data kept in ${dataDir}`);
    else rmSync(dataDir, { recursive: true, force: true });
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    console.error(`\n${signal}: stopping the stack …`);
    interrupted = cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    console.log(
      `Catalog read benchmark: ${PRODUCTS.toLocaleString('en-US')} products, ${CONNECTIONS} connections, ${runLengths()} per run`,
    );
    console.log(
      `Machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`,
    );

    let t = Date.now();
    stack = await startStack({
      dataDir,
      ports: 'free',
      withApp: true,
      env: { ...process.env, LOG_LEVEL: 'warn', MONGODB_DB: DB_NAME },
      log: (line) => console.log(`  ${line}`),
    });
    const apiUrl = stack.apiUrl!;
    const apiReadyAt = Date.now();
    console.log(`Stack ready in ${((Date.now() - t) / 1000).toFixed(1)} s (API ${apiUrl}, data ${dataDir})`);

    mongo = await connectMongo(stack.env.MONGODB_URI, stack.env.MONGODB_DB);
    await ensureIndexes(mongo.db, allCollections);
    const tenancy = new Tenancy(mongo.db);
    const tenant = await tenancy.createTenant('Catalog benchmark');
    const key = await tenancy.issueKey(tenant._id, ['products:read'], 'bench');

    console.log(
      `Seeding ${PRODUCTS.toLocaleString('en-US')} products (${PRODUCTS * 2} variants, ${PRODUCTS * 3} SKU claims) in batches of ${BATCH} …`,
    );
    const seeded = await seed(mongo, tenant._id);
    console.log(
      `Seeded in ${seeded.seconds.toFixed(1)} s (${Math.round(PRODUCTS / seeded.seconds).toLocaleString('en-US')} products/s)`,
    );

    baseline = await startBaseline(stack.env.MONGODB_URI, stack.env.MONGODB_DB, tenant._id);
    const { listed, counted } = await verify(apiUrl, baseline.url, key.key, seeded.sample);
    console.log(
      `Checked: a seeded product and its SKU claims read back through the API; the list returns ${listed} products of ${LIST_BRAND}; "${COUNT_TERM}" counts ${counted}; the baseline agrees`,
    );

    const auth = { authorization: `Bearer ${key.key}` };
    const reads: { name: string; read: string; ours: Load; base: Load }[] = [
      {
        name: 'id',
        read: 'GET /products/{id}',
        ours: { paths: seeded.sample.map((s) => `/products/${s.id}`), headers: auth },
        base: { paths: seeded.sample.map((s) => `/p/${s.id}`) },
      },
      {
        name: 'list',
        read: `GET /products?status=active&brands=${LIST_BRAND}&limit=50`,
        ours: { path: listPath(), headers: auth },
        base: { path: `/list?status=active&brands=${encodeURIComponent(LIST_BRAND)}&limit=50` },
      },
      {
        name: 'search',
        read: `GET /products?q=${COUNT_TERM}&limit=50`,
        ours: { path: searchPath(), headers: auth },
        base: { path: `/search?q=${encodeURIComponent(COUNT_TERM)}&limit=50` },
      },
      {
        name: 'count',
        read: `GET /products/count?q=${COUNT_TERM}`,
        ours: { path: countPath(), headers: auth },
        base: { path: `/count?q=${encodeURIComponent(COUNT_TERM)}` },
      },
    ].filter((r) => READS.has(r.name));

    const serverErrors = (side: 'ours' | 'baseline') =>
      side === 'ours' ? apiServerErrors(stack!) : baseline!.serverErrors();
    /** One autocannon run, then the wait for idle; 500s the server logged meanwhile count for the run. */
    const run = async (
      side: 'ours' | 'baseline',
      load: Load,
      seconds: number,
      connections: number,
      title: string,
    ): Promise<Measured> => {
      // not into a token sweep (see SWEEP_EVERY_MS): wait for it to pass, and for idle again
      const due = sweepsBetween(apiReadyAt, Date.now(), Date.now() + (seconds + 30) * 1000);
      if (due.length) {
        const wait = Math.max(0, due[due.length - 1].to - Date.now());
        console.log(`  (the API's token sweep is due: waiting ${(wait / 1000).toFixed(0)} s)`);
        await sleep(wait);
        await settle(stack!, mongo!);
      }
      const errorsBefore = serverErrors(side);
      const cpuBefore = { ferretdb: procTicks(stack!, 'ferretdb'), api: procTicks(stack!, 'api') };
      const started = Date.now();
      const m = sample(await cannon(side === 'ours' ? apiUrl : baseline!.url, load, seconds, connections, title));
      const ended = Date.now();
      const busy = await settle(stack!, mongo!);
      const sweep = sweepsBetween(apiReadyAt, started, ended).length
        ? 'run'
        : sweepsBetween(apiReadyAt, ended, Date.now()).length
          ? 'tail'
          : null;
      const perRequest = (before: number | null, after: number | null) =>
        before === null || after === null || !m.sent ? null : ((after - before) * 10) / m.sent;
      return {
        ...m,
        settle: busy,
        sweep,
        late: Math.max(0, serverErrors(side) - errorsBefore - m.fivexx),
        ferretdbCpuMs: perRequest(cpuBefore.ferretdb, procTicks(stack!, 'ferretdb')),
        apiCpuMs: side === 'ours' ? perRequest(cpuBefore.api, procTicks(stack!, 'api')) : null,
      };
    };

    let warmupFailures = 0;
    const verifySettle = await settle(stack, mongo);
    if (WARMUP_SECONDS > 0) {
      t = Date.now();
      console.log(`Warm-up: ${WARMUP_SECONDS} s per read and side at ${WARMUP_CONNECTIONS} connections …`);
      for (const r of reads) {
        for (const side of ['ours', 'baseline'] as const) {
          const m = await run(
            side,
            side === 'ours' ? r.ours : r.base,
            WARMUP_SECONDS,
            WARMUP_CONNECTIONS,
            `warm-up ${side} ${r.read}`,
          );
          if (failures(m)) console.warn(`  warm-up ${side} ${r.read}: ${failures(m)} failed`);
          warmupFailures += failures(m);
        }
      }
      console.log(`Warm-up done in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    }

    const rows: Row[] = [];
    for (const r of reads) {
      console.log(`Measuring ${r.read} …`);
      const seconds = secondsFor(r.name);
      const [ours, base] = [
        await run('ours', r.ours, seconds, CONNECTIONS, 'ours'),
        await run('baseline', r.base, seconds, CONNECTIONS, 'baseline'),
      ];
      for (const [side, m] of [
        ['ours', ours],
        ['baseline', base],
      ] as const) {
        console.log(
          `  ${side}: ${fmt(m.rps)} req/s, p50 ${m.total ? m.p50 : '—'} ms, p99 ${m.total ? m.p99 : '—'} ms, ${m.total}/${m.sent} answered, ${failures(m)} failed; busy ${m.settle.toFixed(1)} s after; FerretDB ${m.ferretdbCpuMs?.toFixed(0) ?? '—'} ms CPU per request${m.sweep ? `; token sweep ${m.sweep === 'run' ? 'during' : 'after'} the run` : ''}`,
        );
      }
      rows.push({ read: r.read, ours, base });
    }

    const loadAfter = loadavg();
    const failed = rows.reduce((n, r) => n + failures(r.ours) + failures(r.base), 0) + warmupFailures;
    const date = startedAt.toISOString().slice(0, 10);
    const report = [
      `# Catalog reads: ours vs baseline (${date})`,
      '',
      `- started ${startedAt.toISOString()}, finished ${new Date().toISOString()}`,
      `- ${PRODUCTS.toLocaleString('en-US')} products (2 variants each, ${PRODUCTS * 3} SKU claims) in one tenant, seeded in ${seeded.seconds.toFixed(1)} s; the list read matches ${listed} products (limit 50), the count read counts ${counted}`,
      `- autocannon ${CONNECTIONS} connections, ${runLengths()} per run, after a ${WARMUP_SECONDS} s warm-up per read and side at ${WARMUP_CONNECTIONS} connections; per-request timeout ${TIMEOUT_SECONDS} s; servers idle again before each run (after the checks: ${verifySettle.toFixed(1)} s)`,
      `- machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${process.platform}`,
      `- load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadAfter.map((l) => l.toFixed(2)).join(' ')} (other work may share the machine)`,
      '- ours: the API process (Koa, auth, validation, presentation) over the embedded FerretDB; baseline: a bare node:http server with the raw driver, in the benchmark process (which also runs autocannon)',
      '',
      table(rows),
      '',
      'Requests per run and failures:',
      '',
      details(rows),
      '',
      `Result: ${failed === 0 ? 'no request failed' : `${failed} requests failed (warm-up included: ${warmupFailures})`}.`,
      '',
    ].join('\n');
    const file = resultsFile();
    writeFileSync(file, report);
    console.log(`\n${table(rows)}\n`);
    console.log(`Written to ${file}`);
    if (failed > 0) {
      console.error(
        `FAILED: ${failed} requests did not succeed (non-2xx, connection errors, timeouts, or 500s after the client left)`,
      );
      return 1;
    }
    return 0;
  } finally {
    // after a signal the handler stops everything (and exits); wait for it rather than exit first
    if (interrupted) await interrupted;
    else await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

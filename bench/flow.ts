/**
 * Rule flows at scale: products changed per second by a flow that sets two fields on every
 * product of a catalog, next to the raw driver writing the same two fields, in the same run, on
 * the same database.
 *
 *   npx tsx bench/flow.ts        (or: npm run bench:flow)
 *
 * 1. Starts the whole stack on free ports in a temporary data directory (embedded FerretDB,
 *    Temporal, MinIO, our worker and API, as the other benchmarks; MONGODB_URI / TEMPORAL_ADDRESS /
 *    S3_ENDPOINT use running servers instead). The run has a database of its own, dropped at the end.
 * 2. Seeds BENCH_PRODUCTS products (50,000) in one tenant, deterministic (seeded PRNG), shaped as
 *    Catalog.create stores them: 2 variants, 2 to 4 tags, a description, a category, mixed statuses
 *    and ~50 brands, with their SKU claims; and the very same documents into a second collection
 *    with the products' indexes, for the baseline.
 * 3. Baseline: `status: 'active'` and `brand: 'Flowed'` set on every document of the copy by the
 *    driver's unordered bulkWrite of updateOne({_id}, {$set}), 1,000 per call. The two fields are
 *    put back (untimed) before the next baseline run, so every run does the same work. Run before
 *    and after ours (the machine is shared); the ratio is against their mean.
 * 4. Ours: POST /products/bulk/flow/execute with the flow {selection: {all: true}, rules: [{actions:
 *    [set status active, set brand Flowed]}]}, answered 202 with a job, polled (GET
 *    /products/bulk/flow/{jobId}) until it ends; products changed / seconds from the POST to the end.
 * 5. Checks every product of ours carries both fields at version 2 and the bulk operation holds one
 *    item per product (exit code 1 otherwise); reads the run's timeline from its workflow history
 *    (pages, time in pages and between them) and the CPU time of the worker, the API and FerretDB.
 * 6. A profile pass: BENCH_PROFILE_PAGES pages (4) of another flow run in this process through
 *    runEditPage (the worker's code for a page) on a client with command monitoring: commands per
 *    product by collection, their time, the CPU of planning, and the sizes written per product.
 * 7. Prints a Markdown report and writes it to bench/results/flow.md; prints the ratio.
 *
 * Environment: BENCH_PRODUCTS (50000), BENCH_PROFILE_PAGES (4), BENCH_KEEP_DATA=1 (keep the data
 * directory), BENCH_LOG_LEVEL (warn), EDIT_PAGE_SIZE (500, as the worker reads it).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import {
  BSON,
  MongoClient,
  ObjectId,
  type Collection,
  type CommandFailedEvent,
  type CommandStartedEvent,
  type CommandSucceededEvent,
} from 'mongodb';
import { tsToMs } from '@temporalio/common/lib/time';
import { startStack, type Stack } from '../scripts/stack/stack';
import { Tenancy } from '../shared/auth/tenancy';
import { bulkOperationItems } from '../shared/bulk/operations';
import { allCollections } from '../shared/collections';
import { loadConfig } from '../shared/config';
import { connectMongo, ensureIndexes, type Mongo } from '../shared/db/mongo';
import { TenantDb } from '../shared/db/tenant-db';
import { runEditPage, snapshotSelection } from '../shared/edits/page';
import { planProposal } from '../shared/edits/plan';
import { editPlanner, editRunOf } from '../shared/edits/run-of';
import type { EditJobInput } from '../shared/edits/runs';
import type { FlowDefinition } from '../shared/flows/definition';
import { newId } from '../shared/ids';
import { jobs } from '../shared/jobs/collection';
import { Catalog } from '../shared/products/catalog';
import { claimId, productSkus, products, type SkuClaim } from '../shared/products/collections';
import { normalizeProduct, skusOf } from '../shared/products/normalize';
import { withSearch } from '../shared/products/search';
import { crossFieldErrors, validateProductInput } from '../shared/products/rules';
import type { ProductDoc } from '../shared/products/types';
import { connectTemporal } from '../shared/temporal/connect';
import { intEnv, codeVersion } from './support';

const PRODUCTS = intEnv('BENCH_PRODUCTS', 50_000);
const PROFILE_PAGES = intEnv('BENCH_PROFILE_PAGES', 4);
const KEEP_DATA = process.env.BENCH_KEEP_DATA === '1';
const GOAL = 0.5;
/** The worker's page size: it reads the same variable (shared/config.ts). */
const PAGE_SIZE = intEnv('EDIT_PAGE_SIZE', 500);
const BATCH = 1000;
const POLL_MS = 500;
const ROOT = resolve(__dirname, '..');
const RESULTS_DIR = join(ROOT, 'bench', 'results');

/** What both sides write: two top-level fields of every product. */
const TARGET = { status: 'active', brand: 'Flowed' } as const;
const FLOW: FlowDefinition = {
  name: 'bench: two fields',
  selection: { all: true },
  rules: [
    {
      actions: [
        { type: 'set', field: 'status', value: TARGET.status },
        { type: 'set', field: 'brand', value: TARGET.brand },
      ],
    },
  ],
};
/** The profile's flow: two fields again, to values the products do not hold yet. */
const PROFILE_FLOW: FlowDefinition = {
  name: 'bench: profile',
  selection: { all: true },
  rules: [
    {
      actions: [
        { type: 'set', field: 'status', value: 'draft' },
        { type: 'set', field: 'brand', value: 'Profiled' },
      ],
    },
  ],
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { maximumFractionDigits: digits });
const seconds = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e9;

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

const BRANDS = ['North', 'Blue', 'Iron', 'Silver', 'Red', 'Oak', 'Stone', 'River', 'Bright', 'Swift'].flatMap((h) =>
  ['wood', 'peak', 'forge', 'works', 'craft'].map((t) => `${h}${t}`),
);
const ADJECTIVES = ['Classic', 'Modern', 'Compact', 'Deluxe', 'Rugged', 'Slim', 'Vintage', 'Premium', 'Everyday'];
const MATERIALS = ['Cotton', 'Linen', 'Leather', 'Steel', 'Bamboo', 'Wool', 'Ceramic', 'Walnut', 'Canvas', 'Copper'];
const NOUNS = ['Shirt', 'Backpack', 'Mug', 'Lamp', 'Wallet', 'Chair', 'Blanket', 'Bottle', 'Notebook', 'Jacket'];
const TAGS = ['new', 'sale', 'gift', 'eco', 'bestseller', 'limited', 'handmade', 'outdoor', 'kitchen', 'office'];
const CATEGORIES = [
  { id: 'cat-apparel', name: 'Apparel', path: 'Home > Apparel' },
  { id: 'cat-bags', name: 'Bags', path: 'Home > Accessories > Bags' },
  { id: 'cat-kitchen', name: 'Kitchen', path: 'Home > House > Kitchen' },
  { id: 'cat-lighting', name: 'Lighting', path: 'Home > House > Lighting' },
];
const SIZES = ['S', 'M'];
const money = (n: number) => Math.round(n * 100) / 100;

/** A product as a client would POST it: 2 variants, mixed statuses (none is 'Flowed'), tags, a description. */
function productBody(i: number, rnd: () => number): Record<string, unknown> {
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)];
  const sku = `flow-${String(i).padStart(6, '0')}`;
  const r = rnd();
  const brand = pick(BRANDS);
  const title = `${pick(ADJECTIVES)} ${pick(MATERIALS)} ${pick(NOUNS)}`;
  const price = money(5 + rnd() * 495);
  const tags = new Set<string>();
  const tagCount = 2 + Math.floor(rnd() * 3);
  while (tags.size < tagCount) tags.add(pick(TAGS));
  return {
    sku,
    status: r < 0.6 ? 'active' : r < 0.85 ? 'draft' : 'disabled',
    productType: 'physical',
    title: { value: title },
    description: { value: `<p>${title} by ${brand}: a sturdy everyday thing, made to last.</p>` },
    brand,
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

/** The documents Catalog.create would store for a body: validated (defaults filled), normalised, stamped. */
function storedDocs(body: unknown, tenantId: string, createdAt: Date): { product: ProductDoc; claims: SkuClaim[] } {
  const input = validateProductInput(body);
  const errs = crossFieldErrors(input);
  if (errs.length) throw new Error(`a seed product is invalid: ${JSON.stringify(errs)}`);
  const normalized = normalizeProduct(input);
  const _id = new ObjectId();
  const product = {
    ...withSearch(normalized),
    _id,
    createdAt,
    updatedAt: createdAt,
    version: 1,
    tenantId,
  } as ProductDoc;
  const claims = skusOf(normalized).map(({ sku, kind }): SkuClaim => ({
    _id: claimId(tenantId, sku),
    sku,
    kind,
    productId: _id.toHexString(),
    createdAt,
    tenantId,
  }));
  return { product, claims };
}

interface Seeded {
  ids: ObjectId[];
  /** Each product's status and brand as seeded: what a baseline reset puts back. */
  original: Pick<ProductDoc, 'status' | 'brand'>[];
  seconds: number;
  productBytes: number;
}

/** The catalog into `products` and `product_skus`, and the same product documents into the baseline's copy. */
async function seed(mongo: Mongo, tenantId: string, copy: Collection<ProductDoc>): Promise<Seeded> {
  const t = process.hrtime.bigint();
  const rnd = prng(20_261_124);
  const productsCol = mongo.db.collection<ProductDoc>(products.name);
  const skusCol = mongo.db.collection<SkuClaim>(productSkus.name);
  const ids: ObjectId[] = [];
  const original: Seeded['original'] = [];
  let productBytes = 0;
  const base = Date.now() - PRODUCTS * 60_000;
  for (let from = 0; from < PRODUCTS; from += BATCH) {
    const batch: ProductDoc[] = [];
    const claims: SkuClaim[] = [];
    for (let i = from; i < Math.min(PRODUCTS, from + BATCH); i++) {
      const { product, claims: c } = storedDocs(productBody(i, rnd), tenantId, new Date(base + i * 60_000));
      batch.push(product);
      claims.push(...c);
      ids.push(product._id);
      original.push({ status: product.status, brand: product.brand });
    }
    productBytes ||= BSON.calculateObjectSize(batch[0]);
    await productsCol.insertMany(batch);
    await skusCol.insertMany(claims);
    await copy.insertMany(batch);
    const done = Math.min(PRODUCTS, from + BATCH);
    if (done % 10_000 === 0 || done === PRODUCTS)
      console.log(`  seeded ${fmt(done)} / ${fmt(PRODUCTS)} products (${seconds(t).toFixed(1)} s)`);
  }
  return { ids, original, seconds: seconds(t), productBytes };
}

// ---------------------------------------------------------------------------------------------
// Baseline: the same two fields, raw unordered bulkWrite, 1,000 per call

async function setAll(
  col: Collection<ProductDoc>,
  ids: ObjectId[],
  values: (i: number) => Partial<ProductDoc>,
): Promise<{ seconds: number; modified: number }> {
  const t = process.hrtime.bigint();
  let modified = 0;
  for (let from = 0; from < ids.length; from += BATCH) {
    const res = await col.bulkWrite(
      ids.slice(from, from + BATCH).map((_id, j) => ({
        updateOne: { filter: { _id }, update: { $set: values(from + j) } },
      })),
      { ordered: false },
    );
    modified += res.modifiedCount;
  }
  return { seconds: seconds(t), modified };
}

// ---------------------------------------------------------------------------------------------
// Process CPU and the database commands of the profile

/** CPU ticks (user + system, 10 ms each) a process has used so far; null when /proc is not there. */
function cpuTicks(pid: number | null | undefined): number | null {
  if (!pid) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/** The FerretDB process serving `uri`: the stack's own, or the one listening on its port (read from /proc). */
function ferretdbPid(stack: Stack, uri: string): number | null {
  const own = stack.procs.find((p) => p.name === 'ferretdb')?.child.pid;
  if (own) return own;
  const port = new URL(uri).port;
  try {
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      let args: string[] = [];
      try {
        args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      } catch {
        continue;
      }
      if (/ferretdb$/.test(args[0] ?? '') && args.some((a) => a.startsWith('--listen-addr=') && a.endsWith(`:${port}`)))
        return Number(pid);
    }
  } catch {
    // no /proc
  }
  return null;
}

/** CPU milliseconds each named process spent while `work` ran (null where /proc cannot tell). */
async function cpuDuring<T>(
  pids: Record<string, number | null | undefined>,
  work: () => Promise<T>,
): Promise<{ value: T; cpuMs: Record<string, number | null> }> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuTicks(pid)]));
  const self = process.cpuUsage();
  const value = await work();
  const mine = process.cpuUsage(self);
  const cpuMs: Record<string, number | null> = { bench: (mine.user + mine.system) / 1000 };
  for (const [k, pid] of Object.entries(pids)) {
    const after = cpuTicks(pid);
    cpuMs[k] = before[k] === null || after === null ? null : (after - before[k]!) * 10;
  }
  return { value, cpuMs };
}

/** Database commands of a monitored client, by collection and command, with the time they took. */
class CommandLog {
  private started = new Map<number, string>();
  readonly byKey = new Map<string, { n: number; ms: number }>();
  failed = 0;

  constructor(client: MongoClient) {
    client.on('commandStarted', (e: CommandStartedEvent) => {
      // a getMore names its collection apart (its own field is the cursor id)
      const target = e.commandName === 'getMore' ? e.command.collection : e.command[e.commandName];
      this.started.set(e.requestId, `${typeof target === 'string' ? target : ''}\t${e.commandName}`);
    });
    client.on('commandSucceeded', (e: CommandSucceededEvent) => {
      const key = this.started.get(e.requestId) ?? `\t${e.commandName}`;
      this.started.delete(e.requestId);
      const c = this.byKey.get(key) ?? { n: 0, ms: 0 };
      c.n++;
      c.ms += e.duration;
      this.byKey.set(key, c);
    });
    client.on('commandFailed', (e: CommandFailedEvent) => {
      this.started.delete(e.requestId);
      this.failed++;
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The API and the run's timeline

async function api(base: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

interface Timeline {
  pages: number;
  attempts: number;
  /** Start to end of the workflow, as its history has it. */
  workflowSeconds: number;
  beforeFirstPage: number;
  inPages: number;
  betweenPages: number;
  afterLastPage: number;
  pageMean: number;
  pageMax: number;
  /** Scheduled to started: how long a page waited for the worker to pick it up. */
  queueMean: number;
}

/** Where the run's wall time went, from its workflow history: the pages, and the time around them. */
async function timelineOf(stack: Stack, workflowId: string): Promise<Timeline> {
  const temporal = await connectTemporal(stack.env.TEMPORAL_ADDRESS, stack.env.TEMPORAL_NAMESPACE);
  try {
    const events = (await temporal.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const at = (e: (typeof events)[number]) => tsToMs(e.eventTime);
    const scheduled = new Map<string, { type: string; at: number }>();
    const started = new Map<string, { at: number; attempt: number }>();
    const pages: { scheduled: number; started: number; completed: number }[] = [];
    let attempts = 0;
    for (const e of events) {
      const s = e.activityTaskScheduledEventAttributes;
      if (s) scheduled.set(String(e.eventId), { type: s.activityType!.name!, at: at(e) });
      const st = e.activityTaskStartedEventAttributes;
      if (st) started.set(String(e.eventId), { at: at(e), attempt: Number(st.attempt) });
      const c = e.activityTaskCompletedEventAttributes;
      if (c) {
        const sch = scheduled.get(String(c.scheduledEventId))!;
        const sta = started.get(String(c.startedEventId))!;
        if (sch.type !== 'editPage') continue;
        attempts += sta.attempt;
        pages.push({ scheduled: sch.at, started: sta.at, completed: at(e) });
      }
    }
    const start = at(events[0]);
    const end = at(events[events.length - 1]);
    const inPages = pages.reduce((s, p) => s + (p.completed - p.started), 0);
    const first = pages[0]?.scheduled ?? start;
    const last = pages[pages.length - 1]?.completed ?? end;
    return {
      pages: pages.length,
      attempts,
      workflowSeconds: (end - start) / 1000,
      beforeFirstPage: (first - start) / 1000,
      inPages: inPages / 1000,
      betweenPages: (last - first - inPages) / 1000,
      afterLastPage: (end - last) / 1000,
      pageMean: inPages / Math.max(1, pages.length) / 1000,
      pageMax: Math.max(0, ...pages.map((p) => p.completed - p.started)) / 1000,
      queueMean: pages.reduce((s, p) => s + (p.started - p.scheduled), 0) / Math.max(1, pages.length) / 1000,
    };
  } finally {
    await temporal.connection.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The profile: pages of a flow in this process, through the worker's code for a page

interface Profile {
  pages: { products: number; wallMs: number; cpuMs: Record<string, number | null> }[];
  /** Per product: collection and command, commands, ms each. */
  commands: { collection: string; command: string; perProduct: number; msEach: number }[];
  /** Planning alone (the flow, then the product rules), per product, without the database. */
  planUs: number;
  /** Fixing the selection's pages (what a run's start does), for the whole catalog. */
  snapshotSeconds: number;
  itemBytes: number;
  failed: number;
}

async function profile(stack: Stack, database: string, tenantId: string, ferretdb: number | null): Promise<Profile> {
  const client = new MongoClient(stack.env.MONGODB_URI, { monitorCommands: true });
  await client.connect();
  try {
    const log = new CommandLog(client);
    const tenantDb = new TenantDb(client.db(database), tenantId);
    const config = loadConfig({ ...process.env, ...stack.env });
    const jobId = newId('flow');
    const input: EditJobInput = {
      type: 'flow',
      mode: 'apply',
      flow: PROFILE_FLOW,
      selection: PROFILE_FLOW.selection,
      missingSkus: [],
      previewId: null,
      operationId: newId('bop'),
      operationName: 'bench profile',
      actor: 'bench',
      total: PRODUCTS,
      sync: false,
    };
    const run = editRunOf(config, jobId, input);
    const planner = await editPlanner(config, tenantDb, async () => null, jobId, input);

    // planning alone, on the first page's products as they are now
    const sample = await tenantDb
      .collection(products)
      .find({}, { sort: { _id: 1 }, limit: run.pageSize })
      .toArray();
    const catalog = new Catalog(tenantDb);
    const t = process.hrtime.bigint();
    for (const p of sample) await planProposal(catalog, p, await planner.propose(p));
    const planUs = (seconds(t) * 1e6) / Math.max(1, sample.length);

    // the run's pages, fixed as its start fixes them
    const t1 = process.hrtime.bigint();
    const snapshot = await snapshotSelection(tenantDb, jobId, run.selection, run.pageSize);
    const snapshotSeconds = seconds(t1);
    log.byKey.clear();
    const pages: Profile['pages'] = [];
    for (let page = 0; page < Math.min(PROFILE_PAGES, snapshot.pages); page++) {
      const t0 = process.hrtime.bigint();
      const { value: done, cpuMs } = await cpuDuring({ ferretdb }, () => runEditPage(tenantDb, run, planner, page));
      pages.push({ products: done.counts.changed, wallMs: seconds(t0) * 1000, cpuMs });
    }
    const changed = pages.reduce((s, p) => s + p.products, 0);
    const commands = [...log.byKey]
      .map(([key, c]) => {
        const [collection, command] = key.split('\t');
        return { collection, command, perProduct: c.n / Math.max(1, changed), msEach: c.ms / c.n };
      })
      .sort((a, b) => b.perProduct * b.msEach - a.perProduct * a.msEach);
    const item = await tenantDb.collection(bulkOperationItems).findOne({ operationId: input.operationId });
    return {
      pages,
      commands,
      planUs,
      snapshotSeconds,
      itemBytes: item ? BSON.calculateObjectSize(item) : 0,
      failed: log.failed,
    };
  } finally {
    await client.close();
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-flow-'));
  const loadBefore = loadavg();
  // read now: the worker and this process load the code as it is at the start
  const code = codeVersion();
  const database = `bench_flow_${Date.now().toString(36)}`;
  let stack: Stack | null = null;
  let mongo: Mongo | null = null;
  try {
    console.log(
      `Flow benchmark: ${fmt(PRODUCTS)} products; machine ${cpus().length} cores, load ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`,
    );
    stack = await startStack({
      dataDir,
      ports: 'free',
      withApp: true,
      env: { ...process.env, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', MONGODB_DB: database },
      log: (l) => console.log(`  ${l}`),
    });
    const where = process.env.MONGODB_URI ? 'a running FerretDB (MONGODB_URI)' : 'embedded FerretDB';
    const base = stack.apiUrl!;
    mongo = await connectMongo(stack.env.MONGODB_URI, database);
    await ensureIndexes(mongo.db, allCollections);
    const copy = mongo.db.collection<ProductDoc>('bench_flow_baseline');
    for (const ix of products.indexes) await copy.createIndex(ix.key, ix.options ?? {});
    const tenancy = new Tenancy(mongo.db);
    const tenant = await tenancy.createTenant('Flow benchmark');
    const { key } = await tenancy.issueKey(tenant._id, ['products:read', 'products:update'], 'bench');
    const pids = {
      worker: stack.procs.find((p) => p.name === 'worker')?.child.pid,
      api: stack.procs.find((p) => p.name === 'api')?.child.pid,
      ferretdb: ferretdbPid(stack, stack.env.MONGODB_URI),
    };

    const seeded = await seed(mongo, tenant._id, copy);
    console.log(`Seeded ${fmt(PRODUCTS)} products (and the baseline's copy) in ${seeded.seconds.toFixed(1)} s`);
    const target = () => TARGET;
    const putBack = (i: number) => seeded.original[i] as Partial<ProductDoc>;

    // baseline before
    const before = await cpuDuring({ ferretdb: pids.ferretdb }, () => setAll(copy, seeded.ids, target));
    console.log(`Baseline before: ${before.value.seconds.toFixed(1)} s (${fmt(PRODUCTS / before.value.seconds)}/s)`);
    await setAll(copy, seeded.ids, putBack);

    // ours: the API, a job, polled to its end
    const ours = await cpuDuring(pids, async () => {
      const t = process.hrtime.bigint();
      const posted = await api(base, key, 'POST', '/products/bulk/flow/execute', FLOW);
      const answeredIn = seconds(t);
      if (posted.status !== 202) throw new Error(`execute: ${posted.status} ${JSON.stringify(posted.body)}`);
      const jobId = posted.body.jobId as string;
      for (;;) {
        await sleep(POLL_MS);
        const got = await api(base, key, 'GET', `/products/bulk/flow/${jobId}`);
        if (got.status !== 200) throw new Error(`poll: ${got.status} ${JSON.stringify(got.body)}`);
        if (!['queued', 'processing'].includes(got.body.status as string))
          return { jobId, view: got.body, seconds: seconds(t), answeredIn };
      }
    });
    const { view } = ours.value;
    const oursRate = (view.counts?.changed ?? 0) / ours.value.seconds;
    console.log(
      `Ours: ${view.status} in ${ours.value.seconds.toFixed(1)} s (POST answered in ${ours.value.answeredIn.toFixed(2)} s), ${fmt(view.counts?.changed ?? 0)} changed (${fmt(oursRate)}/s)`,
    );

    // baseline after, on the copy put back as seeded
    const after = await cpuDuring({ ferretdb: pids.ferretdb }, () => setAll(copy, seeded.ids, target));
    console.log(`Baseline after: ${after.value.seconds.toFixed(1)} s (${fmt(PRODUCTS / after.value.seconds)}/s)`);

    // checks
    const tenantDb = new TenantDb(mongo.db, tenant._id);
    const operationId = view.operationId as string | null;
    const [flowed, items, copied] = await Promise.all([
      tenantDb.collection(products).countDocuments({ ...TARGET, version: 2 }),
      operationId ? tenantDb.collection(bulkOperationItems).countDocuments({ operationId }) : Promise.resolve(0),
      copy.countDocuments(TARGET),
    ]);
    const checks = [
      [
        `the job completed, ${fmt(PRODUCTS)} matched and changed, none failed or invalid`,
        view.status === 'completed' &&
          view.counts?.matched === PRODUCTS &&
          view.counts?.changed === PRODUCTS &&
          view.counts?.failed === 0 &&
          view.counts?.invalid === 0,
      ],
      [`every product of ours has both fields, at version 2 (${fmt(flowed)})`, flowed === PRODUCTS],
      [`the bulk operation holds one item per product (${fmt(items)})`, items === PRODUCTS],
      [
        `every baseline run changed every document, and the copy ends with both fields (${fmt(copied)})`,
        before.value.modified === PRODUCTS && after.value.modified === PRODUCTS && copied === PRODUCTS,
      ],
    ] as const;
    for (const [what, ok] of checks) console.log(`${ok ? 'ok' : 'FAILED'}: ${what}`);

    const record = await tenantDb.collection(jobs).findOne({ _id: ours.value.jobId });
    const timeline = record ? await timelineOf(stack, record.workflowId) : null;
    console.log('Profiling …');
    const prof = await profile(stack, database, tenant._id, pids.ferretdb);

    // the report
    const baseRates = [PRODUCTS / before.value.seconds, PRODUCTS / after.value.seconds];
    const baseMean = (baseRates[0] + baseRates[1]) / 2;
    const ratio = oursRate / baseMean;
    const perProduct = (ms: number | null | undefined) => (ms == null ? '—' : ((ms * 1000) / PRODUCTS).toFixed(0));
    const profiled = prof.pages.reduce((s, p) => s + p.products, 0);
    const pageCpu = (k: string) => {
      let sum = 0;
      for (const p of prof.pages) {
        const ms = p.cpuMs[k];
        if (ms == null) return null;
        sum += ms;
      }
      return sum;
    };
    const date = new Date().toISOString().slice(0, 10);
    const tl = timeline;
    const lines = [
      `# Rule flows: two fields on ${fmt(PRODUCTS)} products vs a raw bulkWrite (${date})`,
      '',
      '```sh',
      `BENCH_PRODUCTS=${PRODUCTS} BENCH_PROFILE_PAGES=${PROFILE_PAGES} npx tsx bench/flow.ts`,
      '```',
      '',
      `- code: ${code}`,
      `- machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} (shared with other work); ${where}`,
      `- ${fmt(PRODUCTS)} products in one tenant (2 variants, 2–4 tags, a description, a category; ${fmt(seeded.productBytes)} bytes each as stored), seeded with their SKU claims and the baseline's copy in ${seeded.seconds.toFixed(1)} s`,
      `- ours: POST /products/bulk/flow/execute \`${JSON.stringify(FLOW)}\` (202, a job), polled every ${POLL_MS} ms until it ended; products changed / seconds from the POST to the poll that saw it end. pages of ${PAGE_SIZE} products (EDIT_PAGE_SIZE), each read, planned (the flow, then the rules of a product write), recorded in the bulk operation with what undoing it needs, written by one unordered bulkWrite guarded by version`,
      `- baseline: \`updateOne({_id}, {$set: ${JSON.stringify(TARGET)}})\` for every product, unordered bulkWrite of ${BATCH} per call, on a copy of the same documents with the products' indexes; the two fields put back (untimed) between runs; run before and after ours, ratio against the mean`,
      '',
      '| measure | products/s | seconds | ours / baseline mean | goal |',
      '|---|---:|---:|---:|---|',
      `| baseline before | ${fmt(baseRates[0])} | ${before.value.seconds.toFixed(1)} | | |`,
      `| baseline after | ${fmt(baseRates[1])} | ${after.value.seconds.toFixed(1)} | | |`,
      `| **ours** (flow job through the API) | **${fmt(oursRate)}** | ${ours.value.seconds.toFixed(1)} | **${ratio.toFixed(2)}** | ≥ ${GOAL} ${ratio >= GOAL ? 'PASS' : 'BELOW'} |`,
      '',
      ...checks.map(([what, ok]) => `- ${ok ? 'ok' : 'FAILED'}: ${what}`),
      '',
      '## Where ours spends its time',
      '',
      `CPU per product (µs; /proc, whole process): ours — worker ${perProduct(ours.cpuMs.worker)}, FerretDB ${perProduct(ours.cpuMs.ferretdb)}, API ${perProduct(ours.cpuMs.api)} (the polls), benchmark ${perProduct(ours.cpuMs.bench)}; baseline — FerretDB ${perProduct(before.cpuMs.ferretdb)} / ${perProduct(after.cpuMs.ferretdb)}, benchmark (driver) ${perProduct(before.cpuMs.bench)} / ${perProduct(after.cpuMs.bench)}.`,
      '',
      ...(tl
        ? [
            `The run's timeline (its workflow history): the POST answered in ${ours.value.answeredIn.toFixed(2)} s; the workflow ran ${tl.workflowSeconds.toFixed(1)} s: ${tl.beforeFirstPage.toFixed(1)} s before the first page, ${tl.pages} pages (${tl.attempts} attempts) for ${tl.inPages.toFixed(1)} s (${tl.pageMean.toFixed(2)} s each on average, the longest ${tl.pageMax.toFixed(2)} s; ${tl.queueMean.toFixed(3)} s from scheduled to started), ${tl.betweenPages.toFixed(1)} s between pages, ${tl.afterLastPage.toFixed(1)} s after the last (closing the operation, the job record).`,
            '',
          ]
        : []),
      `Profile: ${prof.pages.length} pages (${fmt(profiled)} products) of another two-field flow (${JSON.stringify(PROFILE_FLOW.rules[0].actions)}) run in the benchmark's process by \`runEditPage\` (the worker's code for a page) on a client with command monitoring; per page: ${prof.pages.map((p) => `${fmt(p.wallMs, 0)} ms`).join(', ')} wall; per product ${((prof.pages.reduce((s, p) => s + p.wallMs, 0) * 1000) / Math.max(1, profiled)).toFixed(0)} µs wall, ${(((pageCpu('bench') ?? 0) * 1000) / Math.max(1, profiled)).toFixed(0)} µs of the benchmark's CPU (planning, the driver, monitoring), ${pageCpu('ferretdb') == null ? '—' : ((pageCpu('ferretdb')! * 1000) / Math.max(1, profiled)).toFixed(0)} µs of FerretDB's. Planning alone (the flow, then the product rules, no database): ${prof.planUs.toFixed(0)} µs per product. Fixing the pages of the whole selection (a run's start): ${prof.snapshotSeconds.toFixed(1)} s. A product is ${fmt(seeded.productBytes)} bytes; its operation item (what undoing the change needs) ${fmt(prof.itemBytes)} bytes.${prof.failed ? ` ${prof.failed} commands failed.` : ''}`,
      '',
      '| collection | command | per product | ms each | ms per product |',
      '|---|---|---:|---:|---:|',
      ...prof.commands.map(
        (c) =>
          `| ${c.collection} | ${c.command} | ${c.perProduct.toFixed(4)} | ${c.msEach.toFixed(1)} | ${(c.perProduct * c.msEach).toFixed(3)} |`,
      ),
    ];
    const report = lines.join('\n') + '\n';
    console.log('\n' + report);
    mkdirSync(RESULTS_DIR, { recursive: true });
    // one file per benchmark, the newest run (git keeps the earlier ones)
    const file = join(RESULTS_DIR, 'flow.md');
    writeFileSync(file, report);
    console.log(`Written to ${file}`);
    console.log(`ratio ours / baseline: ${ratio.toFixed(2)} (goal ≥ ${GOAL})`);
    return checks.every(([, ok]) => ok) ? 0 : 1;
  } finally {
    if (!KEEP_DATA) await mongo?.db.dropDatabase().catch(() => undefined);
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

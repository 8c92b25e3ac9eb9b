/**
 * Material receipts and transfers: our stock store next to a raw guarded `$inc`, in the same run,
 * on the same database.
 *
 * Starts the servers (FerretDB; no API or worker needed) on free ports in a temporary directory,
 * or uses the running ones named by MONGODB_URI (and the other addresses), exactly as bench/stock.ts
 * does; the run has a database of its own (`bench_materials_<time>`), dropped at the end. Then for
 * two shapes of load — HOT: every operation on one material; SPREAD: operations over
 * BENCH_MATERIALS materials (200) — and two numbers in flight — 1 (sequential) and
 * BENCH_CONCURRENCY (8) — runs BENCH_OPS operations (300) of each of:
 *
 * - receipts: `new StockStore(tenantDb, 'material').receive(sku, {locationId, quantity: 1, lot:
 *   {costPerUnit}, idempotencyKey})` (shared/materials/stock.ts): reads, then the SKU's stock
 *   document after the receipt written with one version-guarded update;
 * - transfers: `.transfer({sku, fromLocationId, toLocationId, quantity: 1, idempotencyKey})`,
 *   alternating A→B and B→A, each one version-guarded write of the same document;
 * - baseline: the driver's `updateOne({_id, a: {$gte: 1}}, {$inc: {a: -1, b: 1}})` (a transfer
 *   between two balances of one document, guarded against going below zero), alternating
 *   direction, on one document (hot) or BENCH_MATERIALS documents (spread); run before and after
 *   ours, and the mean of the two taken, since the machine is shared.
 *
 * Then a profile pass on another client with command monitoring: database commands per operation
 * (reads, writes, lost races) and the time they took; the size of the stock documents; and what
 * the same commands cost on documents of three sizes. Checks that every balance ends exactly
 * where it must (exit code 1 otherwise). Writes bench/results/materials.md; the header names the
 * commit measured (and any uncommitted change to shared/ or api/).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BSON, MongoClient, type CommandStartedEvent, type CommandSucceededEvent } from 'mongodb';
import { startStack, type Stack } from '../scripts/stack/stack';
import { connectMongo, ensureIndexes, type Mongo } from '../shared/db/mongo';
import { allCollections } from '../shared/collections';
import { TenantDb } from '../shared/db/tenant-db';
import { mapLimit } from '../shared/concurrency';
import { LocationService } from '../shared/locations/service';
import { materialStock, recordId, type StockDoc } from '../shared/materials/collections';
import { StockStore } from '../shared/materials/stock';
import { encodeJournal } from '../shared/materials/stock-codec';
import { codeVersion } from './support';

const OPS = Number(process.env.BENCH_OPS ?? 300);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const SPREAD = Number(process.env.BENCH_MATERIALS ?? 200);
/** Untimed operations on the hot material first, so its journal is full and flushing as in steady use. */
const WARMUP = 40;
/** Operations of each kind in the profile pass. */
const PROFILE_OPS = 40;
/** Opening stock at each location, in base units (precision 3: in grams, a million kg). */
const OPENING = 1_000_000;
const COST = 2.5;
const RESULTS_DIR = join(resolve(__dirname, '..'), 'bench', 'results');

type Shape = 'hot' | 'spread';
type Kind = 'receipt' | 'transfer';

const materialBody = (sku: string) => ({
  sku,
  title: `Bench ${sku}`,
  baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
  alternativeUnits: [],
  costingMethod: 'average',
  initialCost: COST,
  currency: 'USD',
  tags: [],
  status: 'active',
  suppliers: [],
  lotTrackingEnabled: false,
});

interface Ctx {
  store: StockStore;
  tenantDb: TenantDb;
  a: string;
  b: string;
}

let keys = 0;

/** One operation of ours: operation `i` of the run, on material `sku`. */
function ours(ctx: Ctx, kind: Kind, sku: string, i: number): Promise<unknown> {
  const idempotencyKey = `bench-${++keys}`;
  if (kind === 'receipt')
    return ctx.store.receive(sku, {
      locationId: ctx.a,
      quantity: 1,
      lot: { costPerUnit: COST },
      actor: 'bench',
      idempotencyKey,
    });
  const [from, to] = i % 2 ? [ctx.b, ctx.a] : [ctx.a, ctx.b];
  return ctx.store.transfer({
    sku,
    fromLocationId: from,
    toLocationId: to,
    quantity: 1,
    actor: 'bench',
    idempotencyKey,
  });
}

async function timed(n: number, inFlight: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const t = process.hrtime.bigint();
  await mapLimit(
    Array.from({ length: n }, (_, i) => i),
    inFlight,
    op,
  );
  return Number(process.hrtime.bigint() - t) / 1e9;
}

interface Row {
  shape: Shape;
  inFlight: number;
  receipts: number;
  transfers: number;
  baseline: [number, number];
}

/** Database commands seen by a monitored client, by name, with their time; and updates that matched nothing (lost races). */
class CommandLog {
  private started = new Map<number, string>();
  counts = new Map<string, { n: number; ms: number }>();
  missedUpdates = 0;

  constructor(client: MongoClient) {
    client.on('commandStarted', (e: CommandStartedEvent) => this.started.set(e.requestId, e.commandName));
    client.on('commandSucceeded', (e: CommandSucceededEvent) => {
      const name = this.started.get(e.requestId) ?? e.commandName;
      this.started.delete(e.requestId);
      const c = this.counts.get(name) ?? { n: 0, ms: 0 };
      c.n++;
      c.ms += e.duration;
      this.counts.set(name, c);
      if (name === 'update' && (e.reply as { n?: number }).n === 0) this.missedUpdates++;
    });
  }

  reset(): void {
    this.counts.clear();
    this.missedUpdates = 0;
  }

  summary(ops: number, seconds: number): string {
    const get = (name: string) => this.counts.get(name) ?? { n: 0, ms: 0 };
    const all = [...this.counts.values()].reduce((s, c) => ({ n: s.n + c.n, ms: s.ms + c.ms }), { n: 0, ms: 0 });
    const per = (name: string) => {
      const c = get(name);
      return c.n ? `${(c.n / ops).toFixed(2)} (${(c.ms / c.n).toFixed(1)} ms)` : '0';
    };
    return `| ${per('find')} | ${per('update')} | ${per('insert')} | ${(this.missedUpdates / ops).toFixed(2)} | ${(all.n / ops).toFixed(2)} | ${(all.ms / ops).toFixed(1)} | ${((seconds * 1000) / ops).toFixed(1)} |`;
  }
}

async function main(): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-materials-'));
  const loadBefore = loadavg();
  const database = `bench_materials_${Date.now().toString(36)}`;
  let stack: Stack | null = null;
  let mongo: Mongo | null = null;
  let monitored: MongoClient | null = null;
  try {
    stack = await startStack({
      dataDir,
      ports: 'free',
      withApp: false,
      env: { ...process.env, LOG_LEVEL: 'warn', MONGODB_DB: database },
      log: (l) => console.log(`  ${l}`),
    });
    const where = process.env.MONGODB_URI ? 'a running FerretDB (MONGODB_URI)' : 'embedded FerretDB';
    mongo = await connectMongo(stack.env.MONGODB_URI, database);
    await ensureIndexes(mongo.db, allCollections);

    const tenantDb = new TenantDb(mongo.db, `ten_bench_${Date.now().toString(36)}`);
    const locations = new LocationService(tenantDb);
    const [a, b] = [
      (await locations.create({ name: 'Kitchen', type: 'location' }))._id,
      (await locations.create({ name: 'Bakery', type: 'location' }))._id,
    ];
    const ctx: Ctx = { store: new StockStore(tenantDb, 'material'), tenantDb, a, b };

    // the materials, each with opening stock at both locations
    const hot = 'HOT-1';
    const spread = Array.from({ length: SPREAD }, (_, i) => `SPREAD-${String(i).padStart(4, '0')}`);
    const t = Date.now();
    await mapLimit([hot, ...spread], 4, async (sku) => {
      await ctx.store.records.create(materialBody(sku));
      for (const locationId of [a, b])
        await ctx.store.receive(sku, { locationId, quantity: OPENING, lot: { costPerUnit: COST }, actor: 'bench' });
    });
    const seedSeconds = (Date.now() - t) / 1000;
    console.log(`seeded ${SPREAD + 1} materials in ${seedSeconds.toFixed(1)} s`);
    for (const kind of ['transfer', 'receipt'] as const) await timed(WARMUP, 1, (i) => ours(ctx, kind, hot, i));

    // the baseline's documents: the same balances, two fields each
    const raw = mongo.db.collection<{ _id: string; a: number; b: number }>('bench_raw_balances');
    await raw.insertMany([hot, ...spread].map((sku) => ({ _id: sku, a: OPENING * 1000, b: OPENING * 1000 })));
    let rawMoves = 0;
    const baseline = (skuOf: (i: number) => string) => async (i: number) => {
      const [from, to] = i % 2 ? ['b', 'a'] : ['a', 'b'];
      const res = await raw.updateOne({ _id: skuOf(i), [from]: { $gte: 1 } }, { $inc: { [from]: -1, [to]: 1 } });
      if (res.modifiedCount !== 1) throw new Error('baseline move refused');
      rawMoves++;
    };

    const rows: Row[] = [];
    const expected = new Map<string, number>([hot, ...spread].map((s) => [s, 2 * OPENING * 1000]));
    expected.set(hot, expected.get(hot)! + WARMUP * 1000);
    for (const shape of ['hot', 'spread'] as const) {
      const skuOf = (i: number) => (shape === 'hot' ? hot : spread[i % SPREAD]);
      for (const inFlight of [1, CONCURRENCY]) {
        const rate = (seconds: number) => OPS / seconds;
        const base1 = rate(await timed(OPS, inFlight, baseline(skuOf)));
        const transfers = rate(await timed(OPS, inFlight, (i) => ours(ctx, 'transfer', skuOf(i), i)));
        const receipts = rate(await timed(OPS, inFlight, (i) => ours(ctx, 'receipt', skuOf(i), i)));
        for (let i = 0; i < OPS; i++) expected.set(skuOf(i), expected.get(skuOf(i))! + 1000);
        const base2 = rate(await timed(OPS, inFlight, baseline(skuOf)));
        const row: Row = { shape, inFlight, receipts, transfers, baseline: [base1, base2] };
        rows.push(row);
        const mean = (base1 + base2) / 2;
        console.log(
          `${shape} × ${inFlight} in flight: receipts ${receipts.toFixed(1)}/s (${(receipts / mean).toFixed(2)}), transfers ${transfers.toFixed(1)}/s (${(transfers / mean).toFixed(2)}), baseline ${base1.toFixed(1)} / ${base2.toFixed(1)}/s`,
        );
      }
    }

    // balances: every material exactly its opening stock plus its receipts, each location the sum of its lots
    const docs = (await tenantDb
      .collection(materialStock)
      .find({ _id: { $in: [hot, ...spread].map((s) => recordId(tenantDb.tenantId, s)) } })
      .toArray()) as StockDoc[];
    let right = docs.length === SPREAD + 1;
    for (const doc of docs) {
      const total = doc.locations.reduce((s, l) => s + l.quantity, 0);
      right &&= total === expected.get(doc.sku);
      for (const l of doc.locations)
        right &&= l.quantity >= 0 && l.lots.reduce((s, lot) => s + lot.quantity, 0) === l.quantity;
    }
    const rawDocs = await raw.find().toArray();
    right &&= rawDocs.every((d) => d.a + d.b === 2 * OPENING * 1000 && d.a >= 0 && d.b >= 0) && rawMoves === 8 * OPS;
    console.log(`balances ${right ? 'right' : 'WRONG'}`);

    // the profile: commands per operation on a monitored client, sequential and in flight, hot
    monitored = new MongoClient(stack.env.MONGODB_URI, { monitorCommands: true });
    await monitored.connect();
    const log = new CommandLog(monitored);
    const pctx: Ctx = {
      ...ctx,
      store: new StockStore(new TenantDb(monitored.db(database), tenantDb.tenantId), 'material'),
    };
    const prow = monitored.db(database).collection<{ _id: string; a: number; b: number }>('bench_raw_balances');
    const profile: string[] = [];
    for (const inFlight of [1, CONCURRENCY]) {
      for (const what of ['transfer', 'receipt', 'baseline'] as const) {
        log.reset();
        const seconds = await timed(PROFILE_OPS, inFlight, (i) =>
          what === 'baseline'
            ? prow.updateOne({ _id: hot, a: { $gte: 1 } }, { $inc: { a: i % 2 ? 1 : -1, b: i % 2 ? -1 : 1 } })
            : ours(pctx, what, hot, i),
        );
        profile.push(`| ${what} | ${inFlight} ${log.summary(PROFILE_OPS, seconds)}`);
      }
    }
    const hotNow = (await ctx.store.stockOf(hot))!;
    const spreadDoc = docs.find((d) => d.sku === spread[0])!;
    // sizes as stored: the journal is one text there (shared/materials/stock-codec.ts)
    const hotStored = { ...hotNow, journal: encodeJournal(hotNow.journal) };
    const sizes = {
      hot: BSON.calculateObjectSize(hotStored),
      journal: BSON.calculateObjectSize({ j: hotStored.journal }),
      history: BSON.calculateObjectSize({ h: hotNow.costing?.history ?? [] }),
      lots: hotNow.locations.map((l) => l.lots.length).join(' + '),
      spread: BSON.calculateObjectSize(spreadDoc),
      raw: BSON.calculateObjectSize(rawDocs[0]),
    };

    // what the size of a document costs: the same three commands on a tiny document, on the hot
    // stock document without its journal and cost history, and on a copy of it as it is
    const { _id: _i, tenantId: _t, version: _v, ...fields } = hotStored;
    const slimFields = {
      ...fields,
      journal: encodeJournal([]),
      costing: hotNow.costing && { ...hotNow.costing, history: [] },
    };
    const shaped = mongo.db.collection<{ _id: string; [field: string]: any }>('bench_doc_size');
    const variants: { name: string; doc: Record<string, unknown> }[] = [
      { name: 'tiny (two balances)', doc: {} },
      { name: 'hot stock document without journal and cost history', doc: slimFields },
      { name: 'hot stock document as stored', doc: fields },
    ];
    const sizeRows: string[] = [];
    for (const [n, v] of variants.entries()) {
      const _id = `doc-${n}`;
      await shaped.insertOne({ _id, ...v.doc, a: OPENING, b: OPENING, version: 0 });
      const bytes = BSON.calculateObjectSize((await shaped.findOne({ _id }))!);
      const ms = async (op: (i: number) => Promise<unknown>) =>
        ((await timed(PROFILE_OPS, 1, op)) * 1000) / PROFILE_OPS;
      const inc = await ms(() => shaped.updateOne({ _id, a: { $gte: 1 } }, { $inc: { a: -1, b: 1 } }));
      const read = await ms(() => shaped.findOne({ _id }));
      const setAll = await ms((i) =>
        shaped.updateOne({ _id, version: i }, { $set: { ...v.doc, a: OPENING, b: OPENING, version: i + 1 } }),
      );
      sizeRows.push(
        `| ${v.name} | ${bytes.toLocaleString('en')} | ${inc.toFixed(1)} | ${read.toFixed(1)} | ${setAll.toFixed(1)} |`,
      );
    }

    const date = new Date().toISOString().slice(0, 10);
    const fmt = (n: number) => n.toFixed(1);
    const ratio = (ours: number, row: Row) => (ours / ((row.baseline[0] + row.baseline[1]) / 2)).toFixed(2);
    const goal = (ours: number, row: Row) => (Number(ratio(ours, row)) >= 0.5 ? '' : ' (below 0.5)');
    const report =
      [
        `# Materials: receipts and transfers vs raw guarded $inc (${date})`,
        '',
        '```sh',
        `BENCH_OPS=${OPS} BENCH_CONCURRENCY=${CONCURRENCY} BENCH_MATERIALS=${SPREAD} npx tsx bench/materials.ts`,
        '```',
        '',
        `- code: ${codeVersion()}`,
        `- ${OPS} operations per row and kind, 1 or ${CONCURRENCY} in flight, in the benchmark's process through \`StockStore\` (shared/materials/stock.ts), each with its own Idempotency-Key; ${where}; machine ${cpus().length} cores, load before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')} (shared with other work)`,
        `- hot: one material (after ${WARMUP} untimed transfers and ${WARMUP} receipts); spread: ${SPREAD} materials, operation i on material i mod ${SPREAD}; seeding ${SPREAD + 1} materials with stock at two locations took ${seedSeconds.toFixed(1)} s`,
        '- receipts: `receive(sku, {locationId, quantity: 1, lot: {costPerUnit}, idempotencyKey})`; transfers: `transfer({sku, fromLocationId, toLocationId, quantity: 1, idempotencyKey})`, alternating direction',
        '- baseline: `updateOne({_id, a: {$gte: 1}}, {$inc: {a: -1, b: 1}})`, alternating direction, on one document (hot) or one per material (spread), run before and after ours (both shown); ratios against their mean',
        `- final balances: ${right ? 'ok (every material its opening stock plus its receipts, each location the sum of its lots; baseline sums unchanged)' : 'WRONG'}`,
        '',
        '| load | in flight | receipts/s | transfers/s | baseline/s (before / after) | receipts / baseline | transfers / baseline |',
        '|---|---:|---:|---:|---:|---:|---:|',
        ...rows.map(
          (r) =>
            `| ${r.shape === 'hot' ? 'hot (1 material)' : `spread (${SPREAD} materials)`} | ${r.inFlight} | ${fmt(r.receipts)} | ${fmt(r.transfers)} | ${fmt(r.baseline[0])} / ${fmt(r.baseline[1])} | ${ratio(r.receipts, r)}${goal(r.receipts, r)} | ${ratio(r.transfers, r)}${goal(r.transfers, r)} |`,
        ),
        '',
        `## Where the time goes (hot material, ${PROFILE_OPS} operations each, command monitoring on)`,
        '',
        'Commands per operation (mean duration of one, as the driver saw it), updates that matched nothing (a lost race), all commands per operation, the time they took per operation summed, and the wall time per operation.',
        '',
        '| operation | in flight | find | update | insert | lost races | commands | command ms / op | wall ms / op |',
        '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
        ...profile,
        '',
        `## What a document's size costs (sequential, ${PROFILE_OPS} each, ms per command)`,
        '',
        'The guarded `$inc` of the baseline, a read by `_id`, and a `$set` of every field guarded by the version (what the store writes), on three documents of the same collection.',
        '',
        '| document | bytes | guarded $inc | findOne | $set of all fields |',
        '|---|---:|---:|---:|---:|',
        ...sizeRows,
        '',
        `Stock document of the hot material: ${sizes.hot.toLocaleString('en')} bytes (journal ${sizes.journal.toLocaleString('en')}, cost history ${sizes.history.toLocaleString('en')}, lots ${sizes.lots}); of a spread material ${sizes.spread.toLocaleString('en')} bytes; a baseline document ${sizes.raw} bytes.`,
      ].join('\n') + '\n';
    console.log('\n' + report);
    mkdirSync(RESULTS_DIR, { recursive: true });
    writeFileSync(join(RESULTS_DIR, 'materials.md'), report);
    return right ? 0 : 1;
  } finally {
    await monitored?.close().catch(() => undefined);
    await mongo?.db.dropDatabase().catch(() => undefined);
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

/**
 * BOM consumptions: runs of a 5-component bill of materials through our consumption service next
 * to the same five deductions as raw guarded `$inc` writes, in the same run, on the same database.
 *
 * Starts the servers (FerretDB; no API or worker needed) on free ports in a temporary directory,
 * or uses the running ones named by MONGODB_URI, exactly as bench/materials.ts does; the run has a
 * database of its own (`bench_consumption_<time>`), dropped at the end. Every product's bill of
 * materials has five components, each a material of its own (costing FIFO, LIFO, average, last
 * purchase, FIFO; units kg and g; 10% wastage) with opening stock in several lots at the tenant's
 * default location. Then for two shapes of load — HOT: every run on one product (so on the same
 * five materials); SPREAD: runs over BENCH_PRODUCTS products (8), each with its own five
 * materials — and each number in flight of BENCH_IN_FLIGHT (1,8,32), BENCH_OPS runs (300) of:
 *
 * - ours: `new ConsumptionService(tenantDb, actor).runBom(productSku, {quantity: 1, referenceId},
 *   undefined)` (shared/consumption/service.ts), each with a referenceId of its own: reads the
 *   product, the location, the materials and their stock (the plan), records a consumption
 *   document, takes each material's stock by a movement (shared/materials/stock.ts, group commit
 *   per material) and decides applied with one guarded update;
 * - baseline: the same five deductions, one after the other, as the driver's
 *   `updateOne({_id, qty: {$gte: q}}, {$inc: {qty: -q}})` on five small documents (one per
 *   material); run before and after ours, and the mean of the two taken, since the machine is shared.
 *
 * Then a profile pass on another client with command monitoring: database commands per run, by
 * command and by collection, and the time they took. Checks that every material's balance is
 * exactly its opening stock less what the runs took (and the lots sum to it), that there is one
 * applied consumption document per run and one consumption movement per run and material, and the
 * baseline's balances (exit code 1 otherwise). Writes bench/results/consumption.md; the header
 * names the commit measured (and any uncommitted change to shared/ or api/).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  BSON,
  MongoClient,
  ObjectId,
  type CommandFailedEvent,
  type CommandStartedEvent,
  type CommandSucceededEvent,
} from 'mongodb';
import { startStack, type Stack } from '../scripts/stack/stack';
import { connectMongo, ensureIndexes, type Mongo } from '../shared/db/mongo';
import { allCollections } from '../shared/collections';
import { TenantDb } from '../shared/db/tenant-db';
import { mapLimit } from '../shared/concurrency';
import { Locations } from '../shared/locations/locations';
import { materialMovements, materialStock, recordId, type StockDoc } from '../shared/materials/collections';
import { decodeStock } from '../shared/materials/stock-codec';
import { StockStore } from '../shared/materials/stock';
import { materialConsumptions } from '../shared/consumption/collections';
import { ConsumptionService } from '../shared/consumption/service';
import { Catalog } from '../shared/products/catalog';
import { codeVersion } from './support';

const OPS = Number(process.env.BENCH_OPS ?? 300);
const IN_FLIGHT = (process.env.BENCH_IN_FLIGHT ?? '1,8,32').split(',').map(Number);
const PRODUCTS = Number(process.env.BENCH_PRODUCTS ?? 8);
/** Untimed runs of every product first, so each material's journal is full and flushing as in steady use. */
const WARMUP = 40;
/** Runs of each kind in the profile pass. */
const PROFILE_OPS = 40;
/** A lot, in base steps (grams): 100 kg. */
const LOT_STEPS = 100_000;
const WASTAGE = 10;
const RESULTS_DIR = join(resolve(__dirname, '..'), 'bench', 'results');

/** The five components; `steps` is what one run takes, in grams, wastage included (checked against the first run). */
const COMPONENTS = [
  { tag: 'FLOUR', method: 'fifo', quantity: 200, unit: 'g', steps: 220 },
  { tag: 'SUGAR', method: 'lifo', quantity: 0.15, unit: 'kg', steps: 165 },
  { tag: 'BUTTER', method: 'average', quantity: 120, unit: 'g', steps: 132 },
  { tag: 'COCOA', method: 'last_purchase', quantity: 0.05, unit: 'kg', steps: 55 },
  { tag: 'SALT', method: 'fifo', quantity: 80, unit: 'g', steps: 88 },
] as const;

type Shape = 'hot' | 'spread';

interface Product {
  sku: string;
  materials: string[];
}

const materialBody = (sku: string, method: string) => ({
  sku,
  title: `Bench ${sku}`,
  baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
  alternativeUnits: [{ code: 'g', conversionFactor: 0.001 }],
  costingMethod: method,
  initialCost: 2,
  currency: 'USD',
  tags: [],
  status: 'active',
  suppliers: [],
  lotTrackingEnabled: true,
});

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
  ours: number;
  baseline: [number, number];
}

const zero = () => ({ n: 0, ms: 0 });

/** Database commands seen by a monitored client, by name and by collection, with their time; and writes that matched nothing. */
class CommandLog {
  private started = new Map<number, { name: string; collection: string }>();
  byName = new Map<string, { n: number; ms: number }>();
  byCollection = new Map<string, { n: number; ms: number }>();
  missedUpdates = 0;
  failed = 0;

  constructor(client: MongoClient) {
    client.on('commandStarted', (e: CommandStartedEvent) => {
      const target = e.command[e.commandName];
      this.started.set(e.requestId, {
        name: e.commandName,
        collection: typeof target === 'string' ? target : '',
      });
    });
    client.on('commandSucceeded', (e: CommandSucceededEvent) => {
      const { name, collection } = this.started.get(e.requestId) ?? { name: e.commandName, collection: '' };
      this.started.delete(e.requestId);
      this.add(this.byName, name, e.duration);
      this.add(this.byCollection, `${collection}\t${name}`, e.duration);
      const reply = e.reply as { n?: number; value?: unknown };
      if (name === 'update' && reply.n === 0) this.missedUpdates++;
      if (name === 'findAndModify' && reply.value === null) this.missedUpdates++;
    });
    client.on('commandFailed', (e: CommandFailedEvent) => {
      this.started.delete(e.requestId);
      this.failed++;
    });
  }

  private add(map: Map<string, { n: number; ms: number }>, key: string, ms: number): void {
    const c = map.get(key) ?? zero();
    c.n++;
    c.ms += ms;
    map.set(key, c);
  }

  reset(): void {
    this.byName.clear();
    this.byCollection.clear();
    this.missedUpdates = 0;
    this.failed = 0;
  }

  summary(ops: number, seconds: number): string {
    const all = [...this.byName.values()].reduce((s, c) => ({ n: s.n + c.n, ms: s.ms + c.ms }), zero());
    const per = (name: string) => {
      const c = this.byName.get(name) ?? zero();
      return c.n ? `${(c.n / ops).toFixed(2)} (${(c.ms / c.n).toFixed(1)} ms)` : '0';
    };
    return `| ${per('find')} | ${per('update')} | ${per('insert')} | ${per('findAndModify')} | ${(this.missedUpdates / ops).toFixed(2)} | ${(all.n / ops).toFixed(2)} | ${(all.ms / ops).toFixed(1)} | ${((seconds * 1000) / ops).toFixed(1)} |`;
  }

  /** Per collection and command: commands per run and the mean time of one. */
  collections(ops: number): Map<string, { perRun: number; ms: number }> {
    return new Map([...this.byCollection].map(([key, c]) => [key, { perRun: c.n / ops, ms: c.ms / c.n }]));
  }
}

/** CPU ticks (user + system, 10 ms each) a process has used so far; null when /proc is not there. */
function cpuTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/** The FerretDB process serving `uri`: the stack's own, or the one listening on its port (read from /proc); null if none is found. */
function ferretdbPid(stack: Stack, uri: string): number | null {
  const own = stack.procs.find((p) => p.name === 'ferretdb')?.child.pid;
  if (own) return own;
  const port = new URL(uri).port;
  try {
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      const args = (() => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        } catch {
          return [];
        }
      })();
      if (/ferretdb$/.test(args[0] ?? '') && args.some((a) => a.startsWith('--listen-addr=') && a.endsWith(`:${port}`)))
        return Number(pid);
    }
  } catch {
    // no /proc
  }
  return null;
}

async function main(): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-consumption-'));
  const loadBefore = loadavg();
  const database = `bench_consumption_${Date.now().toString(36)}`;
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
    const store = new StockStore(tenantDb, 'material');
    const catalog = new Catalog(tenantDb);
    const service = new ConsumptionService(tenantDb, 'bench');
    const locationId = await new Locations(tenantDb).defaultId();

    // the products, each with five materials of its own
    const hot: Product = { sku: 'HOT', materials: COMPONENTS.map((c) => `HOT-${c.tag}`) };
    const spread: Product[] = Array.from({ length: PRODUCTS }, (_, p) => {
      const sku = `SP${String(p).padStart(2, '0')}`;
      return { sku, materials: COMPONENTS.map((c) => `${sku}-${c.tag}`) };
    });
    const all = [hot, ...spread];
    // the most runs a material sees (the hot ones), with room to spare: enough lots that none runs short
    const hotRuns = WARMUP + IN_FLIGHT.length * OPS + 2 * PROFILE_OPS;
    const lots = Math.max(8, Math.ceil((2 * hotRuns * COMPONENTS[0].steps) / LOT_STEPS));
    const opening = lots * LOT_STEPS;
    const t = Date.now();
    await mapLimit(
      all.flatMap((p) => p.materials.map((sku, c) => ({ sku, method: COMPONENTS[c].method }))),
      4,
      async ({ sku, method }) => {
        await store.records.create(materialBody(sku, method));
        for (let k = 0; k < lots; k++)
          await store.receive(sku, {
            locationId,
            quantity: LOT_STEPS / 1000,
            lot: { lotNumber: `L${k}`, costPerUnit: 1 + 0.25 * (k % 8) },
            actor: 'bench',
          });
      },
    );
    for (const p of all)
      await catalog.insert(
        await catalog.prepare({
          sku: p.sku,
          title: { value: `Bench ${p.sku}` },
          price: 10,
          billOfMaterials: {
            consumptionMode: 'manual',
            yield: { quantity: 1, unit: 'pza' },
            wastagePercent: WASTAGE,
            components: COMPONENTS.map((c, i) => ({ materialSku: p.materials[i], quantity: c.quantity, unit: c.unit })),
          },
        }),
        new ObjectId(),
      );
    const seedSeconds = (Date.now() - t) / 1000;
    console.log(
      `seeded ${all.length} products, ${all.length * 5} materials of ${lots} lots in ${seedSeconds.toFixed(1)} s`,
    );

    // runs of ours, counted per product
    const runs = new Map<string, number>(all.map((p) => [p.sku, 0]));
    let refs = 0;
    let shapeChecked = false;
    const run = (svc: ConsumptionService, p: Product) => async () => {
      const res = await svc.runBom(p.sku, { quantity: 1, referenceId: `run-${++refs}` }, undefined);
      if (res.replayed || res.componentsConsumed.length !== 5)
        throw new Error(`unexpected run: ${JSON.stringify(res)}`);
      if (!shapeChecked) {
        const got = res.componentsConsumed.map((c) => Math.round(c.quantity * 1000));
        if (got.join() !== COMPONENTS.map((c) => c.steps).join())
          throw new Error(`a run took ${got.join(', ')} g, expected ${COMPONENTS.map((c) => c.steps).join(', ')}`);
        shapeChecked = true;
      }
      runs.set(p.sku, runs.get(p.sku)! + 1);
    };
    await mapLimit(all, 4, async (p) => {
      for (let i = 0; i < WARMUP; i++) await run(service, p)();
    });

    // the baseline's documents: one balance per material
    const raw = mongo.db.collection<{ _id: string; qty: number }>('bench_raw_balances');
    await raw.insertMany(all.flatMap((p) => p.materials.map((sku) => ({ _id: sku, qty: opening }))));
    const rawRuns = new Map<string, number>(all.map((p) => [p.sku, 0]));
    const baselineOn = (col: typeof raw, p: Product) => async () => {
      for (const [c, sku] of p.materials.entries()) {
        const q = COMPONENTS[c].steps;
        const res = await col.updateOne({ _id: sku, qty: { $gte: q } }, { $inc: { qty: -q } });
        if (res.modifiedCount !== 1) throw new Error('baseline deduction refused');
      }
      rawRuns.set(p.sku, rawRuns.get(p.sku)! + 1);
    };

    const rows: Row[] = [];
    for (const shape of ['hot', 'spread'] as const) {
      const productOf = (i: number) => (shape === 'hot' ? hot : spread[i % PRODUCTS]);
      for (const inFlight of IN_FLIGHT) {
        const rate = (seconds: number) => OPS / seconds;
        const base1 = rate(await timed(OPS, inFlight, (i) => baselineOn(raw, productOf(i))()));
        const ours = rate(await timed(OPS, inFlight, (i) => run(service, productOf(i))()));
        const base2 = rate(await timed(OPS, inFlight, (i) => baselineOn(raw, productOf(i))()));
        rows.push({ shape, inFlight, ours, baseline: [base1, base2] });
        console.log(
          `${shape} × ${inFlight} in flight: ours ${ours.toFixed(1)}/s (${(ours / ((base1 + base2) / 2)).toFixed(2)}), baseline ${base1.toFixed(1)} / ${base2.toFixed(1)}/s`,
        );
      }
    }

    // the profile: commands per run on a monitored client, hot product, sequential and the most in flight
    monitored = new MongoClient(stack.env.MONGODB_URI, { monitorCommands: true });
    await monitored.connect();
    const log = new CommandLog(monitored);
    const ptenant = new TenantDb(monitored.db(database), tenantDb.tenantId);
    const pservice = new ConsumptionService(ptenant, 'bench');
    const praw = monitored.db(database).collection<{ _id: string; qty: number }>('bench_raw_balances');
    const profile: string[] = [];
    const ferretdb = ferretdbPid(stack, stack.env.MONGODB_URI);
    const byCollection = new Map<number, Map<string, { perRun: number; ms: number }>>();
    for (const inFlight of [1, Math.max(...IN_FLIGHT)]) {
      for (const what of ['consumption', 'baseline'] as const) {
        log.reset();
        const [cpu0, ticks0] = [process.cpuUsage(), ferretdb === null ? null : cpuTicks(ferretdb)];
        const seconds = await timed(PROFILE_OPS, inFlight, () =>
          what === 'baseline' ? baselineOn(praw, hot)() : run(pservice, hot)(),
        );
        const cpu = process.cpuUsage(cpu0);
        const ticks1 = ferretdb === null ? null : cpuTicks(ferretdb);
        const ours = (cpu.user + cpu.system) / 1000 / PROFILE_OPS;
        const server = ticks0 === null || ticks1 === null ? '—' : (((ticks1 - ticks0) * 10) / PROFILE_OPS).toFixed(1);
        profile.push(`| ${what} | ${inFlight} ${log.summary(PROFILE_OPS, seconds)} ${ours.toFixed(1)} | ${server} |`);
        if (what === 'consumption') byCollection.set(inFlight, log.collections(PROFILE_OPS));
        if (log.failed) console.log(`${log.failed} commands failed in the profile of ${what} × ${inFlight}`);
      }
    }

    // balances: each material its opening stock less what the runs of its product took, to the gram
    const problems: string[] = [];
    const ids = all.flatMap((p) => p.materials.map((sku) => recordId(tenantDb.tenantId, sku)));
    const stored = (await tenantDb
      .collection(materialStock)
      .find({ _id: { $in: ids } })
      .toArray()) as StockDoc[];
    const storedOf = new Map(stored.map((d) => [d.sku, d]));
    const docOf = new Map(stored.map((d) => [d.sku, decodeStock(d)]));
    const movements = await tenantDb
      .collection(materialMovements)
      .find({ type: 'consumption' }, { projection: { movementId: 1, sku: 1 } })
      .toArray();
    const totalRuns = [...runs.values()].reduce((s, n) => s + n, 0);
    for (const p of all)
      for (const [c, sku] of p.materials.entries()) {
        const doc = docOf.get(sku);
        const want = opening - runs.get(p.sku)! * COMPONENTS[c].steps;
        const loc = doc?.locations.find((l) => l.locationId === locationId);
        if (!doc || !loc) {
          problems.push(`${sku}: no stock at ${locationId}`);
          continue;
        }
        const lotSum = loc.lots.reduce((s, l) => s + l.quantity, 0);
        if (loc.quantity !== want || lotSum !== want)
          problems.push(`${sku}: ${loc.quantity} g (lots ${lotSum}), expected ${want}`);
        const ids = new Set([
          ...movements.filter((m) => m.sku === sku).map((m) => m.movementId),
          ...doc.journal.filter((m) => m.type === 'consumption').map((m) => m.movementId),
        ]);
        if (ids.size !== runs.get(p.sku))
          problems.push(`${sku}: ${ids.size} consumption movements, ${runs.get(p.sku)} runs`);
      }
    const consumptions = tenantDb.collection(materialConsumptions);
    const [docsAll, docsApplied] = await Promise.all([
      consumptions.countDocuments({}),
      consumptions.countDocuments({ status: 'applied' }),
    ]);
    if (docsAll !== totalRuns || docsApplied !== totalRuns)
      problems.push(`${docsAll} consumption documents (${docsApplied} applied) for ${totalRuns} runs`);
    const rawDocs = new Map((await raw.find().toArray()).map((d) => [d._id, d.qty]));
    for (const p of all)
      for (const [c, sku] of p.materials.entries()) {
        const want = opening - rawRuns.get(p.sku)! * COMPONENTS[c].steps;
        if (rawDocs.get(sku) !== want) problems.push(`baseline ${sku}: ${rawDocs.get(sku)}, expected ${want}`);
      }
    const right = problems.length === 0;
    console.log(right ? 'balances right' : `WRONG:\n  ${problems.join('\n  ')}`);

    const hotDoc = docOf.get(hot.materials[0])!;
    const oneConsumption = await consumptions.findOne({});
    const sizes = {
      stock: hot.materials.map((sku) => BSON.calculateObjectSize(storedOf.get(sku)!)),
      journal: BSON.calculateObjectSize({ j: storedOf.get(hotDoc.sku)!.journal }),
      consumption: oneConsumption ? BSON.calculateObjectSize(oneConsumption) : 0,
      product: BSON.calculateObjectSize((await catalog.get((await catalog.skuOwner(hot.sku))!.productId))!),
      raw: BSON.calculateObjectSize({ _id: hot.materials[0], qty: opening }),
    };

    const most = Math.max(...IN_FLIGHT);
    const [one, many] = [byCollection.get(1)!, byCollection.get(most)!];
    const collectionRows = [...new Set([...one.keys(), ...many.keys()])]
      .sort((a, b) => (one.get(b)?.perRun ?? 0) - (one.get(a)?.perRun ?? 0) || a.localeCompare(b))
      .map((key) => {
        const [collection, name] = key.split('\t');
        const cell = (c?: { perRun: number; ms: number }) =>
          c ? `${c.perRun.toFixed(2)} | ${c.ms.toFixed(1)}` : '0 | ';
        return `| ${collection} | ${name} | ${cell(one.get(key))} | ${cell(many.get(key))} |`;
      });
    const date = new Date().toISOString().slice(0, 10);
    const fmt = (n: number) => n.toFixed(1);
    const mean = (r: Row) => (r.baseline[0] + r.baseline[1]) / 2;
    const ratio = (r: Row) => (r.ours / mean(r)).toFixed(2);
    const goal = (r: Row) => (Number(ratio(r)) >= 0.4 ? '' : ' (below 0.4)');
    const report =
      [
        `# Consumption: BOM runs (5 components) vs raw guarded $inc (${date})`,
        '',
        '```sh',
        `BENCH_OPS=${OPS} BENCH_IN_FLIGHT=${IN_FLIGHT.join(',')} BENCH_PRODUCTS=${PRODUCTS} npx tsx bench/consumption.ts`,
        '```',
        '',
        `- code: ${codeVersion()}`,
        `- ${OPS} runs per row, ${IN_FLIGHT.join(', ')} in flight, in the benchmark's process through \`ConsumptionService.runBom(sku, {quantity: 1, referenceId}, undefined)\` (shared/consumption/service.ts), each with its own referenceId; ${where}; machine ${cpus().length} cores, load before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')} (shared with other work)`,
        `- each bill of materials: 5 components, each a material of its own (costing ${COMPONENTS.map((c) => c.method).join(', ')}), ${COMPONENTS.map((c) => `${c.quantity} ${c.unit}`).join(', ')} per unit with ${WASTAGE}% wastage (${COMPONENTS.map((c) => c.steps).join(', ')} g taken per run), from ${lots} lots of ${LOT_STEPS / 1000} kg at the default location; seeding ${all.length} products and ${all.length * 5} materials took ${seedSeconds.toFixed(1)} s, then ${WARMUP} untimed runs of each product`,
        `- hot: one product (the same 5 materials every run); spread: ${PRODUCTS} products over ${PRODUCTS * 5} materials, run i of product i mod ${PRODUCTS}`,
        '- baseline: the same 5 deductions, one after the other, as `updateOne({_id, qty: {$gte: q}}, {$inc: {qty: -q}})` on one small document per material, as many runs in flight as ours; run before and after ours (both shown); ratios against their mean',
        `- checks: ${right ? `ok (every material its opening stock less ${COMPONENTS.map((c) => c.steps).join(' / ')} g per run of its product, to the gram, its lots summing to it; ${totalRuns} applied consumption documents for ${totalRuns} runs and no other; one consumption movement per run and material; the baseline's balances)` : `WRONG: ${problems.join('; ')}`}`,
        '',
        '| load | in flight | consumptions/s | deductions/s | baseline consumptions/s (before / after) | ours / baseline |',
        '|---|---:|---:|---:|---:|---:|',
        ...rows.map(
          (r) =>
            `| ${r.shape === 'hot' ? 'hot (1 product, 5 materials)' : `spread (${PRODUCTS} products, ${PRODUCTS * 5} materials)`} | ${r.inFlight} | ${fmt(r.ours)} | ${fmt(5 * r.ours)} | ${fmt(r.baseline[0])} / ${fmt(r.baseline[1])} | ${ratio(r)}${goal(r)} |`,
        ),
        '',
        `## Where the time goes (hot product, ${PROFILE_OPS} runs each, command monitoring on)`,
        '',
        `Commands per run (mean duration of one, as the driver saw it), writes that matched nothing (a lost race), all commands per run, the time they took per run summed, the wall time per run, the CPU time of the benchmark's process per run (the service's JavaScript and the driver, monitoring on) and FerretDB's per run (${where === 'embedded FerretDB' ? 'its own process' : "the shared server: other clients' work included"}). A baseline run is its 5 updates.`,
        '',
        '| run | in flight | find | update | insert | findAndModify | lost races | commands | command ms / run | wall ms / run | bench CPU ms / run | FerretDB CPU ms / run |',
        '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
        ...profile,
        '',
        `The commands of a consumption by collection: per run, and the mean time of one, one at a time and ${most} in flight.`,
        '',
        `| collection | command | per run (1) | ms each (1) | per run (${most}) | ms each (${most}) |`,
        '|---|---|---:|---:|---:|---:|',
        ...collectionRows,
        '',
        `Stock documents of the hot materials: ${sizes.stock.map((s) => s.toLocaleString('en')).join(', ')} bytes (journal of the first ${sizes.journal.toLocaleString('en')}); a consumption document ${sizes.consumption.toLocaleString('en')} bytes; the product ${sizes.product.toLocaleString('en')} bytes; a baseline document ${sizes.raw} bytes.`,
      ].join('\n') + '\n';
    console.log('\n' + report);
    mkdirSync(RESULTS_DIR, { recursive: true });
    writeFileSync(join(RESULTS_DIR, 'consumption.md'), report);
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

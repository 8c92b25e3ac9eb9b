/**
 * Stock movements: our ledger next to a raw guarded `$inc`, in the same run, on the same database.
 *
 * Starts the servers (FerretDB; no API or worker needed) on free ports in a temporary directory,
 * then for two shapes of load — HOT: every movement on one SKU; SPREAD: movements over 1,000
 * SKUs — runs BENCH_MOVEMENTS movements (2,000 by default) with BENCH_CONCURRENCY (32) in flight:
 *
 * - ours: `Ledger.apply` (shared/inventory/ledger.ts): the movement recorded (pending), one
 *   atomic guarded update of the balance (never below zero, never the same movement twice),
 *   the movement marked applied with the balance it left;
 * - baseline: the driver's `updateOne({_id, onHand: {$gte: 1}}, {$inc: {onHand: -1}})` alone.
 *
 * Both decrement by 1 from a stock large enough for every movement to succeed, and the run checks
 * that the balances end exactly where they must. Writes bench/results/stock.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startStack, type Stack } from '../scripts/stack/stack';
import { connectMongo, ensureIndexes, type Mongo } from '../shared/db/mongo';
import { allCollections } from '../shared/collections';
import { TenantDb } from '../shared/db/tenant-db';
import { levelId } from '../shared/inventory/collections';
import { Ledger } from '../shared/inventory/ledger';
import { mapLimit } from '../shared/concurrency';

const MOVEMENTS = Number(process.env.BENCH_MOVEMENTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const SPREAD_SKUS = 1000;
const RESULTS_DIR = join(resolve(__dirname, '..'), 'bench', 'results');

async function main(): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-stock-'));
  const loadBefore = loadavg();
  let stack: Stack | null = null;
  let mongo: Mongo | null = null;
  try {
    stack = await startStack({
      dataDir,
      ports: 'free',
      withApp: false,
      env: { ...process.env, LOG_LEVEL: 'warn', MONGODB_DB: 'bench_stock' },
      log: (l) => console.log(`  ${l}`),
    });
    mongo = await connectMongo(stack.env.MONGODB_URI, stack.env.MONGODB_DB);
    await ensureIndexes(mongo.db, allCollections);
    const rows: string[] = [];
    let ok = true;
    for (const shape of ['hot', 'spread'] as const) {
      const skuOf = (i: number) => (shape === 'hot' ? 'HOT-1' : `SPREAD-${i % SPREAD_SKUS}`);
      const skus = shape === 'hot' ? ['HOT-1'] : Array.from({ length: SPREAD_SKUS }, (_, i) => `SPREAD-${i}`);
      const start = () => (shape === 'hot' ? MOVEMENTS : Math.ceil(MOVEMENTS / SPREAD_SKUS)) + 10;

      // ours: the ledger, in its own tenant
      const tenantId = `ten_bench_${shape}`;
      const ledger = new Ledger(new TenantDb(mongo.db, tenantId));
      await mapLimit(skus, CONCURRENCY, (sku) =>
        ledger.apply({ sku, locationId: 'loc_1', delta: start(), reason: 'restock', actor: 'bench' }),
      );
      let t = Date.now();
      await mapLimit(
        Array.from({ length: MOVEMENTS }, (_, i) => i),
        CONCURRENCY,
        (i) => ledger.apply({ sku: skuOf(i), locationId: 'loc_1', delta: -1, reason: 'sale', actor: 'bench' }),
      );
      const oursSeconds = (Date.now() - t) / 1000;
      const oursLeft = await mongo.db
        .collection('stock_levels')
        .aggregate([{ $match: { tenantId } }, { $group: { _id: null, n: { $sum: '$onHand' } } }])
        .toArray();

      // baseline: a raw guarded $inc on a plain balances collection
      const raw = mongo.db.collection<{ _id: string; onHand: number }>(`bench_raw_${shape}`);
      await raw.insertMany(skus.map((sku) => ({ _id: levelId('raw', 'loc_1', sku), onHand: start() })));
      t = Date.now();
      await mapLimit(
        Array.from({ length: MOVEMENTS }, (_, i) => i),
        CONCURRENCY,
        async (i) => {
          const res = await raw.updateOne(
            { _id: levelId('raw', 'loc_1', skuOf(i)), onHand: { $gte: 1 } },
            { $inc: { onHand: -1 } },
          );
          if (res.modifiedCount !== 1) throw new Error('baseline decrement refused');
        },
      );
      const baseSeconds = (Date.now() - t) / 1000;
      const rawLeft = await raw.aggregate([{ $group: { _id: null, n: { $sum: '$onHand' } } }]).toArray();

      const expected = skus.reduce((n) => n + start(), 0) - MOVEMENTS;
      const right = oursLeft[0]?.n === expected && rawLeft[0]?.n === expected;
      ok &&= right;
      const ours = MOVEMENTS / oursSeconds;
      const base = MOVEMENTS / baseSeconds;
      console.log(
        `${shape}: ours ${ours.toFixed(0)} movements/s (${oursSeconds.toFixed(1)} s), baseline ${base.toFixed(0)}/s (${baseSeconds.toFixed(1)} s), balances ${right ? 'right' : 'WRONG'}`,
      );
      rows.push(
        `| ${shape === 'hot' ? 'hot (1 SKU)' : `spread (${SPREAD_SKUS} SKUs)`} | ${ours.toFixed(0)} | ${base.toFixed(0)} | ${(ours / base).toFixed(2)} | ${right ? 'ok' : 'WRONG'} |`,
      );
    }
    const date = new Date().toISOString().slice(0, 10);
    const report =
      [
        `# Stock movements: ledger vs raw guarded $inc (${date})`,
        '',
        `- ${MOVEMENTS} decrements of 1 per shape, ${CONCURRENCY} in flight; embedded FerretDB; machine ${cpus().length} cores, load before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
        '- ours: Ledger.apply (movement recorded, guarded atomic balance update, movement marked applied); baseline: updateOne({_id, onHand: {$gte: 1}}, {$inc: {onHand: -1}})',
        '',
        '| load | ours movements/s | baseline movements/s | ours / baseline | final balances |',
        '|---|---:|---:|---:|---|',
        ...rows,
      ].join('\n') + '\n';
    console.log('\n' + report);
    mkdirSync(RESULTS_DIR, { recursive: true });
    // one file per benchmark, the newest run (git keeps the earlier ones)
    const file = join(RESULTS_DIR, 'stock.md');
    writeFileSync(file, report);
    return ok ? 0 : 1;
  } finally {
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

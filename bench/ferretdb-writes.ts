/**
 * What one write costs on the embedded FerretDB, one command at a time and batched: the figures
 * behind the stock ledger's shared writes (bench/README.md, "`stock.ts`"). Starts the servers on
 * free ports in a temporary directory; prints ms per document for 1,600 documents of each kind,
 * twice (the second round warm).
 *
 *   npx tsx bench/ferretdb-writes.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { startStack } from '../scripts/stack/stack';

const N = 1600;
const TENANT = 'ten_abcdefghijklmnopqrstu';

/** A stock movement as the ledger records it (the same fields and sizes). */
const movement = (i: number, tag: string) => ({
  _id: `${TENANT}:mov_${tag}${i}ABCDEFGHJKMNPQRSTV`,
  tenantId: TENANT,
  idempotencyKey: `mov_${tag}${i}`,
  sku: `SPREAD-${i % 1000}`,
  locationId: 'loc_1',
  delta: -1,
  reason: 'sale',
  reference: null,
  actor: 'bench',
  status: 'pending',
  balanceAfter: null,
  createdAt: new Date(),
});

async function time(label: string, fn: () => Promise<void>): Promise<void> {
  const t = performance.now();
  await fn();
  const ms = performance.now() - t;
  console.log(`${label.padEnd(40)} ${(ms / N).toFixed(3)} ms/doc  ${((N * 1000) / ms).toFixed(0)}/s`);
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-writes-'));
  const stack = await startStack({
    dataDir,
    ports: 'free',
    withApp: false,
    env: { ...process.env, LOG_LEVEL: 'warn' },
    log: () => undefined,
  });
  const client = await MongoClient.connect(stack.env.MONGODB_URI);
  try {
    const db = client.db(`bench_writes_${Date.now()}`);
    for (let round = 0; round < 2; round++) {
      console.log(`round ${round + 1}`);
      const col = db.collection<{ _id: string }>(`movements${round}`);
      await col.createIndex({ tenantId: 1, sku: 1, createdAt: -1 });
      await time('insertOne, one at a time', async () => {
        for (let i = 0; i < N; i++) await col.insertOne(movement(i, 'a'));
      });
      for (const k of [8, 32])
        await time(`insertMany of ${k}`, async () => {
          for (let i = 0; i < N; i += k)
            await col.insertMany(Array.from({ length: k }, (_, j) => movement(i + j, `b${k}`)));
        });
      const mark = (i: number, tag: string) => ({
        filter: { _id: movement(i, tag)._id, tenantId: TENANT },
        update: { $set: { status: 'applied', balanceAfter: i } },
      });
      await time('updateOne (mark applied), one at a time', async () => {
        for (let i = 0; i < N; i++) {
          const m = mark(i, 'a');
          await col.updateOne(m.filter, m.update);
        }
      });
      for (const k of [8, 32])
        await time(`bulkWrite of ${k} marks`, async () => {
          for (let i = 0; i < N; i += k)
            await col.bulkWrite(
              Array.from({ length: k }, (_, j) => ({ updateOne: mark(i + j, `b${k}`) })),
              { ordered: false },
            );
        });
      const levels = db.collection<{ _id: string; onHand: number; recent: string[] }>(`levels${round}`);
      const entries = (n: number, len: number) =>
        Array.from({ length: n }, (_, i) => `${'x'.repeat(len - 6)}${String(i).padStart(6, '0')}`);
      for (const [n, len] of [
        [2, 60],
        [120, 60],
        [120, 31],
        [75, 31],
      ] as const) {
        await levels.deleteMany({});
        await levels.insertOne({ _id: 'L', onHand: 1e9, recent: entries(n, len) });
        await time(`balance update, recent ${n} × ${len} chars`, async () => {
          for (let i = 0; i < N; i++) {
            await levels.findOneAndUpdate(
              { _id: 'L', recent: { $ne: `q${i}` }, onHand: { $gte: 1 } },
              { $inc: { onHand: -1 }, $push: { recent: `q${i}` }, $set: { updatedAt: new Date() } },
              { returnDocument: 'after' },
            );
            if (i % 50 === 49) await levels.updateOne({ _id: 'L' }, { $set: { recent: entries(n, len) } });
          }
        });
      }
      const raw = db.collection<{ _id: string; onHand: number }>(`raw${round}`);
      await raw.insertOne({ _id: 'R', onHand: 1e9 });
      await time('raw guarded $inc (the baseline)', async () => {
        for (let i = 0; i < N; i++) await raw.updateOne({ _id: 'R', onHand: { $gte: 1 } }, { $inc: { onHand: -1 } });
      });
    }
    await db.dropDatabase();
  } finally {
    await client.close();
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

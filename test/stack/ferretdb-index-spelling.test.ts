import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient, type Document } from 'mongodb';
import { freePort, startProcess, waitFor, type Proc } from '../../scripts/stack/process';
import { ensureServerBuilt, SERVERS } from '../../scripts/stack/servers';

/**
 * Our FerretDB build spells index columns `(_ferretdb_sjson->"f" || '')`, which SQLite 3.46 reads
 * from the index, where upstream's `_ferretdb_sjson->"f"` is always read from the row
 * (scripts/servers/ferretdb/_overlay/internal/backends/sqlite/metadata/index_column.go). A data
 * directory made by an earlier build has upstream's spelling: FerretDB makes those indexes again
 * at start, and they keep their meaning (same answers, same uniqueness). The SQLite file is edited
 * and read with the sqlite3 command-line tool (scripts/install-test-tools.sh installs it).
 */
const dir = mkdtempSync(join(tmpdir(), 'ferretdb-spelling-'));
mkdirSync(join(dir, 'data'));
let proc: Proc | null = null;
let client: MongoClient | null = null;

async function startFerretDb(): Promise<MongoClient> {
  const port = await freePort();
  proc = startProcess(
    'ferretdb',
    ensureServerBuilt(SERVERS.ferretdb, () => {}),
    [`--listen-addr=127.0.0.1:${port}`, `--sqlite-url=file:${dir}/data/`, '--log-level=info'],
    { logDir: join(dir, 'logs') },
  );
  const uri = `mongodb://127.0.0.1:${port}/`;
  await waitFor(
    'FerretDB',
    async () => {
      const c = new MongoClient(uri, { serverSelectionTimeoutMS: 500 });
      try {
        await c.db('admin').command({ ping: 1 });
        return true;
      } finally {
        await c.close();
      }
    },
    { proc },
  );
  client = await MongoClient.connect(uri);
  return client;
}

async function stopFerretDb(): Promise<void> {
  await client?.close();
  client = null;
  await proc?.stop();
  proc = null;
}

afterAll(async () => {
  await stopFerretDb();
  rmSync(dir, { recursive: true, force: true });
});

const dbFile = () =>
  join(
    dir,
    'data',
    readdirSync(join(dir, 'data')).find((f) => f.startsWith('spelling'))!,
  );
const sqlite = (sql: string) => execFileSync('sqlite3', [dbFile(), sql], { encoding: 'utf8' });
const indexStatements = () =>
  sqlite(`SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name`).trim().split('\n');

test('indexes of an older data directory are made again in the spelling SQLite reads, and keep their meaning', async () => {
  let db = (await startFerretDb()).db('spelling');
  const items = () => db.collection<Document>('items');
  await items().createIndex({ tenantId: 1, search: 1 });
  await items().createIndex({ sku: 1 }, { unique: true });
  await items().insertMany(
    Array.from({ length: 40 }, (_, i) => ({
      _id: `p${i}` as never,
      tenantId: i % 2 ? 't1' : 't2',
      sku: `SKU-${i}`,
      search: i % 4 === 1 ? `linen shirt ${i}` : `cotton ${i}`,
    })),
  );
  const made = indexStatements();
  expect(made.join('\n')).toContain(`(_ferretdb_sjson->"search" || '')`);
  await stopFerretDb();

  // what a data directory of an earlier build holds: upstream's spelling
  for (const statement of made) {
    const name = /INDEX "([^"]+)"/.exec(statement)![1];
    const old = statement.replace(/\((_ferretdb_sjson->"[^"]+") \|\| ''\)/g, '$1');
    sqlite(`DROP INDEX "${name}"; ${old};`);
  }
  expect(indexStatements().join('\n')).not.toContain(`|| ''`);

  db = (await startFerretDb()).db('spelling');
  expect(indexStatements()).toEqual(made);
  const search = { tenantId: 't1', search: /linen/ };
  expect(await items().countDocuments(search)).toBe(10);
  expect((await items().find(search).toArray()).map((d) => d._id).sort()).toEqual(
    ['p1', 'p13', 'p17', 'p21', 'p25', 'p29', 'p33', 'p37', 'p5', 'p9'].sort(),
  );
  const plan = JSON.stringify((await items().find(search).explain()).queryPlanner);
  expect(plan).toMatch(/USING INDEX \w+_tenantId_1_search_1/);
  expect(await items().findOne({ _id: 'p7' as never })).toMatchObject({ sku: 'SKU-7' });
  await expect(items().insertOne({ _id: 'dup' as never, tenantId: 't1', sku: 'SKU-3' })).rejects.toThrow(/duplicate/i);

  // a second start finds nothing to make again
  await stopFerretDb();
  db = (await startFerretDb()).db('spelling');
  expect(indexStatements()).toEqual(made);
  expect(await items().countDocuments(search)).toBe(10);
  const log = readFileSync(join(dir, 'logs', 'ferretdb.log'), 'utf8');
  expect(log.match(/Making an index again/g)).toHaveLength(made.length);
});

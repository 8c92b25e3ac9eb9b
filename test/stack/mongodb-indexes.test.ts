import { spawnSync } from 'node:child_process';
import { MongoClient, type Db, type Document } from 'mongodb';
import { ensureIndexes } from '../../shared/db/mongo';
import { allCollections } from '../../shared/collections';
import { buildFilter, buildSort } from '../../shared/products/query';

/**
 * On MongoDB the declared indexes serve the service's queries: each query below is the one the
 * code sends (tenant condition included, as the tenant layer adds it), and its winning plan reads
 * an index, never the whole collection. It needs a real MongoDB: it runs when MONGODB_URI points
 * at one (`MONGODB_URI=mongodb://… npm test -- test/stack/mongodb-indexes`), and is skipped on
 * FerretDB (the embedded database: its plans are SQLite's, see bench/README.md) or without a URI.
 */
const URI = process.env.MONGODB_URI;

/** What the server at URI is, asked synchronously (jest decides to skip when it collects). */
function serverKind(): 'mongodb' | 'ferretdb' | 'none' {
  if (!URI) return 'none';
  const probe = spawnSync(
    process.execPath,
    [
      '-e',
      `const { MongoClient } = require('mongodb');
       MongoClient.connect(process.argv[1], { serverSelectionTimeoutMS: 5000 })
         .then(async (c) => { const b = await c.db().admin().command({ buildInfo: 1 }); console.log('ferretdbVersion' in b || 'ferretdb' in b ? 'ferretdb' : 'mongodb'); await c.close(); })
         .catch(() => console.log('none'));`,
      URI,
    ],
    { encoding: 'utf8', timeout: 15_000 },
  );
  const kind = probe.stdout.trim();
  return kind === 'mongodb' || kind === 'ferretdb' ? kind : 'none';
}

const onMongo = serverKind() === 'mongodb' ? describe : describe.skip;

onMongo('on MongoDB, every listed query is served by a declared index', () => {
  const TENANT = 'ten_explain';
  let client: MongoClient;
  let db: Db;

  beforeAll(async () => {
    client = await MongoClient.connect(URI!);
    db = client.db(`explain_${Date.now()}`);
    await ensureIndexes(db, allCollections);
    // a few documents, so the planner has something to choose between
    await db.collection('products').insertMany(
      Array.from({ length: 50 }, (_, i) => ({
        tenantId: i % 2 ? TENANT : 'ten_other',
        sku: `SKU-${i}`,
        status: i % 3 ? 'active' : 'draft',
        brand: `Brand ${i % 5}`,
        price: i,
        tags: [`t${i % 4}`],
        variants: [{ sku: `SKU-${i}-S` }],
        bindings: [{ channelId: `ch${i % 2}` }],
        category: { id: `cat${i % 3}` },
        createdAt: new Date(Date.now() - i * 1000),
      })),
    );
  });
  afterAll(async () => {
    await db?.dropDatabase();
    await client?.close();
  });

  /** The stages of a winning plan, outermost first. */
  function stages(plan: Document): string[] {
    const out: string[] = [];
    for (let p: Document | undefined = plan; p; p = p.inputStage ?? p.inputStages?.[0]) out.push(p.stage as string);
    return out;
  }

  async function winningStages(collection: string, filter: Document, sort?: Document): Promise<string[]> {
    const cursor = db.collection(collection).find(filter, sort ? { sort, limit: 50 } : {});
    const explained = await cursor.explain('queryPlanner');
    return stages(explained.queryPlanner.winningPlan.queryPlan ?? explained.queryPlanner.winningPlan);
  }

  const scope = (filter: Document) => ({ ...filter, tenantId: TENANT });

  const cases: [string, string, () => Document, Document?][] = [
    ['products by SKU', 'products', () => scope({ sku: 'SKU-1' })],
    ['products by variant SKU', 'products', () => scope({ 'variants.sku': 'SKU-1-S' })],
    [
      'a filtered page: status and brands, newest first',
      'products',
      () => scope(buildFilter({ status: ['active'], brands: ['Brand 1'] }).filter),
      buildSort('-createdAt') as Document,
    ],
    [
      'a page of one status',
      'products',
      () => scope(buildFilter({ status: ['draft'] }).filter),
      buildSort('-createdAt') as Document,
    ],
    ['by tags', 'products', () => scope(buildFilter({ tags: ['t1'] }).filter)],
    ['a search of two words', 'products', () => scope(buildFilter({ q: 'linen shirt' }).filter)],
    ['by price range', 'products', () => scope(buildFilter({ minPrice: 5, maxPrice: 20 }).filter)],
    ['by channel', 'products', () => scope(buildFilter({ channelId: 'ch1' }).filter)],
    ['the newest page', 'products', () => scope({}), buildSort('-createdAt') as Document],
    ['orders of a status, newest first', 'orders', () => scope({ orderStatus: 'pending' }), { createdAt: -1, _id: -1 }],
    ['orders of a customer', 'orders', () => scope({ customerId: 'c1' }), { createdAt: -1, _id: -1 }],
    ['customers, newest first', 'customers', () => scope({}), { createdAt: -1, _id: -1 }],
    ['jobs of a type, newest first', 'jobs', () => scope({ type: 'csv-import' }), { createdAt: -1 }],
    [
      "an endpoint's deliveries, newest first",
      'webhook_deliveries',
      () => scope({ endpointId: 'we_1' }),
      { createdAt: -1, _id: -1 },
    ],
  ];

  test.each(cases)('%s (%s)', async (_name, collection, filter, sort) => {
    const plan = await winningStages(collection, filter(), sort);
    expect(plan).toContain('IXSCAN');
    expect(plan).not.toContain('COLLSCAN');
  });
});

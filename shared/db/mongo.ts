import { Db, MongoClient } from 'mongodb';
import type { CollectionDef } from './collection';

export interface Mongo {
  client: MongoClient;
  db: Db;
}

export async function connectMongo(uri: string, dbName: string): Promise<Mongo> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 10_000, appName: 'backoffice' });
  await client.connect();
  return { client, db: client.db(dbName) };
}

/**
 * Creates the indexes of the given collections and drops their retired ones; safe to run at each
 * start (createIndex is a no-op when the index exists, and a retired index is dropped only when
 * it is there). New indexes first: a query that used a retired one has its successor by then.
 */
export async function ensureIndexes(db: Db, defs: readonly CollectionDef<unknown>[]): Promise<void> {
  for (const def of defs) {
    const col = db.collection(def.name);
    for (const index of def.indexes) await col.createIndex(index.key, index.options ?? {});
    if (!def.retiredIndexes?.length) continue;
    const present = new Set((await col.listIndexes().toArray()).map((i) => i.name as string));
    for (const key of def.retiredIndexes) {
      const name = defaultIndexName(key);
      if (present.has(name)) await col.dropIndex(name);
    }
  }
}

/** The name the database gives an index created without one: `tenantId_1_brand_1`. */
function defaultIndexName(key: Record<string, 1 | -1>): string {
  return Object.entries(key)
    .map(([field, dir]) => `${field}_${dir}`)
    .join('_');
}

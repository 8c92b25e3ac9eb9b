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

/** Creates the indexes of the given collections; safe to run at each start (createIndex is a no-op when it exists). */
export async function ensureIndexes(db: Db, defs: readonly CollectionDef<unknown>[]): Promise<void> {
  for (const def of defs) {
    for (const index of def.indexes) {
      await db.collection(def.name).createIndex(index.key, index.options ?? {});
    }
  }
}

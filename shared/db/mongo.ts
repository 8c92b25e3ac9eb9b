import { Db, MongoClient, MongoServerError } from 'mongodb';
import type { CollectionDef } from './collection';
import { allCollections } from './registry';

export interface Mongo {
  client: MongoClient;
  db: Db;
}

export async function connectMongo(uri: string, dbName: string): Promise<Mongo> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 10_000, appName: 'backoffice' });
  await client.connect();
  return { client, db: client.db(dbName) };
}

/** Creates every declared index; safe to run at each start (createIndex is a no-op when it exists). */
export async function ensureIndexes(db: Db, defs: CollectionDef<unknown>[] = allCollections): Promise<void> {
  for (const def of defs) {
    for (const index of def.indexes) {
      await db.collection(def.name).createIndex(index.key, index.options ?? {});
    }
  }
}

/** E11000, on MongoDB and FerretDB alike: a unique index refused the write. */
/**
 * For an unordered insertMany/bulkWrite that failed only on duplicate keys: the indexes (in the
 * batch sent) of the writes that failed. Null when any write failed for another reason.
 */
export function duplicateKeyIndexes(err: unknown): number[] | null {
  if (err instanceof MongoServerError && err.code === 11000 && !('writeErrors' in err)) return null;
  const raw = (err as { writeErrors?: unknown } | null)?.writeErrors;
  const writeErrors = (Array.isArray(raw) ? raw : raw ? [raw] : []) as Array<{ code?: number; index?: number }>;
  if (!writeErrors.length || writeErrors.some((e) => e.code !== 11000 || typeof e.index !== 'number')) return null;
  return writeErrors.map((e) => e.index as number);
}

export function isDuplicateKeyError(err: unknown): boolean {
  if (err instanceof MongoServerError && err.code === 11000) return true;
  // bulkWrite reports duplicates per write
  const writeErrors = (err as { writeErrors?: Array<{ code?: number }> } | null)?.writeErrors;
  return Array.isArray(writeErrors) && writeErrors.some((e) => e.code === 11000);
}

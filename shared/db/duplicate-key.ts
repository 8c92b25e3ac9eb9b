import { MongoServerError } from 'mongodb';

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

/** A unique index refused the write: E11000 on MongoDB and on FerretDB's inserts. */
export function isDuplicateKeyError(err: unknown): boolean {
  if (err instanceof MongoServerError && err.code === 11000) return true;
  // FerretDB 1.24 answers a unique index refusing an *update* (not an insert) as InternalError
  // carrying SQLite's own message
  if (err instanceof MongoServerError && err.code === 1 && /UNIQUE constraint failed/.test(err.message)) return true;
  // bulkWrite reports duplicates per write
  const writeErrors = (err as { writeErrors?: Array<{ code?: number }> } | null)?.writeErrors;
  return Array.isArray(writeErrors) && writeErrors.some((e) => e.code === 11000);
}

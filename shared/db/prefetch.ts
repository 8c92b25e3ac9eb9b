import type { AbstractCursor } from 'mongodb';

/**
 * The documents of a cursor, with the next batch already asked for while the caller works on this
 * one. Iterated plainly, the driver asks for a batch only once the last one is used up, so the
 * database and the caller take turns: a 100,000-row export spent as long waiting for each batch
 * as working on it. The cursor is closed when the caller stops, early or not.
 */
export async function* prefetching<T>(cursor: AbstractCursor<T>): AsyncGenerator<T> {
  try {
    let more = cursor.hasNext();
    while (await more) {
      const batch = cursor.readBufferedDocuments();
      more = cursor.hasNext();
      more.catch(() => undefined); // awaited on the next turn, unless the caller stopped first
      yield* batch;
    }
  } finally {
    await cursor.close().catch(() => undefined);
  }
}

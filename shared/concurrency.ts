/**
 * Maps with at most `limit` calls in flight, results in input order. Reads by primary key are
 * cheap but each is a round trip; a few at once hide the latency without flooding the database.
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * mapLimit for calls with side effects: after the first rejection it starts no more calls, and
 * rejects (with that first error) only once the calls under way have settled. mapLimit rejects at
 * once while they keep running, and its other lanes keep taking items; an activity reporting that
 * failure would be retried while its first attempt still writes. (mapLimit itself keeps its
 * behaviour: a workflow calls it, and the order of its commands must replay.)
 */
export async function mapLimitSettled<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  let firstError: unknown;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i], i);
      } catch (err) {
        if (!failed) firstError = err;
        failed = true;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed) throw firstError;
  return results;
}

/**
 * A read that callers need fresh (started after they asked) but may share: a caller arriving
 * while a read is in flight waits for the next one, which every caller arriving meanwhile shares.
 * So N concurrent callers cost about two reads instead of N, and none gets an answer older than
 * its own call.
 */
export function freshReads<T>(read: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | null = null;
  let queued: Promise<T> | null = null;
  const start = (): Promise<T> => {
    const p = read();
    inFlight = p;
    const clear = () => {
      if (inFlight === p) inFlight = null;
    };
    p.then(clear, clear);
    return p;
  };
  return () => {
    if (!inFlight) return start();
    if (!queued) {
      const after = inFlight.then(
        () => undefined,
        () => undefined,
      );
      queued = after.then(() => {
        queued = null;
        return start();
      });
    }
    return queued;
  };
}

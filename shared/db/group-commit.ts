/**
 * Group commit, per key, within one process: a request that arrives while a batch of its key is
 * being written waits and goes with the others in the next batch, so N concurrent writers of one
 * document cost one read and one write together instead of N of each (and never race each other).
 * The first request of an idle key runs at once, alone.
 */

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Writes a batch and answers one outcome per request, in order. */
export type BatchRunner<R, T> = (requests: R[]) => Promise<Outcome<T>[]>;

interface Entry<R, T> {
  request: R;
  run: BatchRunner<R, T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

/** The most requests one batch takes (what a batch adds to one document stays bounded). */
const MAX_BATCH = 32;

/** Requests waiting per key; a key is present while a batch of it is being written. */
const lanes = new Map<string, Entry<unknown, unknown>[]>();

export function inBatch<R, T>(key: string, request: R, run: BatchRunner<R, T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const entry = { request, run, resolve, reject } as Entry<unknown, unknown>;
    const lane = lanes.get(key);
    if (lane) {
      lane.push(entry);
      return;
    }
    lanes.set(key, [entry]);
    void drain(key);
  });
}

async function drain(key: string): Promise<void> {
  for (;;) {
    const lane = lanes.get(key)!;
    if (!lane.length) {
      lanes.delete(key);
      return;
    }
    const batch = lane.splice(0, MAX_BATCH);
    try {
      const outcomes = await batch[0].run(batch.map((e) => e.request));
      batch.forEach((e, i) => {
        const o = outcomes[i];
        if (o.ok) e.resolve(o.value);
        else e.reject(o.error);
      });
    } catch (err) {
      for (const e of batch) e.reject(err);
    }
  }
}

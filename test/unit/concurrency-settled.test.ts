import { mapLimit, mapLimitSettled } from '../../shared/concurrency';

/** A call that ends when told: resolve or reject it from the test. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

const tick = () => new Promise((r) => setImmediate(r));

test('mapLimitSettled: a rejection waits for the calls under way, starts no more, and rejects with the first error', async () => {
  const calls = Array.from({ length: 5 }, () => deferred<number>());
  const started: number[] = [];
  let settled = false;
  const run = mapLimitSettled([0, 1, 2, 3, 4], 2, (i) => {
    started.push(i);
    return calls[i].promise;
  }).then(
    () => ((settled = true), null),
    (err: unknown) => ((settled = true), err),
  );
  await tick();
  expect(started).toEqual([0, 1]);
  calls[0].reject(new Error('first'));
  await tick();
  // call 1 is still under way: not settled yet, and nothing new started
  expect(settled).toBe(false);
  expect(started).toEqual([0, 1]);
  calls[1].reject(new Error('second'));
  expect(((await run) as Error).message).toBe('first');
  expect(started).toEqual([0, 1]);
});

test('mapLimitSettled: without a rejection, results in input order with at most `limit` in flight', async () => {
  let inFlight = 0;
  let most = 0;
  const out = await mapLimitSettled([5, 1, 3, 0, 2], 2, async (ms, i) => {
    most = Math.max(most, ++inFlight);
    await new Promise((r) => setTimeout(r, ms));
    inFlight--;
    return i * 10;
  });
  expect(out).toEqual([0, 10, 20, 30, 40]);
  expect(most).toBe(2);
  expect(await mapLimitSettled([], 4, async () => 1)).toEqual([]);
});

test('mapLimit keeps rejecting at once (a workflow calls it: its commands must replay as before)', async () => {
  const slow = deferred<number>();
  const run = mapLimit([0, 1], 2, (i) => (i === 0 ? Promise.reject(new Error('x')) : slow.promise));
  await expect(run).rejects.toThrow('x');
  slow.resolve(1);
});

import { freshReads } from '../../shared/concurrency';

/** freshReads: concurrent callers share reads, and none gets an answer that started before its call. */
test('callers during a read share the next one; a lone caller reads at once', async () => {
  let started = 0;
  const releases: (() => void)[] = [];
  const read = freshReads(() => {
    const n = ++started;
    return new Promise<number>((resolve) => releases.push(() => resolve(n)));
  });
  const first = read();
  expect(started).toBe(1);
  // three callers arrive while read 1 is in flight: none may take its answer
  const waiting = [read(), read(), read()];
  expect(started).toBe(1);
  releases[0]();
  expect(await first).toBe(1);
  await new Promise((r) => setImmediate(r));
  expect(started).toBe(2);
  releases[1]();
  expect(await Promise.all(waiting)).toEqual([2, 2, 2]);
  // idle again: the next caller reads at once
  const later = read();
  expect(started).toBe(3);
  releases[2]();
  expect(await later).toBe(3);
});

test('a failed read fails its callers only; the next callers read again', async () => {
  let n = 0;
  const read = freshReads(async () => {
    if (++n === 1) throw new Error('down');
    return n;
  });
  await expect(read()).rejects.toThrow('down');
  await expect(read()).resolves.toBe(2);
});

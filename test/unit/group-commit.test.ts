import { inBatch, type Outcome } from '../../shared/db/group-commit';

/** Group commit per key: the first request runs at once; those arriving meanwhile go together, in order. */
describe('inBatch', () => {
  const gate = () => {
    let open!: () => void;
    const opened = new Promise<void>((r) => (open = r));
    return { open, opened };
  };

  test('requests arriving while a batch runs wait and run together, in arrival order', async () => {
    const batches: number[][] = [];
    const first = gate();
    const run = async (requests: number[]): Promise<Outcome<number>[]> => {
      batches.push(requests);
      if (requests[0] === 1) await first.opened;
      return requests.map((r) => ({ ok: true, value: r * 10 }));
    };
    const answers = [1, 2, 3, 4].map((n) => inBatch('k', n, run));
    first.open();
    expect(await Promise.all(answers)).toEqual([10, 20, 30, 40]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  test('a refused request fails alone; the others of its batch succeed', async () => {
    const run = async (requests: string[]): Promise<Outcome<string>[]> =>
      requests.map((r) => (r === 'bad' ? { ok: false, error: new Error('refused') } : { ok: true, value: r }));
    const results = await Promise.allSettled(['a', 'bad', 'c'].map((r) => inBatch('k2', r, run)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  test('a batch that throws fails every request in it, and the key keeps serving later ones', async () => {
    const run = async (): Promise<Outcome<number>[]> => {
      throw new Error('database down');
    };
    await expect(inBatch('k3', 1, run)).rejects.toThrow('database down');
    await expect(
      inBatch('k3', 2, async (rs: number[]) => rs.map((r) => ({ ok: true as const, value: r }))),
    ).resolves.toBe(2);
  });

  test('keys are independent: one waiting key does not hold another', async () => {
    const slow = gate();
    const a = inBatch('slow', 1, async (rs: number[]) => {
      await slow.opened;
      return rs.map((r) => ({ ok: true as const, value: r }));
    });
    await expect(
      inBatch('fast', 2, async (rs: number[]) => rs.map((r) => ({ ok: true as const, value: r }))),
    ).resolves.toBe(2);
    slow.open();
    await expect(a).resolves.toBe(1);
  });
});

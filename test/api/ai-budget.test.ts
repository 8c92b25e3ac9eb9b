import { aiTokenDays, TokenBudget, type AiTokenDay } from '../../shared/ai/budget';
import { ensureIndexes } from '../../shared/db/mongo';
import { TenantDb } from '../../shared/db/tenant-db';
import { TestDeps } from '../helpers/stack';

/**
 * The daily AI token budget on the real database: guarded reservations under concurrency,
 * idempotent settle and release, local days in the tenant's zone, stale reservations.
 */

let deps: TestDeps;

beforeAll(async () => {
  deps = await TestDeps.open();
  await ensureIndexes(deps.db, [aiTokenDays]);
});
afterAll(() => deps.close());

/** A clock the test moves. */
function clock(iso: string) {
  let now = new Date(iso);
  return {
    now: () => now,
    set: (next: string) => (now = new Date(next)),
    advance: (ms: number) => (now = new Date(now.getTime() + ms)),
  };
}

async function budgetFor(opts: { dailyLimit: number; timeZone?: string; now?: () => Date }) {
  const { tenantId } = await deps.tenantWithKey();
  const tenantDb = new TenantDb(deps.db, tenantId);
  const budget = new TokenBudget(tenantDb, { timeZone: 'UTC', ...opts });
  const day = (date: string) =>
    deps.db
      .collection<AiTokenDay>(aiTokenDays.name)
      .findOne({ _id: `${tenantId}:${date}` }) as Promise<AiTokenDay | null>;
  return { tenantId, tenantDb, budget, day };
}

test('40 parallel reservations of 1000 against 10,500: exactly 10 go through, never over the limit', async () => {
  const t = clock('2026-05-10T12:00:00Z');
  const { budget, day } = await budgetFor({ dailyLimit: 10_500, now: t.now });
  const results = await Promise.all(Array.from({ length: 40 }, (_, i) => budget.reserve(`call-${i}`, 1000)));
  expect(results.filter(Boolean)).toHaveLength(10);
  const doc = (await day('2026-05-10'))!;
  expect(doc).toMatchObject({ used: 0, reserved: 10_000, committed: 10_000, requestCount: 0 });
  expect(Object.keys(doc.open).sort()).toEqual(
    results
      .map((ok, i) => (ok ? `call-${i}` : null))
      .filter(Boolean)
      .sort(),
  );
  expect(await budget.status()).toMatchObject({ dailyLimit: 10_500, used: 0, reserved: 10_000, remaining: 500 });
  // what is left still fits a small call, and no more
  expect(await budget.reserve('small', 500)).toBe(true);
  expect(await budget.reserve('one-more', 1)).toBe(false);
});

test('parallel settles and releases against new reservations keep committed = used + reserved', async () => {
  const t = clock('2026-05-10T12:00:00Z');
  const { budget, day } = await budgetFor({ dailyLimit: 100_000, now: t.now });
  // the day's first reservations race to create its document: every one of them still goes through
  expect(await Promise.all(Array.from({ length: 20 }, (_, i) => budget.reserve(`a-${i}`, 1000)))).toEqual(
    Array(20).fill(true),
  );
  await Promise.all([
    ...Array.from({ length: 10 }, (_, i) => budget.settle(`a-${i}`, 700)),
    ...Array.from({ length: 10 }, (_, i) => budget.release(`a-${10 + i}`)),
    ...Array.from({ length: 10 }, (_, i) => budget.reserve(`b-${i}`, 2000)),
  ]);
  const doc = (await day('2026-05-10'))!;
  expect(doc).toMatchObject({ used: 7000, reserved: 20_000, committed: 27_000, requestCount: 10 });
  expect(Object.keys(doc.open)).toHaveLength(10);
});

test('a reservation id already open is not reserved twice, even in parallel', async () => {
  const { budget, day } = await budgetFor({ dailyLimit: 5000, now: clock('2026-05-10T12:00:00Z').now });
  expect(await Promise.all([1, 2, 3, 4, 5].map(() => budget.reserve('same', 1000)))).toEqual([
    true,
    true,
    true,
    true,
    true,
  ]);
  expect(await budget.reserve('same', 1000)).toBe(true);
  expect(await day('2026-05-10')).toMatchObject({ reserved: 1000, committed: 1000 });
});

test('settle replaces the reservation by the actual use (more or less), once', async () => {
  const { budget, day } = await budgetFor({ dailyLimit: 10_000, now: clock('2026-05-10T12:00:00Z').now });
  expect(await budget.reserve('r1', 3000)).toBe(true);
  expect(await budget.reserve('r2', 1000)).toBe(true);
  await budget.settle('r1', 1234);
  await budget.settle('r1', 1234); // a retried activity
  await budget.settle('r2', 1800.2); // a call may use more than reserved; tokens round up
  await Promise.all([budget.settle('r2', 1800), budget.release('r2')]); // already closed: nothing
  expect(await day('2026-05-10')).toMatchObject({
    used: 1234 + 1801,
    reserved: 0,
    committed: 3035,
    requestCount: 2,
    open: {},
  });
  expect(await budget.status()).toMatchObject({ used: 3035, reserved: 0, remaining: 10_000 - 3035 });
  await budget.settle('never-reserved', 500);
  expect(await day('2026-05-10')).toMatchObject({ used: 3035, requestCount: 2 });
});

test('a settle racing a release of the same reservation counts once', async () => {
  const { budget, day } = await budgetFor({ dailyLimit: 10_000, now: clock('2026-05-10T12:00:00Z').now });
  for (let i = 0; i < 5; i++) {
    await budget.reserve(`x-${i}`, 1000);
    await Promise.all([budget.settle(`x-${i}`, 400), budget.release(`x-${i}`), budget.settle(`x-${i}`, 400)]);
  }
  const doc = (await day('2026-05-10'))!;
  expect(doc.reserved).toBe(0);
  expect(doc.committed).toBe(doc.used);
  expect(doc.open).toEqual({});
});

test('release frees the reservation without use; idempotent', async () => {
  const { budget, day } = await budgetFor({ dailyLimit: 2000, now: clock('2026-05-10T12:00:00Z').now });
  expect(await budget.reserve('r', 2000)).toBe(true);
  expect(await budget.reserve('other', 1)).toBe(false);
  await budget.release('r');
  await budget.release('r');
  expect(await day('2026-05-10')).toMatchObject({ used: 0, reserved: 0, committed: 0, requestCount: 0, open: {} });
  expect(await budget.reserve('other', 2000)).toBe(true);
});

test('a reservation larger than the whole day is refused; a limit of 0 refuses everything', async () => {
  const { budget, day } = await budgetFor({ dailyLimit: 1000, now: clock('2026-05-10T12:00:00Z').now });
  expect(await budget.reserve('big', 1001)).toBe(false);
  expect(await day('2026-05-10')).toBeNull();
  const zero = await budgetFor({ dailyLimit: 0 });
  expect(await zero.budget.reserve('any', 1)).toBe(false);
  expect(await zero.budget.status()).toMatchObject({ dailyLimit: 0, remaining: 0 });
});

test('reservation ids with a dot or a leading $ are refused (they are field names)', async () => {
  const { budget } = await budgetFor({ dailyLimit: 1000 });
  await expect(budget.reserve('job.1', 10)).rejects.toThrow(/no dots/);
  await expect(budget.reserve('$set', 10)).rejects.toThrow(/no dots/);
  await expect(budget.reserve('ok', 0)).rejects.toThrow(/positive integer/);
});

test("days are the tenant's local days (America/Mexico_City); a call spanning midnight is charged to its day", async () => {
  const t = clock('2026-05-10T05:58:00Z'); // 23:58 on the 9th in Mexico City (UTC-6)
  const { budget, day } = await budgetFor({ dailyLimit: 10_000, timeZone: 'America/Mexico_City', now: t.now });
  expect(await budget.reserve('late', 4000)).toBe(true);
  expect(await budget.reserve('late-2', 1000)).toBe(true);
  await budget.settle('late-2', 900);
  expect(await budget.status()).toMatchObject({
    used: 900,
    reserved: 4000,
    remaining: 5100,
    resetsAt: '2026-05-10T06:00:00.000Z',
  });

  t.set('2026-05-10T06:00:30Z'); // 00:00:30 on the 10th: a new day with the whole budget
  expect(await budget.status()).toMatchObject({
    used: 0,
    reserved: 0,
    remaining: 10_000,
    resetsAt: '2026-05-11T06:00:00.000Z',
  });
  await budget.settle('late', 3500); // reserved yesterday: settles yesterday
  expect(await day('2026-05-09')).toMatchObject({ used: 4400, reserved: 0, requestCount: 2, open: {} });
  expect(await day('2026-05-10')).toBeNull();

  expect(await budget.reserve('early', 2000)).toBe(true);
  await budget.settle('early', 1500);
  expect(await day('2026-05-10')).toMatchObject({ date: '2026-05-10', used: 1500, requestCount: 1 });
  expect(await budget.usage(7)).toEqual({
    history: [
      { date: '2026-05-10', tokensUsed: 1500, requestCount: 1 },
      { date: '2026-05-09', tokensUsed: 4400, requestCount: 2 },
    ],
  });
  expect(await budget.usage(1)).toEqual({ history: [{ date: '2026-05-10', tokensUsed: 1500, requestCount: 1 }] });
});

test('resetsAt is the next local midnight across a DST change (America/New_York, 2026-03-08)', async () => {
  const t = clock('2026-03-07T23:00:00Z'); // 18:00 EST on the 7th
  const { budget } = await budgetFor({ dailyLimit: 1000, timeZone: 'America/New_York', now: t.now });
  expect((await budget.status()).resetsAt).toBe('2026-03-08T05:00:00.000Z'); // midnight EST
  t.set('2026-03-08T12:00:00Z'); // 08:00 EDT on the 8th, a 23-hour day
  expect((await budget.status()).resetsAt).toBe('2026-03-09T04:00:00.000Z'); // midnight EDT
  t.set('2026-11-01T12:00:00Z'); // the 25-hour day DST ends
  expect((await budget.status()).resetsAt).toBe('2026-11-02T05:00:00.000Z');
});

test('releaseStale frees reservations a killed worker left open, today and yesterday, and no others', async () => {
  const t = clock('2026-05-09T23:50:00Z');
  const { budget, day } = await budgetFor({ dailyLimit: 10_000, now: t.now });
  await budget.reserve('yesterday-stale', 1000);
  t.set('2026-05-10T00:10:00Z');
  await budget.reserve('today-stale', 2000);
  t.advance(4 * 60_000);
  await budget.reserve('today-fresh', 500);
  t.advance(2 * 60_000); // now: stale ones are 6 and 26 minutes old, the fresh one 2

  expect(await budget.releaseStale(5 * 60_000)).toBe(2);
  expect(await budget.releaseStale(5 * 60_000)).toBe(0);
  expect(await day('2026-05-09')).toMatchObject({ reserved: 0, committed: 0, open: {} });
  expect(await day('2026-05-10')).toMatchObject({ reserved: 500, committed: 500 });
  expect(Object.keys((await day('2026-05-10'))!.open)).toEqual(['today-fresh']);
  await budget.settle('today-stale', 100); // the worker came back after all: already freed, nothing counted
  expect(await budget.status()).toMatchObject({ used: 0, reserved: 500 });
});

test("tenants do not share a budget; usage lists only the tenant's own days", async () => {
  const t = clock('2026-05-10T12:00:00Z');
  const a = await budgetFor({ dailyLimit: 1000, now: t.now });
  const b = await budgetFor({ dailyLimit: 1000, now: t.now });
  expect(await a.budget.reserve('r', 1000)).toBe(true);
  expect(await b.budget.reserve('r', 1000)).toBe(true);
  await a.budget.settle('r', 10);
  expect(await b.budget.status()).toMatchObject({ used: 0, reserved: 1000 });
  expect((await b.budget.usage(30)).history).toEqual([{ date: '2026-05-10', tokensUsed: 0, requestCount: 0 }]);
  expect((await a.budget.usage(30)).history).toEqual([{ date: '2026-05-10', tokensUsed: 10, requestCount: 1 }]);
});

test('an unknown time zone fails when the budget is made', async () => {
  const { tenantId } = await deps.tenantWithKey();
  expect(() => new TokenBudget(new TenantDb(deps.db, tenantId), { dailyLimit: 1, timeZone: 'Nowhere/Else' })).toThrow(
    RangeError,
  );
});

import { DefaultLogger } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { ActivityDeps } from '../../activities';
import { transferActivities, type MoveTransferInput } from '../../activities/inventory/transfer-activities';
import { TenantDb } from '../../shared/db/tenant-db';
import { AppError } from '../../shared/errors/catalog';
import { Ledger } from '../../shared/inventory/ledger';
import { locations } from '../../shared/locations/locations';
import { TestDeps } from '../helpers/stack';

/**
 * A receive's activity attempt that Temporal timed out keeps running in its worker (a zombie)
 * while the retry runs. Whatever order their steps take, each line moves once or not at all:
 * the movements are keyed by transfer, receive attempt, step and SKU, a reversal only covers
 * lines already out, and a refused line's movement stays refused, so a zombie that finds stock
 * later cannot carry the lines the retry put back into the destination.
 */
let deps: TestDeps;
let tenantDb: TenantDb;
const P = `TZ${Date.now().toString(36).toUpperCase()}`;
const ORIGIN = `loc_o_${P}`;
const DEST = `loc_d_${P}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  tenantDb = new TenantDb(deps.db, (await deps.tenantWithKey()).tenantId);
  // a receive checks that both locations still exist
  const now = new Date();
  for (const _id of [ORIGIN, DEST])
    await tenantDb.collection(locations).insertOne({
      _id,
      name: _id,
      type: 'location',
      isDefault: false,
      isSystem: false,
      managedBy: null,
      createdAt: now,
      updatedAt: now,
    });
});
afterAll(() => deps.close());

// the refusals expected here would each log a warning
const quiet = new DefaultLogger('ERROR');
const acts = () => transferActivities({ db: deps.db } as ActivityDeps);

/** One execution of the receive's activity, resuming from `checkpoint` as a retry does. */
function execution(input: MoveTransferInput, checkpoint?: { out: number; in: number }) {
  return new MockActivityEnvironment(checkpoint ? { heartbeatDetails: checkpoint } : {}, { logger: quiet }).run(
    acts().moveTransferStock,
    input,
  );
}

async function refused(p: Promise<unknown>) {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe('conflict/insufficient-stock');
}

async function setup(stock: number[]) {
  const ledger = new Ledger(tenantDb);
  const skus = stock.map((_, i) => `${P}-${++n}-${i}`);
  for (const [i, qty] of stock.entries())
    if (qty) await ledger.apply({ sku: skus[i], locationId: ORIGIN, delta: qty, reason: 'restock', actor: 'test' });
  const input = (attempt: number): MoveTransferInput => ({
    tenantId: tenantDb.tenantId,
    transferId: `trf_${P}_${n}`,
    attempt,
    originId: ORIGIN,
    destinationId: DEST,
    productsList: skus.map((sku) => ({ sku, quantity: 2 })),
    actor: 'test',
  });
  const stockAt = async (loc: string) => Promise.all(skus.map((s) => ledger.onHand(s, loc)));
  return { skus, input, stockAt, ledger };
}

test('the retry is refused and puts lines back; the zombie finds the stock later: it is refused too, nothing moves', async () => {
  const { skus, input, stockAt, ledger } = await setup([5, 0, 5]);
  await refused(execution(input(1)));
  // stock for the refused line arrives, then the zombie (stopped before its first line) goes on
  await ledger.apply({ sku: skus[1], locationId: ORIGIN, delta: 5, reason: 'restock', actor: 'test' });
  await refused(execution(input(1)));
  // and a zombie that had reported its first line out
  await refused(execution(input(1), { out: 1, in: 0 }));
  expect(await stockAt(ORIGIN)).toEqual([5, 5, 5]);
  expect(await stockAt(DEST)).toEqual([0, 0, 0]);
});

test('a later receive succeeds; the first receive’s zombie then runs: every line moved exactly once', async () => {
  const { skus, input, stockAt, ledger } = await setup([5, 0, 5]);
  await refused(execution(input(1)));
  await ledger.apply({ sku: skus[1], locationId: ORIGIN, delta: 5, reason: 'restock', actor: 'test' });
  await execution(input(2));
  await refused(execution(input(1), { out: 1, in: 0 }));
  expect(await stockAt(ORIGIN)).toEqual([3, 3, 3]);
  expect(await stockAt(DEST)).toEqual([2, 2, 2]);
});

test('zombie and retry of one receive concurrently, from any checkpoint: every line moved exactly once', async () => {
  const { input, stockAt } = await setup([5, 5, 5]);
  await Promise.all([
    execution(input(1)),
    execution(input(1), { out: 2, in: 0 }),
    execution(input(1), { out: 3, in: 1 }),
  ]);
  await execution(input(1), { out: 3, in: 0 }); // a zombie arriving after all of them
  expect(await stockAt(ORIGIN)).toEqual([3, 3, 3]);
  expect(await stockAt(DEST)).toEqual([2, 2, 2]);
});

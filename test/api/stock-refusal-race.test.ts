import { TenantDb } from '../../shared/db/tenant-db';
import { Ledger } from '../../shared/inventory/ledger';
import { Held } from '../helpers/held-tenant-db';
import { TestDeps } from '../helpers/stack';

/**
 * Two attempts of one keyed movement (a worker's zombie activity and its retry, or a client's
 * two retries) while stock arrives: one finds too little and refuses, the other finds enough.
 * Whatever the order, both must answer the same and the balance must match the movement, or a
 * transfer reverses the lines its retry saw refused while its zombie had taken the stock.
 */
let deps: TestDeps;
let tenantId: string;
const P = `SR${Date.now().toString(36).toUpperCase()}`;
const loc = 'loc_race';

beforeAll(async () => {
  deps = await TestDeps.open();
  tenantId = (await deps.tenantWithKey()).tenantId;
});
afterAll(() => deps.close());

test('an attempt refused for want of stock, and one that finds stock arrived meanwhile: both refuse, nothing taken', async () => {
  const ledger = new Ledger(new TenantDb(deps.db, tenantId));
  const sku = `${P}-A`;
  await ledger.apply({ sku, locationId: loc, delta: 2, reason: 'restock', actor: 'test' });
  const take = { sku, locationId: loc, delta: -5, reason: 'transfer', actor: 'test', idempotencyKey: `${P}:out` };
  // the first attempt finds 2 of 5 and is held just before it records the refusal
  const held = new Held(deps.db, tenantId, { collection: 'stock_movements', method: 'updateOne', call: 1 });
  const first = new Ledger(held).apply(take).then(
    (m) => ({ applied: m.status }),
    (err: { code?: string }) => ({ refused: err.code }),
  );
  await held.reached;
  // stock arrives, and the second attempt runs
  await ledger.apply({ sku, locationId: loc, delta: 10, reason: 'restock', actor: 'test' });
  const second = await ledger.apply(take).then(
    (m) => ({ applied: m.status }),
    (err: { code?: string }) => ({ refused: err.code }),
  );
  held.release();
  expect(await first).toEqual({ refused: 'conflict/insufficient-stock' });
  expect(second).toEqual(await first);
  expect(await ledger.onHand(sku, loc)).toBe(12);
  expect((await ledger.movement(`${P}:out`))?.status).toBe('rejected');
  // and a later attempt is refused as they were
  await expect(ledger.apply(take)).rejects.toMatchObject({ code: 'conflict/insufficient-stock' });
  expect(await ledger.onHand(sku, loc)).toBe(12);
});

test('an attempt about to refuse when the other applies it with stock arrived meanwhile: both answer applied, taken once', async () => {
  const ledger = new Ledger(new TenantDb(deps.db, tenantId));
  const sku = `${P}-B`;
  await ledger.apply({ sku, locationId: loc, delta: 2, reason: 'restock', actor: 'test' });
  const take = { sku, locationId: loc, delta: -5, reason: 'transfer', actor: 'test', idempotencyKey: `${P}:out-b` };
  // the first attempt finds 2 of 5, and is held as it is about to note its refusal on the balance
  const held = new Held(deps.db, tenantId, { collection: 'stock_levels', method: 'updateOne', call: 1 });
  const first = new Ledger(held).apply(take).then(
    (m) => ({ applied: m.status }),
    (err: { code?: string }) => ({ refused: err.code }),
  );
  await held.reached;
  await ledger.apply({ sku, locationId: loc, delta: 10, reason: 'restock', actor: 'test' });
  const second = await ledger.apply(take);
  expect(second.status).toBe('applied');
  held.release();
  expect(await first).toEqual({ applied: 'applied' });
  expect(await ledger.onHand(sku, loc)).toBe(7);
  expect((await ledger.movement(`${P}:out-b`))?.status).toBe('applied');
});

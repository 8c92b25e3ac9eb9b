import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { stockMovements } from '../../shared/inventory/collections';

/**
 * Two stock PUTs sent at once under one Idempotency-Key with different stocks (a client bug, or a
 * key generator collision): one is applied, the other is 409 idempotency-key-reused, and the
 * ledger's movement is the one applied to the balance (a set's movement names its target).
 */
let deps: TestDeps;
let api: ApiClient;
let tdb: TenantDb;
let loc: string;
const P = `IKR${Date.now().toString(36).toUpperCase()}`;
const ROUNDS = 12;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'stock key race');
  api = new ApiClient(t.key);
  tdb = new TenantDb(deps.db, t.tenantId);
  loc = (await api.get('/locations')).body.locations[0].id;
  for (let i = 0; i < ROUNDS; i++)
    expect((await api.post('/products', { sku: `${P}-${i}`, title: { value: 'x' }, price: 10 })).status).toBe(201);
});
afterAll(() => deps.close());

test('concurrent PUTs of different stocks under one Idempotency-Key: one 200, one 409 idempotency-key-reused, ledger matches balance', async () => {
  const problems: string[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const sku = `${P}-${i}`;
    const path = `/inventory/location/${loc}/product/${sku}`;
    const headers = { 'Idempotency-Key': `race-${P}-${i}` };
    const [a, b] = await Promise.all([
      api.put(path, { stock: 4 }, { headers }),
      api.put(path, { stock: 9 }, { headers }),
    ]);
    const onHand = (await api.get(path)).body.onHand;
    const oks = [a, b].filter((r) => r.status === 200);
    const reused = [a, b].filter((r) => r.status === 409 && r.body.code === 'idempotency-key-reused');
    if (oks.length !== 1 || reused.length !== 1)
      problems.push(
        `${sku}: answers ${a.status}/${a.body.onHand ?? a.body.code} and ${b.status}/${b.body.onHand ?? b.body.code}, balance ${onHand}`,
      );
    const moves = await tdb.collection(stockMovements).find({ sku, locationId: loc, status: 'applied' }).toArray();
    const sum = moves.reduce((s, m) => s + m.delta, 0);
    if (sum !== onHand) problems.push(`${sku}: applied movements add up to ${sum}, balance is ${onHand}`);
  }
  expect(problems).toEqual([]);
});

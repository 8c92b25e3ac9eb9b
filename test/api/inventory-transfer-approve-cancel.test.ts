import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { Ledger } from '../../shared/inventory/ledger';
import { locations, systemLocationId } from '../../shared/locations/locations';

/**
 * An approve and a cancel of one pending transfer sent at once: the workflow takes both (pending
 * → approved → cancelled) and writes the record in that order, so the record ends as the workflow
 * does (cancelled), and a later action is the state's 409, never a 500.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let origin: string;
const dest = `loc_dest_${Date.now().toString(36)}`;
const P = `TAC${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-A`;
const ROUNDS = 15;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey(undefined, 'transfer approve cancel');
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key);
  origin = systemLocationId(tenantId);
  const now = new Date();
  await new TenantDb(deps.db, tenantId).collection(locations).insertOne({
    _id: dest,
    name: 'Store',
    type: 'location',
    isDefault: false,
    isSystem: false,
    managedBy: null,
    createdAt: now,
    updatedAt: now,
  });
  expect((await api.post('/products', { sku: SKU, title: { value: SKU }, price: 1 })).status).toBe(201);
  await new Ledger(new TenantDb(deps.db, tenantId)).apply({
    sku: SKU,
    locationId: origin,
    delta: 1000,
    reason: 'restock',
    actor: 'test',
  });
});
afterAll(() => deps.close());

/*
 * Now (when the race hits): the workflow ended cancelled, yet GET /inventory/transfers/{id} says
 * approved; every later action on it is then a 500 (refusalOf finds the workflow closed and the
 * record neither received nor cancelled, and rethrows).
 * Should: the record mirrors the workflow's state (docs/inventory.md: "approve / receive / cancel
 * are Temporal Updates whose validators enforce pending → approved → received (cancel before
 * receipt); an illegal move is 409 conflict/transfer-<state>"), so a cancelled transfer reads
 * cancelled and a receive of it is 409 conflict/transfer-cancelled.
 */
test('approve and cancel at once: the record ends as the workflow does, and a later receive is 409, not 500', async () => {
  const problems: string[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const created = await api.post('/inventory/transfers', {
      originId: origin,
      destinationId: dest,
      productsList: [{ sku: SKU, quantity: 1 }],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const [a, c] = await Promise.all([
      api.post(`/inventory/transfers/${id}/approve`),
      api.post(`/inventory/transfers/${id}/cancel`, { reason: 'race' }),
    ]);
    const ended = (await deps.temporal.workflow.getHandle(created.body.workflowId).result()) as string;
    const record = (await api.get(`/inventory/transfers/${id}`)).body;
    if (record.status !== ended)
      problems.push(`${id}: approve ${a.status}, cancel ${c.status}; workflow ${ended}, record ${record.status}`);
    const later = await api.post(`/inventory/transfers/${id}/receive`);
    if (later.status !== 409 || later.body.code !== `conflict/transfer-${ended}`)
      problems.push(`${id}: a later receive answers ${later.status} ${later.body.code}`);
  }
  expect(problems).toEqual([]);
});

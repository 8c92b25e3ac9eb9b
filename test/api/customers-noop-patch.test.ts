import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { customers } from '../../shared/customers/collections';
import { ObjectId } from 'mongodb';

/**
 * A PATCH that sends what the customer already holds changes nothing: 200 with the customer as it
 * is, no new version, no new updatedAt and so no customer.updated event (as orders skip such
 * no-op changes). A PATCH that changes one field is a change as before.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantDb: TenantDb;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(['customers:read', 'customers:update'], 'customers no-op patch');
  api = new ApiClient(t.key);
  tenantDb = new TenantDb(deps.db, t.tenantId);
});
afterAll(() => deps.close());

const versionOf = async (id: string) =>
  (await tenantDb.collection(customers).findOne({ _id: new ObjectId(id) }))?.version;

test('a PATCH of the values held is no change; a PATCH of another value is', async () => {
  const made = await api.post('/customers', { name: 'Ana Ruiz', phone: '+1 555 0100', tags: ['vip'] });
  expect(made.status).toBe(201);
  const id = made.body.id as string;
  const version = await versionOf(id);

  const same = await api.patch(`/customers/${id}`, { name: 'Ana Ruiz', phone: '+1 555 0100', tags: ['vip'] });
  expect(same.status).toBe(200);
  expect(same.body.updatedAt).toBe(made.body.updatedAt);
  expect(await versionOf(id)).toBe(version);

  const changed = await api.patch(`/customers/${id}`, { phone: '+1 555 0199' });
  expect(changed.status).toBe(200);
  expect(changed.body.phone).toBe('+1 555 0199');
  expect(await versionOf(id)).toBe(version! + 1);
});

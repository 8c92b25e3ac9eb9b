import { ObjectId } from 'mongodb';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import type { CollectionDef } from '../../shared/db/collection';
import { TenantDb, type TenantCollection, type TenantDoc } from '../../shared/db/tenant-db';
import { assignCategory } from '../../shared/categories/assign';
import { bulkOperations } from '../../shared/bulk/operations';
import type { ChannelDoc } from '../../shared/channels/channels';

/**
 * Review: a marketplace-category assignment runs inside its request. The API process dies after
 * the change is recorded, before the product write; the user then saves the product (its version
 * becomes the very version the assignment's write would have made). Once the lease is over, the
 * operation is settled from what it recorded: it must not keep a record of a write that never
 * landed, whose rollback would overwrite the user's save.
 */
jest.setTimeout(120_000);

let deps: TestDeps;
beforeAll(async () => {
  deps = await TestDeps.open();
});
afterAll(() => deps.close());

class Killed extends Error {}

class KillBeforeProductWrite extends TenantDb {
  override collection<T extends TenantDoc>(def: CollectionDef<T>): TenantCollection<T> {
    const col = super.collection(def);
    if (def.name === 'products')
      (col as unknown as Record<string, unknown>).bulkWrite = async () => {
        throw new Killed('API process killed before the products write');
      };
    return col;
  }
}

test('a category assignment killed before its write is not rolled back over the user save that followed', async () => {
  const t = await deps.tenantWithKey();
  const api = new ApiClient(t.key);
  const sku = `RVCAT${Date.now().toString(36).toUpperCase()}`;
  const body = { sku, title: { value: 'Original' }, price: 10, metafields: [] as unknown[] };
  const created = await api.post('/products', body);
  expect(created.status).toBe(201);
  const id = created.body.id as string;

  const channel = { _id: new ObjectId(), type: 'mercadolibre', settings: {} } as unknown as ChannelDoc;
  await expect(
    assignCategory(new KillBeforeProductWrite(deps.db, t.tenantId), {
      channel,
      skus: [sku],
      category: { id: 'MLM1234', name: 'Phones' },
      source: 'manual',
      actor: 'review',
    }),
  ).rejects.toBeInstanceOf(Killed);

  // the user saves the product with a category of their own under the same metafield
  const mine = {
    namespace: 'mkt_category',
    key: 'mercadolibre:MLM',
    type: 'json',
    value: {
      id: 'MLM9999',
      name: 'User pick',
      path: null,
      source: 'manual',
      channelId: channel._id.toHexString(),
      assignedAt: new Date().toISOString(),
    },
  };
  const put = await api.put(`/products/${id}`, { ...body, title: { value: 'User title' }, metafields: [mine] });
  expect(put.status).toBe(200);

  // the request's lease runs out (15 minutes): moved to the past
  const tenantDb = new TenantDb(deps.db, t.tenantId);
  const op = await tenantDb.collection(bulkOperations).findOne({ type: 'marketplace-category' });
  expect(op).not.toBeNull();
  await tenantDb.collection(bulkOperations).updateById(op!._id, { $set: { leaseUntil: new Date(Date.now() - 1000) } });

  const read = await api.get(`/products/bulk/operations/${op!._id}`);
  expect(read.status).toBe(200);
  const rb = await api.post(`/products/bulk/operations/${op!._id}/rollback`, {});
  // nothing of the assignment landed: nothing to roll back (a refusal), and in any case the user's save stays
  for (let i = 0; i < 60 && rb.status === 202; i++) {
    const poll = await api.get(`/products/bulk/operations/${op!._id}/rollback`);
    if (poll.body.status === 'completed' || poll.body.status === 'failed') break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const after = (await api.get(`/products/${id}`)).body;
  expect(after.title.value).toBe('User title');
  expect(after.metafields).toEqual([expect.objectContaining({ value: expect.objectContaining({ id: 'MLM9999' }) })]);
  expect({ op: read.body.status, rollback: rb.status }).toEqual({ op: 'failed', rollback: 400 });
});

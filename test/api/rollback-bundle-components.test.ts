import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { bulkOperationItems } from '../../shared/bulk/operations';
import { RollbackSteps } from '../../shared/bulk/rollback-steps';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';

/**
 * A rollback deletes the products its operation created, but never one a bundle made since names
 * as a component: DELETE /products/{id} refuses that, and so does a rollback.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantDb: TenantDb;
const P = `RBC${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'rollback bundle components');
  api = new ApiClient(t.key);
  tenantDb = new TenantDb(deps.db, t.tenantId);
});
afterAll(() => deps.close());

async function importMug(): Promise<{ operationId: string; sku: string; mugId: string }> {
  const sku = `${P}-MUG${++n}`;
  const imported = await api.post('/products/bulk/csv/import', {
    format: 'native',
    createIfNotExists: true,
    content: toCsvText(nativeLayout.columns, [{ sku, title: 'Mug', price: '5' }]),
  });
  expect(imported.status).toBe(200);
  const mugId = (await api.get(`/products/sku/${sku}/exists`)).body.productId as string;
  return { operationId: imported.body.operationId, sku, mugId };
}
const bundleOf = async (component: string) => {
  const res = await api.post('/products', {
    sku: `${component}-GIFT`,
    title: { value: 'Gift box' },
    price: 9,
    productType: 'bundle',
    bundleConfig: { components: [{ productSku: component, quantity: 2 }] },
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
};

test('a later bundle of an imported product: canRollback false naming both, the rollback is refused, the mug stays', async () => {
  const { operationId, sku, mugId } = await importMug();
  const gift = await bundleOf(sku);
  const op = (await api.get(`/products/bulk/operations/${operationId}`)).body;
  expect(op.canRollback).toBe(false);
  expect(op.rollbackBlockedBy).toContain(`${sku}-GIFT`);
  const started = await api.post(`/products/bulk/operations/${operationId}/rollback`);
  expect({ status: started.status, code: started.body.code, blocked: started.body.details?.blockedSkus }).toEqual({
    status: 400,
    code: 'rollback-failed',
    blocked: [sku],
  });
  expect((await api.get(`/products/${mugId}`)).status).toBe(200);
  expect((await api.get(`/products/${gift}`)).body.bundleConfig.components[0].productSku).toBe(sku);
});

test('a bundle made after the check, before the delete: the step keeps the mug and says why', async () => {
  const { operationId, sku, mugId } = await importMug();
  await bundleOf(sku);
  const items = await tenantDb.collection(bulkOperationItems).find({ operationId }).toArray();
  const reasons = await new RollbackSteps(tenantDb, `bop_probe_${n}`).undo(items, new Map());
  expect(reasons).toEqual([`a component of the bundle ${sku}-GIFT`]);
  expect((await api.get(`/products/${mugId}`)).status).toBe(200);
});

test('control: once the bundle is gone, the rollback deletes the mug', async () => {
  const { operationId, sku, mugId } = await importMug();
  const gift = await bundleOf(sku);
  expect((await api.delete(`/products/${gift}`)).status).toBe(200);
  expect((await api.get(`/products/bulk/operations/${operationId}`)).body.canRollback).toBe(true);
  const started = await api.post(`/products/bulk/operations/${operationId}/rollback`);
  expect([200, 202]).toContain(started.status);
  for (let i = 0; i < 100 && (await api.get(`/products/${mugId}`)).status !== 404; i++)
    await new Promise((r) => setTimeout(r, 200));
  expect((await api.get(`/products/${mugId}`)).status).toBe(404);
  expect((await api.get(`/products/sku/${sku}/exists`)).body.exists).toBe(false);
});

import { ApiClient, type HttpResult } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';

/**
 * What a rollback restores and what it keeps: a product its import created that holds stock since
 * stays (listed as not undone, as DELETE /products/{id} refuses it); bindings the import wrote go
 * back to what they were; the rollback's own record counts what it deleted, so its counts add up.
 */
let deps: TestDeps;
let api: ApiClient;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey(undefined, 'rollback restores');
  api = new ApiClient(tenant.key);
});
afterAll(() => deps.close());

const P = () => `BOPR${Date.now().toString(36).toUpperCase()}${++n}`;

function csv(rows: Record<string, string | number>[]): string {
  return toCsvText(
    nativeLayout.columns,
    rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, String(v)]))),
  );
}
const importCsv = (body: Record<string, unknown>) => api.post('/products/bulk/csv/import', body);
const bySku = async (sku: string) => {
  const exists = (await api.get(`/products/sku/${sku}/exists`)).body;
  return exists.exists ? (await api.get(`/products/${exists.productId}`)).body : null;
};
const rollbackUrl = (operationId: string) => `/products/bulk/operations/${operationId}/rollback`;

async function rollbackEnded(operationId: string, timeoutMs = 60_000): Promise<HttpResult> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api.get(rollbackUrl(operationId));
    expect(res.status).toBe(200);
    if (res.body.status === 'completed' || res.body.status === 'failed') return res;
    if (Date.now() > deadline) throw new Error(`rollback of ${operationId} still ${res.body.status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('rolling back an import keeps a product it created that holds stock since', async () => {
  const sku = P();
  const res = await importCsv({ content: csv([{ sku, title: 'Stocked', price: 4 }]), createIfNotExists: true });
  expect(res.status).toBe(200);
  const operationId = res.body.operationId as string;
  const loc = (await api.post('/locations', { name: `Loc ${sku}`, type: 'location' })).body.id as string;
  expect((await api.put(`/inventory/location/${loc}/product/${sku}`, { stock: 5 })).status).toBe(200);

  const started = await api.post(rollbackUrl(operationId));
  if (started.status === 400) {
    // refused before starting: fine, as long as the product stays
    expect(started.body.code).toBe('rollback-failed');
  } else {
    const rb = await rollbackEnded(operationId);
    expect(rb.body.success).toBe(false);
    expect(rb.body.failed.map((f: { sku: string }) => f.sku)).toEqual([sku]);
  }
  expect(await bySku(sku)).not.toBeNull();
});

test('rolling back an import that set a binding takes the binding away again', async () => {
  const channelId = (
    await api.post('/channels', { name: `ch ${P()}`, type: 'custom', settings: { endpointUrl: 'http://127.0.0.1:9' } })
  ).body.id as string;
  expect(channelId).toMatch(/^[0-9a-f]{24}$/);
  const sku = P();
  const made = await api.post('/products', { sku, title: { value: 'Mug' }, price: 10 });
  expect(made.status).toBe(201);
  const original = await bySku(sku);
  expect(original.bindings ?? []).toEqual([]);

  const res = await importCsv({
    content: csv([
      { sku, title: 'Mug', price: 10, bindings: JSON.stringify([{ channelId, handle: 'mug', type: 'custom' }]) },
    ]),
  });
  expect(res.status).toBe(200);
  expect(res.body.updated).toBe(1);
  expect((await bySku(sku)).bindings).toHaveLength(1);

  const started = await api.post(rollbackUrl(res.body.operationId));
  expect(started.status).toBe(202);
  const rb = await rollbackEnded(res.body.operationId);
  expect(rb.body).toMatchObject({ status: 'completed', success: true, restored: 1 });
  const restored = await bySku(sku);
  expect(restored.bindings ?? []).toEqual([]);
});

test("a rollback's operation record: its counts add up to totalProcessed", async () => {
  const kept = P();
  await importCsv({ content: csv([{ sku: kept, title: 'Original', price: 1 }]), createIfNotExists: true });
  const res = await importCsv({
    content: csv([
      { sku: kept, title: 'Changed', price: 2 },
      { sku: P(), title: 'New', price: 3 },
      { sku: P(), title: 'New', price: 3 },
    ]),
    createIfNotExists: true,
  });
  expect(res.body).toMatchObject({ created: 2, updated: 1 });
  const imported = (await api.get(`/products/bulk/operations/${res.body.operationId}`)).body;
  const sum = (c: Record<string, number>) =>
    Object.entries(c)
      .filter(([k]) => k !== 'totalProcessed')
      .reduce((s, [, v]) => s + v, 0);
  expect(sum(imported.counts)).toBe(imported.counts.totalProcessed);

  expect((await api.post(rollbackUrl(res.body.operationId))).status).toBe(202);
  const rb = await rollbackEnded(res.body.operationId);
  expect(rb.body).toMatchObject({ status: 'completed', deleted: 2, restored: 1 });
  const recorded = (await api.get(`/products/bulk/operations/${rb.body.rollbackOperationId}`)).body;
  expect(recorded.counts.totalProcessed).toBe(3);
  expect(sum(recorded.counts)).toBe(recorded.counts.totalProcessed);
});

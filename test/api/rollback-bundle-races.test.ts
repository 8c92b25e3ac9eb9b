import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';
import { mapLimit } from '../../shared/concurrency';

/**
 * Bundles created while a rollback deletes the products its import created never name a deleted
 * product: the rollback marks the SKUs leaving before it looks for bundles, as DELETE does.
 */
let deps: TestDeps;
let api: ApiClient;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'rollback bundle races')).key);
});
afterAll(() => deps.close());

async function rollbackEnded(operationId: string) {
  for (let i = 0; i < 600; i++) {
    const r = await api.get(`/products/bulk/operations/${operationId}/rollback`);
    if (r.body.status === 'completed' || r.body.status === 'failed') return r;
    await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error('rollback did not end');
}

test('bundles created during a rollback never name a product the rollback deleted', async () => {
  const dangling: string[] = [];
  for (let round = 0; round < 3 && dangling.length === 0; round++) {
    const base = `BOPRR${Date.now().toString(36).toUpperCase()}${round}`;
    const skus = Array.from({ length: 600 }, (_, i) => `${base}-${i}`);
    const imported = await api.post('/products/bulk/csv/import', {
      content: toCsvText(
        nativeLayout.columns,
        skus.map((sku) => ({ sku, title: 'Part', price: '1' })),
      ),
      createIfNotExists: true,
    });
    expect(imported.status).toBe(200);
    const operationId = imported.body.operationId as string;
    expect((await api.post(`/products/bulk/operations/${operationId}/rollback`)).status).toBe(202);
    // 64 in flight: enough to race the rollback throughout, without 600 sockets opened at once
    // (a burst that size had the loaded machine close some of them: "other side closed")
    const made = await mapLimit(skus, 64, (sku) =>
      api.post('/products', {
        sku: `${sku}-B`,
        title: { value: 'Box' },
        price: 2,
        productType: 'bundle',
        bundleConfig: { components: [{ productSku: sku, quantity: 1 }] },
      }),
    );
    await rollbackEnded(operationId);
    // the loser of each race is refused as a client error
    expect([...new Set(made.map((m) => m.status))].filter((s) => ![201, 400, 409].includes(s))).toEqual([]);
    for (const [i, m] of made.entries()) {
      if (m.status !== 201) continue;
      if (!(await api.get(`/products/sku/${skus[i]}/exists`)).body.exists) dangling.push(`${skus[i]}-B`);
    }
  }
  expect({ dangling: dangling.length, first: dangling.slice(0, 5) }).toEqual({ dangling: 0, first: [] });
});

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';

/**
 * A calculated bundle is never a component, whoever writes the bundle: a rollback whose
 * before-image names a product that has since become a calculated bundle does not put it back
 * (the product keeps its current components, its item says why).
 */
let deps: TestDeps;
let api: ApiClient;
const P = `RNB${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'nested bundle rollback');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

test('rolling back an import restores no bundle naming a calculated bundle', async () => {
  const inner = `${P}-INNER`;
  const fork = `${P}-FORK`;
  const knife = `${P}-KNIFE`;
  const outer = `${P}-OUTER`;
  for (const sku of [inner, fork, knife])
    expect((await api.post('/products', { sku, title: { value: sku }, price: 2 })).status).toBe(201);
  const innerId = (await api.get(`/products/sku/${inner}/exists`)).body.productId as string;
  const made = await api.post('/products', {
    sku: outer,
    title: { value: 'Outer' },
    price: 9,
    productType: 'bundle',
    bundleConfig: { components: [{ productSku: inner }] },
  });
  expect(made.status).toBe(201);
  // an import points the outer bundle at the knife instead
  const imported = await api.post('/products/bulk/csv/import', {
    format: 'native',
    content: toCsvText(nativeLayout.columns, [
      {
        sku: outer,
        bundleConfig: JSON.stringify({ inventoryMode: 'calculated', components: [{ productSku: knife, quantity: 1 }] }),
      },
    ]),
  });
  if (imported.status !== 200) throw new Error(JSON.stringify(imported.body));
  expect((await api.get(`/products/${made.body.id}`)).body.bundleConfig.components[0].productSku).toBe(knife);
  // no bundle names the inner product now: it may become a calculated bundle
  const became = await api.put(`/products/${innerId}`, {
    sku: inner,
    title: { value: inner },
    price: 2,
    productType: 'bundle',
    bundleConfig: { components: [{ productSku: fork }] },
  });
  expect(became.status).toBe(200);
  // rolling the import back puts the outer bundle's components back: [inner], a calculated bundle
  const started = await api.post(`/products/bulk/operations/${imported.body.operationId}/rollback`);
  let outerDoc = (await api.get(`/products/${made.body.id}`)).body;
  for (let i = 0; i < 100 && outerDoc.bundleConfig.components[0].productSku === knife && started.status < 300; i++) {
    await new Promise((r) => setTimeout(r, 200));
    const op = (await api.get(`/products/bulk/operations/${imported.body.operationId}/rollback`)).body;
    outerDoc = (await api.get(`/products/${made.body.id}`)).body;
    if (['completed', 'failed', 'partial'].includes(op.status) || op.status === undefined) break;
  }
  outerDoc = (await api.get(`/products/${made.body.id}`)).body;
  const innerDoc = (await api.get(`/products/${innerId}`)).body;
  const namesInner = (outerDoc.bundleConfig.components as { productSku: string }[]).some((c) => c.productSku === inner);
  const innerCalculated =
    innerDoc.productType === 'bundle' && (innerDoc.bundleConfig?.inventoryMode ?? 'calculated') !== 'reserved';
  // never both: the outer bundle naming the inner one while the inner one is a calculated bundle
  expect({ namesInner, innerCalculated, rollback: started.status }).not.toMatchObject({
    namesInner: true,
    innerCalculated: true,
  });
  expect([innerCalculated, outerDoc.bundleConfig.components[0].productSku]).toEqual([true, knife]);
});

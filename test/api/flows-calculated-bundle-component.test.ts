import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * docs/catalog.md: "A calculated bundle is never a component ... a component turned into one is
 * 400 details.reason in-use", whoever writes it: a rule flow (and an AI transform, a CSV update:
 * the shared edits pipeline, which plans with catalog.prepare) counts such a product invalid and
 * leaves it reserved. Before, only the single-product write checked it.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `RGFB${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'review flow calculated bundle')).key);
});
afterAll(() => deps.close());

test('a flow may not turn a component (a reserved bundle) into a calculated bundle', async () => {
  expect((await api.post('/products', { sku: `${P}-X`, title: { value: 'part' }, price: 1 })).status).toBe(201);
  const inner = await api.post('/products', {
    sku: `${P}-C`,
    productType: 'bundle',
    title: { value: 'inner kit' },
    price: 3,
    bundleConfig: { inventoryMode: 'reserved', components: [{ productSku: `${P}-X` }] },
  });
  expect(inner.status).toBe(201);
  const outer = await api.post('/products', {
    sku: `${P}-B`,
    productType: 'bundle',
    title: { value: 'outer kit' },
    price: 5,
    bundleConfig: { components: [{ productSku: `${P}-C` }] },
  });
  expect(outer.status).toBe(201);

  // control: the same change by PUT is refused (in-use)
  const { id: _i, createdAt: _c, updatedAt: _u, tenantId: _t, ...body } = inner.body;
  const put = await api.put(`/products/${inner.body.id}`, {
    ...body,
    bundleConfig: { ...body.bundleConfig, inventoryMode: 'calculated' },
  });
  expect([put.status, put.body.details?.reason]).toEqual([400, 'in-use']);

  const run = await api.post('/products/bulk/flow/execute', {
    selection: { skus: [`${P}-C`] },
    rules: [{ actions: [{ type: 'set', field: 'bundleConfig.inventoryMode', value: 'calculated' }] }],
  });
  const stored = (await api.get(`/products/${inner.body.id}`)).body;
  // now: 200 counts.changed 1, and the stored C is a calculated bundle named by bundle B
  expect({
    changed: run.body.counts?.changed,
    inventoryMode: stored.bundleConfig.inventoryMode,
  }).toEqual({ changed: 0, inventoryMode: 'reserved' });
});

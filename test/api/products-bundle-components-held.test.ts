import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A SKU a bundle names stays held: as DELETE refuses the product, a full update that drops the
 * variant or renames the SKU a bundle names is 400 validation-error with details.usedBy, so the
 * bundle never names a SKU nobody holds, nor one another product takes next.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `CBUN${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'bundle components held');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

const editable = (p: Record<string, unknown>) => {
  const { id: _i, createdAt: _c, updatedAt: _u, tenantId: _t, ...rest } = p;
  return rest;
};

async function created(body: Record<string, unknown>) {
  const res = await api.post('/products', body);
  if (res.status !== 201) throw new Error(`create → ${res.status} ${res.text}`);
  return res.body;
}

test('PUT that removes the variant a bundle names is refused like DELETE (400 validation-error, details.usedBy)', async () => {
  const shirt = await created({
    sku: `${P}-SHIRT`,
    title: { value: 'Shirt' },
    price: 10,
    variants: [{ sku: `${P}-SHIRT-M`, title: { value: 'M' }, price: 10, position: 0 }],
  });
  const bundle = await created({
    sku: `${P}-KIT`,
    title: { value: 'Kit' },
    price: 18,
    productType: 'bundle',
    bundleConfig: { components: [{ productSku: `${P}-SHIRT-M`, quantity: 2 }] },
  });
  // DELETE is refused, as documented
  expect((await api.delete(`/products/${shirt.id}`)).status).toBe(400);

  // the same variant dropped by a full update
  const res = await api.put(`/products/${shirt.id}`, { ...editable(shirt), variants: [] });
  // and the bundle, untouched, saved again as it is
  const again = await api.put(`/products/${bundle.id}`, editable(bundle));
  expect({
    put: res.status,
    code: res.body?.code,
    usedBy: res.body?.details?.usedBy,
    bundleSave: again.status,
    bundleSaveError: again.body?.message,
  }).toEqual({
    put: 400,
    code: 'validation-error',
    usedBy: [{ sku: bundle.sku, as: 'bundle' }],
    bundleSave: 200,
    bundleSaveError: undefined,
  });
});

test('PUT that renames the product SKU a bundle names is refused; the bundle never points at another product', async () => {
  const mug = await created({ sku: `${P}-MUG`, title: { value: 'Mug' }, price: 5 });
  const bundle = await created({
    sku: `${P}-GIFT`,
    title: { value: 'Gift box' },
    price: 9,
    productType: 'bundle',
    bundleConfig: { components: [{ productSku: `${P}-MUG` }] },
  });
  const res = await api.put(`/products/${mug.id}`, { ...editable(mug), sku: `${P}-MUG-OLD` });
  // the SKU the bundle names is then free: an unrelated product takes it, and the bundle contains that one
  const knife = await api.post('/products', { sku: `${P}-MUG`, title: { value: 'Chef knife' }, price: 30 });
  const holder = (await api.get(`/products/sku/${P}-MUG/exists`)).body;
  const box = (await api.get(`/products/${bundle.id}`)).body;
  expect({
    put: res.status,
    code: res.body?.code,
    knifeCreate: knife.status,
    bundleComponentHeldBy:
      holder.productId === mug.id ? 'the mug' : holder.productId === knife.body?.id ? 'the knife' : holder.productId,
    component: box.bundleConfig.components[0].productSku,
  }).toEqual({
    put: 400,
    code: 'validation-error',
    knifeCreate: 409,
    bundleComponentHeldBy: 'the mug',
    component: `${P}-MUG`,
  });
});

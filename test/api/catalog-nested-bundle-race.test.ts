import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * docs/catalog.md: a calculated bundle is never a component. A bundle written at the same moment
 * as its component's PUT turning it into a calculated bundle never lets both succeed. Before, each
 * check passed (neither saw the other's write yet) and a calculated bundle ended up inside a
 * bundle in most tries.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `RNB${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'review nested bundle race');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

test('control: one after the other, either order is refused', async () => {
  const part = await api.post('/products', { sku: `${P}-SX`, title: { value: 'part' }, price: 1 });
  const comp = await api.post('/products', { sku: `${P}-SC`, title: { value: 'c' }, price: 1 });
  const { id: _i, createdAt: _c, updatedAt: _u, tenantId: _t, ...body } = comp.body;
  const bundle = await api.post('/products', {
    sku: `${P}-SB`,
    productType: 'bundle',
    title: { value: 'kit' },
    price: 5,
    bundleConfig: { components: [{ productSku: comp.body.sku }] },
  });
  expect(bundle.status).toBe(201);
  const become = await api.put(`/products/${comp.body.id}`, {
    ...body,
    productType: 'bundle',
    bundleConfig: { components: [{ productSku: part.body.sku }] },
  });
  expect([become.status, become.body.details?.reason]).toEqual([400, 'in-use']);
});

test('a bundle created while its component becomes a calculated bundle: never both succeed', async () => {
  const part = await api.post('/products', { sku: `${P}-X`, title: { value: 'part' }, price: 1 });
  expect(part.status).toBe(201);
  const broken: string[] = [];
  for (let i = 0; i < 20 && broken.length === 0; i++) {
    const comp = await api.post('/products', { sku: `${P}-C${i}`, title: { value: 'component' }, price: 1 });
    expect(comp.status).toBe(201);
    const { id: _i, createdAt: _c, updatedAt: _u, tenantId: _t, ...body } = comp.body;
    const [bundle, become] = await Promise.all([
      api.post('/products', {
        sku: `${P}-B${i}`,
        productType: 'bundle',
        title: { value: 'kit' },
        price: 5,
        bundleConfig: { components: [{ productSku: comp.body.sku }] },
      }),
      api.put(`/products/${comp.body.id}`, {
        ...body,
        productType: 'bundle', // inventoryMode defaults to calculated
        bundleConfig: { components: [{ productSku: part.body.sku }] },
      }),
    ]);
    if (bundle.status === 201 && become.status === 200) {
      // confirm with a later read: the stored bundle names a calculated bundle
      const inner = (await api.get(`/products/${comp.body.id}`)).body;
      const outer = (await api.get(`/products/${bundle.body.id}`)).body;
      if (inner.productType === 'bundle' && (inner.bundleConfig.inventoryMode ?? 'calculated') === 'calculated')
        broken.push(
          `${outer.sku} names ${outer.bundleConfig.components[0].productSku}, a calculated bundle (${inner.bundleConfig.inventoryMode})`,
        );
    }
    expect([bundle.status, become.status].filter((s) => ![200, 201, 400, 409].includes(s))).toEqual([]);
  }
  expect(broken).toEqual([]);
});

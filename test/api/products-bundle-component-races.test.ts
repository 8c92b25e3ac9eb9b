import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A SKU a bundle names stays held, also when the bundle is written at the same time as the
 * component's delete or rename: never do both succeed (the bundle would name a SKU nobody holds).
 * The loser is a 400 (the bundle stored first, or the component leaving first) or a 409 (a bundle
 * write named the SKU moments ago and may not be stored yet).
 */
let deps: TestDeps;
let api: ApiClient;
const P = `BCR${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'bundle component races');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

test('a bundle created while its component is deleted: never both succeed', async () => {
  const broken: string[] = [];
  for (let i = 0; i < 25 && broken.length === 0; i++) {
    const comp = await api.post('/products', { sku: `${P}-C${i}`, title: { value: 'part' }, price: 1 });
    expect(comp.status).toBe(201);
    const [bundle, del] = await Promise.all([
      api.post('/products', {
        sku: `${P}-B${i}`,
        productType: 'bundle',
        title: { value: 'kit' },
        price: 5,
        bundleConfig: { components: [{ productSku: `${P}-C${i}` }] },
      }),
      api.delete(`/products/${comp.body.id}`),
    ]);
    if (bundle.status === 201 && del.status === 200) broken.push(`${P}-B${i} names deleted ${P}-C${i}`);
    // the loser is refused as a client error, never a 500
    expect([bundle.status, del.status].filter((s) => ![200, 201, 400, 409].includes(s))).toEqual([]);
  }
  expect(broken).toEqual([]);
});

test('a bundle created while its component is renamed: never both succeed', async () => {
  const broken: string[] = [];
  for (let i = 0; i < 25 && broken.length === 0; i++) {
    const comp = await api.post('/products', { sku: `${P}-R${i}`, title: { value: 'part' }, price: 1 });
    expect(comp.status).toBe(201);
    const { id: _id, createdAt: _c, updatedAt: _u, tenantId: _t, ...body } = comp.body;
    const [bundle, put] = await Promise.all([
      api.post('/products', {
        sku: `${P}-RB${i}`,
        productType: 'bundle',
        title: { value: 'kit' },
        price: 5,
        bundleConfig: { components: [{ productSku: `${P}-R${i}` }] },
      }),
      api.put(`/products/${comp.body.id}`, { ...body, sku: `${P}-R${i}-NEW` }),
    ]);
    if (bundle.status === 201 && put.status === 200) broken.push(`${P}-RB${i} names renamed ${P}-R${i}`);
    expect([bundle.status, put.status].filter((s) => ![200, 201, 400, 409].includes(s))).toEqual([]);
  }
  expect(broken).toEqual([]);
});

test('a single write releases its hold: the component of a stored bundle is refused with 400 in-use, then deletable once the bundle is gone', async () => {
  const comp = await api.post('/products', { sku: `${P}-H`, title: { value: 'part' }, price: 1 });
  const bundle = await api.post('/products', {
    sku: `${P}-HB`,
    productType: 'bundle',
    title: { value: 'kit' },
    price: 5,
    bundleConfig: { components: [{ productSku: `${P}-H` }] },
  });
  expect(bundle.status).toBe(201);
  const refused = await api.delete(`/products/${comp.body.id}`);
  expect([refused.status, refused.body.details?.reason]).toEqual([400, 'in-use']);
  expect((await api.delete(`/products/${bundle.body.id}`)).status).toBe(200);
  expect((await api.delete(`/products/${comp.body.id}`)).status).toBe(200);
});

test('a bundle naming a SKU nobody holds is a 400 naming the component', async () => {
  const res = await api.post('/products', {
    sku: `${P}-NB`,
    productType: 'bundle',
    title: { value: 'kit' },
    price: 5,
    bundleConfig: { components: [{ productSku: `${P}-NOBODY` }] },
  });
  expect([res.status, res.body.details?.[0]?.field ?? res.body.field]).toEqual([
    400,
    'bundleConfig.components.0.productSku',
  ]);
});

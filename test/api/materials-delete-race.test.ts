import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * DELETE of a material racing the assignment of a bill of materials that names it: never both
 * succeed, so no BOM names a material that does not exist. A product write holds the records it
 * names while it stores them (namedAt); a delete marks the record (deletingAt) before it looks who
 * names it: whichever marks second sees the other. Once a write has landed and let go, the delete
 * is judged by what is stored.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `MD${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'materials delete race')).key);
});
afterAll(() => deps.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a BOM assign racing DELETE of its material: never both 200, and no BOM names a missing material', async () => {
  const both: string[] = [];
  const dangling: string[] = [];
  for (let i = 0; i < 24; i++) {
    const m = `${P}-M-${++n}`;
    expect(
      (
        await api.post('/products/materials', {
          sku: m,
          title: 'Flour',
          baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
        })
      ).status,
    ).toBe(201);
    const psku = `${P}-P-${++n}`;
    expect((await api.post('/products', { sku: psku, title: { value: 'Bread' }, price: 10 })).status).toBe(201);
    const [bom, del] = await Promise.all([
      api.put(`/products/${psku}/bom`, {
        consumptionMode: 'manual',
        yield: { quantity: 1, unit: 'pza' },
        components: [{ materialSku: m, quantity: 1, unit: 'kg' }],
      }),
      sleep(i % 4).then(() => api.delete(`/products/materials/${m}`)),
    ]);
    if (bom.status === 200 && del.status === 200) both.push(m);
    const stored = await api.get(`/products/${psku}/bom`);
    if (stored.status === 200 && (await api.get(`/products/materials/${m}`)).status === 404) dangling.push(psku);
  }
  expect({ both, dangling }).toEqual({ both: [], dangling: [] });
});

test('a BOM removed through the API frees its material at once; a refused BOM write holds nothing', async () => {
  const m = `${P}-FREE-${++n}`;
  expect(
    (
      await api.post('/products/materials', {
        sku: m,
        title: 'Free',
        baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
      })
    ).status,
  ).toBe(201);
  const p = `${P}-FP-${n}`;
  expect((await api.post('/products', { sku: p, title: { value: 'P' }, price: 1 })).status).toBe(201);
  const bom = {
    consumptionMode: 'manual',
    yield: { quantity: 1, unit: 'pza' },
    components: [{ materialSku: m, quantity: 1, unit: 'kg' }],
  };
  expect((await api.put(`/products/${p}/bom`, bom)).status).toBe(200);
  expect((await api.delete(`/products/${p}/bom`)).status).toBe(200);
  // refused for another reason (an unknown unit): the material named beside it is not held
  const refused = await api.put(`/products/${p}/bom`, {
    ...bom,
    components: [{ materialSku: m, quantity: 1, unit: 'parsec' }],
  });
  expect(refused.status).toBe(400);
  expect((await api.delete(`/products/materials/${m}`)).status).toBe(200);
});

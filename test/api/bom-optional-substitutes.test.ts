import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * An optional component (`required: false`) short of stock is left out of a BOM run, unless
 * substitutes are allowed and one covers it: then the substitute gives what the primary lacks,
 * as for a required component.
 */
let deps: TestDeps;
let api: ApiClient;
let A: string;
const P = `LP${Date.now().toString(36).toUpperCase()}`;
let n = 0;
type Body = Record<string, unknown>;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  api = new ApiClient(tenant.key);
  A = systemLocationId(tenant.tenantId);
});
afterAll(() => deps.close());

async function material(tag: string, extra: Body = {}): Promise<string> {
  const sku = `${P}-${tag}-${++n}`.toUpperCase();
  const res = await api.post('/products/materials', {
    sku,
    title: `Material ${tag}`,
    baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
    alternativeUnits: [{ code: 'g', conversionFactor: 0.001 }],
    ...extra,
  });
  expect(res.status).toBe(201);
  return sku;
}
async function receive(sku: string, body: Body, location = A) {
  const res = await api.post(`/products/materials/${sku}/stock/${location}`, body);
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return res.body;
}
async function product(tag: string, bom: Body): Promise<string> {
  const sku = `${P}-${tag}-${++n}`.toUpperCase();
  const res = await api.post('/products', { sku, title: { value: `Product ${tag}` }, price: 10, billOfMaterials: bom });
  if (res.status !== 201) throw new Error(`${res.status} ${res.text}`);
  return sku;
}
const bomOf = (components: Body[], extra: Body = {}): Body => ({
  consumptionMode: 'manual',
  yield: { quantity: 1, unit: 'pza' },
  components,
  ...extra,
});

test('an optional component short of stock uses its substitute when substitutes are allowed', async () => {
  const prim = await material('OPTP', { costingMethod: 'fifo' });
  const sub = await material('OPTS', { costingMethod: 'fifo' });
  await receive(sub, { quantity: 5, lot: { costPerUnit: 1 } });
  const p = await product(
    'OPT',
    bomOf([
      {
        materialSku: prim,
        quantity: 1,
        unit: 'kg',
        required: false,
        substitutes: [{ materialSku: sub, conversionFactor: 1 }],
      },
    ]),
  );
  const res = await api.post(`/products/${p}/bom/consume`, { quantity: 1, referenceId: 'o1', allowSubstitutes: true });
  expect(res.status).toBe(200);
  expect(res.body.componentsConsumed).toEqual([expect.objectContaining({ materialSku: sub, quantity: 1 })]);
  expect((await api.get(`/products/materials/${sub}/stock/${A}`)).body.quantity).toBe(4);
  // without substitutes allowed it is left out, nothing taken
  const without = await api.post(`/products/${p}/bom/consume`, { quantity: 1, referenceId: 'o2' });
  expect([without.status, without.body.componentsConsumed]).toEqual([200, []]);
  expect((await api.get(`/products/materials/${sub}/stock/${A}`)).body.quantity).toBe(4);
});

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * A material's current cost is its costing method's over the lots live now: a lot that expired
 * since the last movement no longer counts, in the estimate, the material's currentCost and the
 * BOM's calculatedCost alike, so an estimate prices what a consumption really takes.
 */
let deps: TestDeps;
let api: ApiClient;
let A: string;
const P = `LD${Date.now().toString(36).toUpperCase()}`;
let n = 0;
type Body = Record<string, unknown>;
const DAY = 86_400_000;

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('fifo: once the oldest lot has expired, the estimate prices the lot consume really takes (2 kg of lot @ 2 → 4.00, not 20.00)', async () => {
  const flour = await material('FEFOEST', { costingMethod: 'fifo', lotTrackingEnabled: true });
  const soon = new Date(Date.now() + 2500).toISOString();
  await receive(flour, { quantity: 5, lot: { lotNumber: 'OLD', costPerUnit: 10, expirationDate: soon } });
  await receive(flour, {
    quantity: 5,
    lot: { lotNumber: 'NEW', costPerUnit: 2, expirationDate: new Date(Date.now() + 30 * DAY).toISOString() },
  });
  const bread = await product('BREAD', bomOf([{ materialSku: flour, quantity: 2, unit: 'kg' }]));
  await sleep(3000); // OLD has expired: it never leaves
  const est = await api.post('/products/materials/consumption/estimate', { productSku: bread, locationId: A });
  expect(est.status).toBe(200);
  // before the consumption, nothing moved since OLD expired: the reads price NEW too
  expect((await api.get(`/products/materials/${flour}`)).body.costing.currentCost.value).toBe(2);
  expect((await api.get(`/products/${bread}/bom`)).body.calculatedCost.value).toBe(4);
  const listed = (await api.get('/products/materials', { query: { term: flour } })).body.data as {
    sku: string;
    costing: { currentCost: { value: number } };
  }[];
  expect(listed.find((m) => m.sku === flour)?.costing.currentCost.value).toBe(2);
  const con = await api.post('/products/materials/consumption/consume', {
    productSku: bread,
    locationId: A,
    options: { referenceId: `${P}-est-1` },
  });
  expect(con.status).toBe(200);
  expect(con.body.consumed[0].lotsConsumed).toEqual([{ lotNumber: 'NEW', quantity: 2, costPerUnit: 2 }]);
  expect(con.body.totalCost).toBe(4);
  expect(est.body.totalCost).toBe(con.body.totalCost);
});

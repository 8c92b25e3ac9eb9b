import { ApiClient, type HttpResult } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/** A lot that expires at one location is noticed at the material's next movement anywhere: an alert opens there. */
let deps: TestDeps;
let api: ApiClient;
let A: string;
let B: string;
const P = `MA${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey(undefined, 'materials alerts expiry');
  api = new ApiClient(tenant.key);
  A = systemLocationId(tenant.tenantId);
  const second = await api.post('/locations', { name: `Store ${P}`, type: 'location' });
  expect(second.status).toBe(201);
  B = second.body.id;
});
afterAll(() => deps.close());

const limits = { minStock: 0, reorderPoint: 10, reorderQuantity: 5 };

async function material(tag: string): Promise<string> {
  const sku = `${P}-${tag}-${++n}`.toUpperCase();
  const res = await api.post('/products/materials', {
    sku,
    title: `Material ${tag}`,
    baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
    stockAlerts: limits,
  });
  expect(res.status).toBe(201);
  return sku;
}

async function ok(res: Promise<HttpResult> | HttpResult, status = 200): Promise<HttpResult> {
  const r = await res;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text}`);
  return r;
}
const receive = (sku: string, body: unknown, location = A) =>
  ok(api.post(`/products/materials/${sku}/stock/${location}`, body));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function alertsOf(sku: string) {
  const res = await ok(api.get('/products/materials/alerts', { query: { status: 'all', limit: 200 } }));
  return (res.body.data as { sku: string; status: string; locationId: string; availableAtClose: number | null }[])
    .filter((a) => a.sku === sku)
    .map((a) => ({ locationId: a.locationId, status: a.status, availableAtClose: a.availableAtClose }));
}

test('a lot expiring at B (available 15 → 0, reorder point 10) opens an alert at B at the next movement of the material', async () => {
  const sku = await material('expiry');
  await receive(sku, { quantity: 20 }, A);
  await receive(
    sku,
    { quantity: 15, lot: { lotNumber: 'E', expirationDate: new Date(Date.now() + 1500).toISOString() } },
    B,
  );
  expect(await alertsOf(sku)).toEqual([]);
  await sleep(2000);
  const atB = await ok(api.get(`/products/materials/${sku}/stock/${B}`));
  expect(atB.body.available).toBe(0);
  await receive(sku, { quantity: 1 }, A); // the next movement of this material
  expect(await alertsOf(sku)).toEqual([{ locationId: B, status: 'open', availableAtClose: null }]);
});

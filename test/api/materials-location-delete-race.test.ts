import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * A material receipt racing DELETE /locations/{id}: never both 200, and no material stock left at
 * a location that is gone (the receipt that landed after the delete looked takes its stock back
 * out and is 404).
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let A: string;
const P = `MLR${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey(undefined, 'materials location delete race');
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key);
  A = systemLocationId(tenantId);
});
afterAll(() => deps.close());

type Body = Record<string, unknown>;
const alertsOff = { minStock: 0, reorderPoint: 0, reorderQuantity: 0, alertEnabled: false };

async function material(tag: string, extra: Body = {}): Promise<string> {
  const sku = `${P}-${tag}-${++n}`.toUpperCase();
  const res = await api.post('/products/materials', {
    sku,
    title: `Material ${tag}`,
    baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
    stockAlerts: alertsOff,
    ...extra,
  });
  expect(res.status).toBe(201);
  return sku;
}

const withKey = (key?: string) => (key ? { headers: { 'idempotency-key': key } } : undefined);
const receive = (sku: string, body: unknown, location = A, key?: string) =>
  api.post(`/products/materials/${sku}/stock/${location}`, body, withKey(key));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a material receipt racing DELETE /locations/{id}', () => {
  // docs/materials.md: "a balance never goes below zero, and the movement is written in the same
  // update"; the location rules (shared/locations/service.ts refuseIfHeld, the spec's
  // bad-request/can't-delete "Service refused") keep a location holding material stock from being
  // deleted; test/api/locations-delete-stock-race.test.ts holds the same for products: "never both
  // 200, and never stock left at a location that is gone".
  test('never both 200: no material stock is left at a deleted location', async () => {
    const sku = await material('loc-race');
    const both: string[] = [];
    for (let i = 0; i < 30; i++) {
      const made = await api.post('/locations', { name: `Race ${P} ${i}`, type: 'location' });
      expect(made.status).toBe(201);
      const loc = made.body.id as string;
      const receipts = Array.from({ length: 4 }, (_, j) => sleep(j * 3).then(() => receive(sku, { quantity: 1 }, loc)));
      const del = sleep(i % 6).then(() => api.delete(`/locations/${loc}`));
      const [rs, d] = await Promise.all([Promise.all(receipts), del]);
      if (d.status === 200 && rs.some((r) => r.status === 200)) both.push(loc);
    }
    const stranded = [] as { loc: string; quantity: number }[];
    const doc = (await deps.db.collection('material_stock').findOne({ _id: `${tenantId}:${sku}` } as never)) as {
      locations: { locationId: string; quantity: number }[];
    } | null;
    for (const l of doc?.locations ?? []) {
      if (l.quantity > 0 && (await api.get(`/locations/${l.locationId}`)).status === 404)
        stranded.push({ loc: l.locationId, quantity: l.quantity });
    }
    expect({ both, stranded }).toEqual({ both: [], stranded: [] });
  });
});

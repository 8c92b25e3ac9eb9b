import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * An adjustment's approval racing DELETE /locations/{id}: the delete marks the location before it
 * looks for stock, and the approval reads the location after its write (waiting for a delete still
 * deciding), so one of them always sees the other. Never both 200, and never stock left at a
 * location that is gone; an approval refused so goes back to pending.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `ALR${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-A`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'adjustment location race')).key);
  expect((await api.post('/products', { sku: SKU, title: { value: 'x' }, price: 10, cost: 1 })).status).toBe(201);
});
afterAll(() => deps.close());

test('an approval racing a location delete: one of them is refused, and no stock is stranded', async () => {
  const outcomes = new Set<string>();
  for (let i = 0; i < 16; i++) {
    const made = await api.post('/locations', { name: `Race ${P} ${i}`, type: 'location' });
    expect(made.status).toBe(201);
    const loc = made.body.id as string;
    const adj = await api.post('/inventory/adjustments', {
      locationId: loc,
      sku: SKU,
      newQuantity: 5,
      reason: 'found',
    });
    expect(adj.status).toBe(201);
    const [approve, del] = await Promise.all([
      api.post(`/inventory/adjustments/${adj.body.id}/approve`),
      new Promise((r) => setTimeout(r, i % 4)).then(() => api.delete(`/locations/${loc}`)),
    ]);
    outcomes.add(`${approve.status}/${del.status}`);
    expect([approve.status, del.status]).not.toEqual([200, 200]);
    const held = (await api.get('/inventory', { query: { locationId: loc } })).body.items as { onHand: number }[];
    const onHand = held.reduce((n, l) => n + l.onHand, 0);
    if (del.status === 200) {
      expect((await api.get(`/locations/${loc}`)).status).toBe(404);
      expect(onHand).toBe(0);
      expect((await api.get(`/inventory/adjustments/${adj.body.id}`)).body.status).toBe('pending');
    } else {
      expect({ del: del.status, code: del.body.code }).toEqual({ del: 400, code: "bad-request/can't-delete" });
      expect(onHand).toBe(approve.status === 200 ? 5 : 0);
    }
  }
  for (const o of outcomes) expect(['200/400', '404/200', '409/200', '409/400']).toContain(o);
});

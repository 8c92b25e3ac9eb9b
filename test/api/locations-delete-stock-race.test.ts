import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A stock PUT racing DELETE /locations/{id}: the delete marks the location before it looks for
 * stock, and the PUT reads the location after its write, so one of them always sees the other.
 * Never both 200, and never stock left at a location that is gone.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `LDR${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-A`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'location delete race')).key);
  expect((await api.post('/products', { sku: SKU, title: { value: 'x' }, price: 10 })).status).toBe(201);
});
afterAll(() => deps.close());

test('a stock PUT racing a location delete: one of them is refused, and no stock is stranded', async () => {
  const outcomes = new Set<string>();
  for (let i = 0; i < 16; i++) {
    const made = await api.post('/locations', { name: `Race ${P} ${i}`, type: 'location' });
    expect(made.status).toBe(201);
    const loc = made.body.id as string;
    const [put, del] = await Promise.all([
      api.put(`/inventory/location/${loc}/product/${SKU}`, { stock: 5 }),
      new Promise((r) => setTimeout(r, i % 4)).then(() => api.delete(`/locations/${loc}`)),
    ]);
    outcomes.add(`${put.status}/${del.status}`);
    expect([put.status, del.status]).not.toEqual([200, 200]);
    const held = (await api.get('/inventory', { query: { locationId: loc } })).body.items as { onHand: number }[];
    const onHand = held.reduce((n, l) => n + l.onHand, 0);
    if (del.status === 200) {
      expect((await api.get(`/locations/${loc}`)).status).toBe(404);
      expect(onHand).toBe(0);
    } else {
      // the delete saw the stock; the PUT stands, or it had seen the delete's mark and took its stock back
      expect({ del: del.status, code: del.body.code }).toEqual({ del: 400, code: "bad-request/can't-delete" });
      expect((await api.get(`/locations/${loc}`)).status).toBe(200);
      expect(onHand).toBe(put.status === 200 ? 5 : 0);
    }
  }
  // the PUT first (the delete refused), the delete first (the PUT refused: 404 gone, 409 while the
  // delete decided), or each seeing the other (both refused, nothing held): never both done
  for (const o of outcomes) expect(['200/400', '404/200', '409/200', '409/400']).toContain(o);
});

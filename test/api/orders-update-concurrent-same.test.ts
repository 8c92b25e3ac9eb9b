import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * Concurrent identical PUTs of an order (a retry, a double submit) record one `updated` event: the
 * write is guarded by the values the change was decided on, so whichever lands second finds them
 * stored and records nothing.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `RVU${Date.now().toString(36).toUpperCase()}`;
beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'update same');
  api = new ApiClient(t.key);
  expect((await api.post('/products', { sku: `${P}-MUG`, title: { value: 'Mug' }, price: 10 })).status).toBe(201);
});
afterAll(() => deps.close());

test('20 concurrent identical PUTs (4 orders) change the notes once each: exactly one updated event per order', async () => {
  const counts: number[] = [];
  for (let round = 1; round <= 4; round++) {
    const res = await api.post('/orders', {
      externalId: `${P}-${round}`,
      customerInfo: { name: 'Ana' },
      notes: 'old',
      items: [{ sku: `${P}-MUG`, quantity: 1 }],
    });
    expect(res.status).toBe(201);
    const id = res.body.data._id;
    const all = await Promise.all(Array.from({ length: 20 }, () => api.put(`/orders/${id}`, { notes: 'ring twice' })));
    expect(all.map((r) => r.status)).toEqual(Array(20).fill(200));
    const log = (await api.get(`/orders/${id}/activity-log?limit=200`)).body.data as any[];
    counts.push(log.filter((e) => e.type === 'updated').length);
  }
  // now: e.g. [1, 15, 18, 17]: one `updated` event (and one order.updated webhook) per request that read the old notes
  expect(counts).toEqual([1, 1, 1, 1]);
});

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * POST /customers/{id}/redact is idempotent even when repeats arrive at once (a client retrying a
 * slow request): each order is redacted, and its audit log says so, once; the order write is
 * guarded by the redaction mark it read.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `RH2${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-MUG`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey()).key);
  const res = await api.post('/products', { sku: SKU, title: { value: 'Mug' }, price: 10, sellIfOutOfStock: true });
  expect(res.status).toBe(201);
});
afterAll(() => deps.close());

test('concurrent repeats of a redaction redact each order once', async () => {
  const duplicated: string[] = [];
  for (let round = 0; round < 5 && duplicated.length === 0; round++) {
    const c = await api.post('/customers', { name: `Ana ${round}`, phone: '555' });
    expect(c.status).toBe(201);
    const orderIds: string[] = [];
    for (let i = 0; i < 6; i++) {
      const o = await api.post('/orders', {
        externalId: `${P}-${++n}`,
        customerId: c.body.id,
        customerInfo: { name: 'Ana López', phone: '+52 55 1234' },
        shippingAddress: { street: 'Av. Reforma 1', city: 'CDMX', zipCode: '06600', country: 'MX' },
        items: [{ sku: SKU, quantity: 1 }],
      });
      expect(o.status).toBe(201);
      orderIds.push(o.body.data._id);
    }
    const answers = await Promise.all(Array.from({ length: 5 }, () => api.post(`/customers/${c.body.id}/redact`)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    for (const id of orderIds) {
      const log = (await api.get(`/orders/${id}/activity-log`)).body.data as any[];
      const redactions = log.filter((e) => e.type === 'customer_updated' && e.details?.redacted === true);
      if (redactions.length !== 1) duplicated.push(`${id}: ${redactions.length} redaction events`);
    }
  }
  expect(duplicated).toEqual([]);
});

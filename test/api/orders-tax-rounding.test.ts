import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * An order's tax is the taxable cents times the tenant's rate as written, rounded once, half up,
 * exactly: 30.00 at 7.25 % is 2.18 (2.175), 3.60 at 8.75 % is 0.32 (0.315), where binary floating
 * point made them 2.17 and 0.31.
 */
let deps: TestDeps;
const P = `RVT${Date.now().toString(36).toUpperCase()}`;
beforeAll(async () => {
  deps = await TestDeps.open();
});
afterAll(() => deps.close());

async function tenantAt(taxRate: number): Promise<ApiClient> {
  const tenant = await deps.tenancy.createTenant(`tax ${taxRate}`, { taxRate });
  const issued = await deps.tenancy.issueKey(tenant._id, ['orders:read', 'orders:create', 'products:create']);
  return new ApiClient(issued.key);
}

test('California 7.25 % on a 30.00 line is 2.175 → tax 2.18, total 32.18', async () => {
  const api = await tenantAt(0.0725);
  const sku = `${P}-CA`;
  expect((await api.post('/products', { sku, title: { value: 'Lamp' }, price: 30 })).status).toBe(201);
  const res = await api.post('/orders', {
    externalId: `${P}-ca`,
    customerInfo: { name: 'Ana' },
    items: [{ sku, quantity: 1 }],
  });
  expect(res.status).toBe(201);
  expect(res.body.data).toMatchObject({ subtotal: 30, taxRate: 0.0725, tax: 2.18, total: 32.18 });
});

test('8.75 % on 3.60 is 0.315 → tax 0.32, total 3.92', async () => {
  const api = await tenantAt(0.0875);
  const sku = `${P}-KS`;
  expect((await api.post('/products', { sku, title: { value: 'Soap' }, price: 3.6 })).status).toBe(201);
  const res = await api.post('/orders', {
    externalId: `${P}-ks`,
    customerInfo: { name: 'Ana' },
    items: [{ sku, quantity: 1 }],
  });
  expect(res.status).toBe(201);
  expect(res.body.data).toMatchObject({ subtotal: 3.6, tax: 0.32, total: 3.92 });
});

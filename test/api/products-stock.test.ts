import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { Ledger } from '../../shared/inventory/ledger';
import { locations, systemLocationId } from '../../shared/locations/locations';

/** Catalog reads that show stock from the ledger: extend=inventory, variants.stock, availableAt, /products/inventory, inventory-view. */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let main: string;
const store = `loc_store_${Date.now().toString(36)}`;
const P = `V${Date.now().toString(36).toUpperCase()}`;
const ids: Record<string, string> = {};

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key);
  main = systemLocationId(tenantId);
  const now = new Date();
  await new TenantDb(deps.db, tenantId).collection(locations).insertOne({
    _id: store,
    name: 'Store',
    type: 'location',
    isDefault: false,
    isSystem: false,
    managedBy: null,
    createdAt: now,
    updatedAt: now,
  });
  const bodies = [
    {
      sku: `${P}-TEE`,
      title: { value: 'Tee' },
      price: 10,
      status: 'active',
      variants: [
        { sku: `${P}-TEE-S`, title: { value: 'S' }, price: 10, position: 0 },
        { sku: `${P}-TEE-M`, title: { value: 'M' }, price: 10, position: 1 },
      ],
    },
    { sku: `${P}-MUG`, title: { value: 'Mug' }, price: 5, status: 'active' },
    { sku: `${P}-CAP`, title: { value: 'Cap' }, price: 7, status: 'active' },
  ];
  for (const body of bodies) {
    const res = await api.post('/products', body);
    expect(res.status).toBe(201);
    ids[body.sku] = res.body.id;
  }
  const ledger = new Ledger(new TenantDb(deps.db, tenantId));
  await ledger.apply({ sku: `${P}-TEE-S`, locationId: main, delta: 3, reason: 'restock', actor: 't' });
  await ledger.apply({ sku: `${P}-TEE-M`, locationId: store, delta: 4, reason: 'restock', actor: 't' });
  await ledger.apply({ sku: `${P}-MUG`, locationId: main, delta: 2, reason: 'restock', actor: 't' });
  await ledger.apply({ sku: `${P}-CAP`, locationId: store, delta: 1, reason: 'restock', actor: 't' });
  await ledger.apply({ sku: `${P}-CAP`, locationId: store, delta: -1, reason: 'sale', actor: 't' }); // none left
});
afterAll(() => deps.close());

test('GET /products/{id}?extend=inventory: inventory by location and variants[].stock from the ledger', async () => {
  const res = await api.get(`/products/${ids[`${P}-TEE`]}?extend=inventory`);
  expect(res.status).toBe(200);
  expect(res.body.inventory).toEqual({
    total: 7,
    byLocation: [
      { locationId: main, onHand: 3 },
      { locationId: store, onHand: 4 },
    ].sort((a, b) => a.locationId.localeCompare(b.locationId)),
  });
  expect(res.body.variants.map((v: { sku: string; stock: number }) => [v.sku, v.stock])).toEqual([
    [`${P}-TEE-S`, 3],
    [`${P}-TEE-M`, 4],
  ]);
  const plain = await api.get(`/products/${ids[`${P}-TEE`]}`);
  expect(plain.body.inventory).toBeUndefined();
});

test('GET /products?extend=inventory,variants: list items carry inventory and variant stock', async () => {
  const res = await api.get(`/products?q=${P}&extend=inventory,variants&limit=10`);
  expect(res.status).toBe(200);
  const mug = res.body.find((p: { sku: string }) => p.sku === `${P}-MUG`);
  expect(mug.inventory).toEqual({ total: 2, byLocation: [{ locationId: main, onHand: 2 }] });
  const tee = res.body.find((p: { sku: string }) => p.sku === `${P}-TEE`);
  expect(tee.variants.map((v: { stock: number }) => v.stock)).toEqual([3, 4]);
});

test('GET /products?availableAt=<location>: only products with stock there, in {data, meta}', async () => {
  const res = await api.get(`/products?availableAt=${store}`);
  expect(res.status).toBe(200);
  expect(res.body.data.map((p: { sku: string }) => p.sku)).toEqual([`${P}-TEE`]); // the cap's stock there is 0
  expect(res.body.meta).toEqual({ page: 1, limit: 50, total: 1 });
  const atMain = await api.get(`/products?availableAt=${main}&sort=sku`);
  expect(atMain.body.data.map((p: { sku: string }) => p.sku)).toEqual([`${P}-MUG`, `${P}-TEE`]);
  expectError(await api.get('/products?availableAt=loc_nope'), 404, 'not-found');
});

test('GET /products/inventory: stock at the location per product and variant; without locationId the plain 400 body', async () => {
  const res = await api.get(`/products/inventory?locationId=${store}`);
  expect(res.status).toBe(200);
  const tee = res.body.find((p: { sku: string }) => p.sku === `${P}-TEE`);
  expect(tee).toMatchObject({
    locationId: store,
    stock: 4,
    variants: [
      { sku: `${P}-TEE-S`, stock: 0 },
      { sku: `${P}-TEE-M`, stock: 4 },
    ],
  });
  const missing = await api.get('/products/inventory');
  expect(missing.status).toBe(400);
  expect(missing.body).toEqual({ error: 'Missing required query parameter: locationId' });
});

test('GET /products/inventory-view: {products, total}; missing-param and invalid-param', async () => {
  const res = await api.get(`/products/inventory-view?locationId=${main}&limit=10`);
  expect(res.status).toBe(200);
  expect(res.body.total).toBe(3);
  expect(res.body.products.find((p: { sku: string }) => p.sku === `${P}-MUG`)).toEqual({
    id: ids[`${P}-MUG`],
    sku: `${P}-MUG`,
    title: { value: 'Mug', translations: [] },
    status: 'active',
    price: 5,
    stock: 2,
    variants: [],
  });
  expectError(await api.get('/products/inventory-view'), 400, 'bad-request/missing-param');
  expectError(await api.get(`/products/inventory-view?locationId=${main}&limit=0`), 400, 'bad-request/invalid-param');
  expectError(await api.get(`/products/inventory-view?locationId=${main}&page=x`), 400, 'bad-request/invalid-param');
  expectError(await api.get('/products/inventory-view?locationId=loc_nope'), 400, 'bad-request/invalid-param');
});

test("another tenant sees none of this tenant's stock", async () => {
  const other = await deps.tenantWithKey();
  expectError(await api.as(other.key).get(`/products?availableAt=${store}`), 404, 'not-found');
  expectError(await api.as(other.key).get(`/products/${ids[`${P}-TEE`]}?extend=inventory`), 404, 'not-found');
  expectError(
    await api.as(other.key).get(`/products/inventory-view?locationId=${store}`),
    400,
    'bad-request/invalid-param',
  );
});

test.each(['/products/inventory', '/products/inventory-view'])(
  'page or limit 1e309 on GET %s is a 400, never a 500',
  async (path) => {
    for (const bad of [{ page: '1e309' }, { limit: '1e309' }]) {
      const res = await api.get(path, { query: { locationId: main, ...bad } });
      expectError(res, 400, path.endsWith('view') ? 'bad-request/invalid-param' : 'validation-error');
    }
  },
);

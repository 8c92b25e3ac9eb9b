import { expectError } from '../helpers/expect-error';
import { http, TestDeps, testStack } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { Ledger } from '../../shared/inventory/ledger';
import { locations, systemLocationId } from '../../shared/locations/locations';

/** Catalog reads that show stock from the ledger: extend=inventory, variants.stock, availableAt, /products/inventory, inventory-view. */
const { apiUrl } = testStack();
let deps: TestDeps;
let key: string;
let tenantId: string;
let main: string;
const store = `loc_store_${Date.now().toString(36)}`;
const P = `V${Date.now().toString(36).toUpperCase()}`;
const ids: Record<string, string> = {};

beforeAll(async () => {
  deps = await TestDeps.open();
  ({ key, tenantId } = await deps.tenantWithKey());
  main = systemLocationId(tenantId);
  const now = new Date();
  await new TenantDb(deps.db, tenantId)
    .collection(locations)
    .insertOne({
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
    const res = await http(apiUrl, 'POST', '/products', { key, body });
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
  const res = await http(apiUrl, 'GET', `/products/${ids[`${P}-TEE`]}?extend=inventory`, { key });
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
  const plain = await http(apiUrl, 'GET', `/products/${ids[`${P}-TEE`]}`, { key });
  expect(plain.body.inventory).toBeUndefined();
});

test('GET /products?extend=inventory,variants: list items carry inventory and variant stock', async () => {
  const res = await http(apiUrl, 'GET', `/products?q=${P}&extend=inventory,variants&limit=10`, { key });
  expect(res.status).toBe(200);
  const mug = res.body.find((p: { sku: string }) => p.sku === `${P}-MUG`);
  expect(mug.inventory).toEqual({ total: 2, byLocation: [{ locationId: main, onHand: 2 }] });
  const tee = res.body.find((p: { sku: string }) => p.sku === `${P}-TEE`);
  expect(tee.variants.map((v: { stock: number }) => v.stock)).toEqual([3, 4]);
});

test('GET /products?availableAt=<location>: only products with stock there, in {data, meta}', async () => {
  const res = await http(apiUrl, 'GET', `/products?availableAt=${store}`, { key });
  expect(res.status).toBe(200);
  expect(res.body.data.map((p: { sku: string }) => p.sku)).toEqual([`${P}-TEE`]); // the cap's stock there is 0
  expect(res.body.meta).toEqual({ page: 1, limit: 50, total: 1 });
  const atMain = await http(apiUrl, 'GET', `/products?availableAt=${main}&sort=sku`, { key });
  expect(atMain.body.data.map((p: { sku: string }) => p.sku)).toEqual([`${P}-MUG`, `${P}-TEE`]);
  expectError(await http(apiUrl, 'GET', '/products?availableAt=loc_nope', { key }), 404, 'not-found');
});

test('GET /products/inventory: stock at the location per product and variant; without locationId the plain 400 body', async () => {
  const res = await http(apiUrl, 'GET', `/products/inventory?locationId=${store}`, { key });
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
  const missing = await http(apiUrl, 'GET', '/products/inventory', { key });
  expect(missing.status).toBe(400);
  expect(missing.body).toEqual({ error: 'Missing required query parameter: locationId' });
});

test('GET /products/inventory-view: {products, total}; missing-param and invalid-param', async () => {
  const res = await http(apiUrl, 'GET', `/products/inventory-view?locationId=${main}&limit=10`, { key });
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
  expectError(await http(apiUrl, 'GET', '/products/inventory-view', { key }), 400, 'bad-request/missing-param');
  expectError(
    await http(apiUrl, 'GET', `/products/inventory-view?locationId=${main}&limit=0`, { key }),
    400,
    'bad-request/invalid-param',
  );
  expectError(
    await http(apiUrl, 'GET', `/products/inventory-view?locationId=${main}&page=x`, { key }),
    400,
    'bad-request/invalid-param',
  );
  expectError(
    await http(apiUrl, 'GET', '/products/inventory-view?locationId=loc_nope', { key }),
    400,
    'bad-request/invalid-param',
  );
});

test("another tenant sees none of this tenant's stock", async () => {
  const other = await deps.tenantWithKey();
  expectError(await http(apiUrl, 'GET', `/products?availableAt=${store}`, { key: other.key }), 404, 'not-found');
  expectError(
    await http(apiUrl, 'GET', `/products/${ids[`${P}-TEE`]}?extend=inventory`, { key: other.key }),
    404,
    'not-found',
  );
  expectError(
    await http(apiUrl, 'GET', `/products/inventory-view?locationId=${store}`, { key: other.key }),
    400,
    'bad-request/invalid-param',
  );
});

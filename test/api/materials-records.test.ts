import { ApiClient, type HttpResult } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import { SCOPES, type Scope } from '../../shared/auth/scopes';
import { systemLocationId } from '../../shared/locations/locations';
import { materialRoutes } from '../../api/materials/routes';

/**
 * Materials and supplies as records, through HTTP on the real API: create, read, partial update,
 * delete and its refusals, the list, validation, the tenant's one SKU space, the permission matrix
 * of every materials and supplies route, and tenant isolation.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let loc: string;
let loc2: string;
const P = `R${Date.now().toString(36).toUpperCase()}`; // this run's SKU prefix
let n = 0;
/** A new SKU of this run, lower-case (the API stores it upper-case). */
const nextSku = (tag = 'm') => `${P}-${tag}${++n}`.toLowerCase();

const MAT = '/products/materials';
const SUP = '/products/supplies';
type Kind = 'material' | 'supply';
const base = (kind: Kind) => (kind === 'material' ? MAT : SUP);

const materialBody = (sku: string, extra: Record<string, unknown> = {}) => ({
  sku,
  title: `Material ${sku}`,
  baseUnit: { code: 'kg', name: 'Kilogram' },
  ...extra,
});
const supplyBody = (sku: string, extra: Record<string, unknown> = {}) => ({ sku, title: `Supply ${sku}`, ...extra });
const bodyOf = (kind: Kind, sku: string, extra: Record<string, unknown> = {}) =>
  kind === 'material' ? materialBody(sku, extra) : supplyBody(sku, extra);

function must(res: HttpResult, status: number, what: string): any {
  if (res.status !== status) throw new Error(`${what} → ${res.status} ${res.text}`);
  return res.body;
}

async function createRecord(kind: Kind, extra: Record<string, unknown> = {}, client = api): Promise<any> {
  const sku = (extra.sku as string | undefined) ?? nextSku(kind === 'material' ? 'm' : 's');
  return must(await client.post(base(kind), bodyOf(kind, sku, extra)), 201, `create ${kind} ${sku}`);
}

async function receive(
  kind: Kind,
  sku: string,
  quantity: number,
  extra: Record<string, unknown> = {},
  location = loc,
  client = api,
): Promise<any> {
  const res = await client.post(`${base(kind)}/${sku}/stock/${location}`, { quantity, ...extra });
  return must(res, 200, `receive ${quantity} of ${sku} at ${location}`);
}

async function createProduct(body: Record<string, unknown>, client = api): Promise<any> {
  return must(await client.post('/products', { title: { value: 'A product' }, price: 10, ...body }), 201, 'product');
}

function expectInvalid(res: HttpResult, field: string): void {
  expectError(res, 400, 'validation-error');
  expect(res.body.field).toBe(field);
}

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key);
  loc = systemLocationId(tenantId);
  loc2 = must(await api.post('/locations', { name: `Store ${P}`, type: 'location' }), 201, 'location').id;
});
afterAll(() => deps.close());

describe('materials: create and read', () => {
  test('a minimal create answers 201 with the flat record: SKU upper-cased, every default filled', async () => {
    const sku = nextSku();
    const res = await api.post(MAT, { sku, title: '  Wheat flour ', baseUnit: { code: 'kg', name: 'Kilogram' } });
    expect(res.status).toBe(201);
    const created = res.body;
    expect(created).toEqual({
      sku: sku.toUpperCase(),
      title: { value: 'Wheat flour' },
      baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
      alternativeUnits: [],
      costing: {
        method: 'average',
        currentCost: { value: 0, currency: 'USD', perUnit: 'kg', calculatedAt: created.createdAt },
        costHistory: [{ cost: 0, currency: 'USD', date: created.createdAt, quantity: 0 }],
      },
      price: null,
      currency: 'USD',
      expiration: { expires: false, expirationPolicy: 'fefo' },
      suppliers: [],
      stockAlerts: { minStock: 0, reorderPoint: 0, reorderQuantity: 0, alertEmails: [], alertEnabled: true },
      lotTrackingEnabled: false,
      tags: [],
      status: 'active',
      createdAt: expect.any(String),
      updatedAt: created.createdAt,
    });
    expect(new Date(created.createdAt).getTime()).toBeGreaterThan(Date.now() - 60_000);
    // read back in any case: the same record
    for (const spelled of [sku, sku.toUpperCase()]) {
      const got = await api.get(`${MAT}/${spelled}`);
      expect(got.status).toBe(200);
      expect(got.body).toEqual(created);
    }
    expect((await api.get(`/v1${MAT}/${sku}`)).body).toEqual(created);
  });

  test('a full create keeps every field sent and fills the nested defaults', async () => {
    const sku = nextSku();
    const res = await api.post(MAT, {
      sku,
      title: { value: 'Mozzarella' },
      description: 'Fresh cheese',
      category: 'dairy',
      baseUnit: { code: 'g', name: 'Gram', precision: 0 },
      alternativeUnits: [
        { code: 'kg', name: 'Kilogram', conversionFactor: 1000 },
        { code: 'block', conversionFactor: 2500 },
      ],
      costingMethod: 'fifo',
      initialCost: 0.012,
      currency: 'MXN',
      price: 0.02,
      tags: ['cheese', 'cold'],
      status: 'draft',
      stockAlerts: { minStock: 500, reorderPoint: 1000, reorderQuantity: 5000 },
      expiration: { expires: true, shelfLifeDays: 21 },
      suppliers: [{ supplierId: 'sup-1', name: 'Dairy Co', cost: 0.011, currency: 'MXN', leadTimeDays: 2 }],
      lotTrackingEnabled: true,
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      sku: sku.toUpperCase(),
      title: { value: 'Mozzarella' },
      description: 'Fresh cheese',
      category: 'dairy',
      baseUnit: { code: 'g', name: 'Gram', precision: 0 },
      alternativeUnits: [
        { code: 'kg', name: 'Kilogram', conversionFactor: 1000 },
        { code: 'block', conversionFactor: 2500 },
      ],
      costing: {
        method: 'fifo',
        currentCost: { value: 0.012, currency: 'MXN', perUnit: 'g', calculatedAt: res.body.createdAt },
        costHistory: [{ cost: 0.012, currency: 'MXN', date: res.body.createdAt, quantity: 0 }],
      },
      price: 0.02,
      currency: 'MXN',
      expiration: { expires: true, shelfLifeDays: 21, expirationPolicy: 'fefo' },
      suppliers: [{ supplierId: 'sup-1', name: 'Dairy Co', cost: 0.011, currency: 'MXN', leadTimeDays: 2 }],
      stockAlerts: { minStock: 500, reorderPoint: 1000, reorderQuantity: 5000, alertEmails: [], alertEnabled: true },
      lotTrackingEnabled: true,
      tags: ['cheese', 'cold'],
      status: 'draft',
      createdAt: expect.any(String),
      updatedAt: res.body.createdAt,
    });
    expect((await api.get(`${MAT}/${sku.toUpperCase()}`)).body).toEqual(res.body);
  });

  test('an unknown SKU is 404 not-found; a material is not a supply and a supply not a material', async () => {
    expectError(await api.get(`${MAT}/${P}-nothing`), 404, 'not-found');
    const material = await createRecord('material');
    const supply = await createRecord('supply');
    expectError(await api.get(`${SUP}/${material.sku}`), 404, 'not-found');
    expectError(await api.get(`${MAT}/${supply.sku}`), 404, 'not-found');
  });
});

describe('supplies: create and read', () => {
  test('a minimal create answers 201 with the flat supply record and its defaults (no costing, lots or expiry)', async () => {
    const sku = nextSku('s');
    const res = await api.post(SUP, { sku, title: 'Pizza box' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      sku: sku.toUpperCase(),
      title: { value: 'Pizza box' },
      supplyCategory: 'other',
      consumptionUnit: 'pza',
      unitPrecision: 3,
      alternativeUnits: [],
      price: null,
      currency: 'USD',
      stockAlerts: { minStock: 0, reorderPoint: 0, reorderQuantity: 0, alertEmails: [], alertEnabled: true },
      tags: [],
      status: 'active',
      createdAt: expect.any(String),
      updatedAt: res.body.createdAt,
    });
    expect((await api.get(`${SUP}/${sku.toUpperCase()}`)).body).toEqual(res.body);
  });

  test('a full supply create keeps every field sent', async () => {
    const sku = nextSku('s');
    const body = {
      sku,
      title: { value: 'Shipping label' },
      description: '4x6 thermal',
      supplyCategory: 'labels',
      consumptionUnit: 'pc',
      unitPrecision: 0,
      alternativeUnits: [{ code: 'roll', name: 'Roll', conversionFactor: 500 }],
      price: 0.05,
      currency: 'EUR',
      tags: ['thermal'],
      status: 'disabled',
      stockAlerts: {
        minStock: 100,
        reorderPoint: 200,
        reorderQuantity: 1000,
        alertEmails: ['ops@example.com'],
        alertEnabled: false,
      },
      typicalUsagePerOrder: 1,
      shippingAssociation: 'parcel',
      preferredSupplierId: 'sup-9',
    };
    const res = await api.post(SUP, body);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      ...body,
      sku: sku.toUpperCase(),
      createdAt: expect.any(String),
      updatedAt: res.body.createdAt,
    });
  });
});

describe('partial update (PATCH)', () => {
  test('changes only the fields sent: stockAlerts merged, title from text, SKU of the path in any case', async () => {
    const m = await createRecord('material', {
      stockAlerts: { minStock: 2, reorderPoint: 5, reorderQuantity: 10, alertEmails: ['a@example.com'] },
      tags: ['x'],
      category: 'dry',
    });
    const res = await api.patch(`${MAT}/${m.sku.toLowerCase()}`, {
      sku: m.sku.toLowerCase(),
      title: 'Renamed',
      stockAlerts: { reorderPoint: 7 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...m,
      title: { value: 'Renamed' },
      stockAlerts: {
        minStock: 2,
        reorderPoint: 7,
        reorderQuantity: 10,
        alertEmails: ['a@example.com'],
        alertEnabled: true,
      },
      updatedAt: expect.any(String),
    });
    expect(new Date(res.body.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(m.updatedAt).getTime());
    expect((await api.get(`${MAT}/${m.sku}`)).body).toEqual(res.body);
    // a second patch builds on the first
    const again = await api.patch(`${MAT}/${m.sku}`, { tags: ['y', 'z'], status: 'disabled', description: 'kept' });
    expect(again.body).toMatchObject({
      title: { value: 'Renamed' },
      tags: ['y', 'z'],
      status: 'disabled',
      description: 'kept',
    });
    expect(again.body.stockAlerts.reorderPoint).toBe(7);
  });

  test('a supply PATCH merges stockAlerts and keeps the other fields', async () => {
    const s = await createRecord('supply', { supplyCategory: 'packaging' });
    const res = await api.patch(`${SUP}/${s.sku}`, { stockAlerts: { minStock: 3 }, title: { value: 'Box L' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...s,
      title: { value: 'Box L' },
      stockAlerts: { ...s.stockAlerts, minStock: 3 },
      updatedAt: expect.any(String),
    });
  });

  test('a new costingMethod recomputes currentCost at once from the lots in stock (10 kg at 2, then 10 kg at 4)', async () => {
    const m = await createRecord('material', { initialCost: 1 });
    await receive('material', m.sku, 10, { lot: { costPerUnit: 2 } });
    const after = await receive('material', m.sku, 10, { lot: { costPerUnit: 4 } }, loc2);
    expect(after.quantity).toBe(10);
    // average of 10 × 2 and 10 × 4
    expect((await api.get(`${MAT}/${m.sku}`)).body.costing.currentCost.value).toBe(3);
    const steps: [string, number][] = [
      ['fifo', 2], // the oldest live lot
      ['lifo', 4], // the newest live lot
      ['last_purchase', 4], // the latest receipt
      ['average', 3],
    ];
    for (const [method, cost] of steps) {
      const res = await api.patch(`${MAT}/${m.sku}`, { costingMethod: method });
      expect(res.status).toBe(200);
      expect(res.body.costing).toMatchObject({ method, currentCost: { value: cost, currency: 'USD', perUnit: 'kg' } });
      expect((await api.get(`${MAT}/${m.sku}`)).body.costing.currentCost.value).toBe(cost);
    }
    // the history is the receipts', not the patches'
    expect((await api.get(`${MAT}/${m.sku}`)).body.costing.costHistory.map((h: { cost: number }) => h.cost)).toEqual([
      1, 2, 4,
    ]);
  });

  test('a costingMethod change without stock keeps the initial cost as currentCost', async () => {
    const m = await createRecord('material', { initialCost: 1.25 });
    const res = await api.patch(`${MAT}/${m.sku}`, { costingMethod: 'lifo' });
    expect(res.status).toBe(200);
    expect(res.body.costing).toMatchObject({ method: 'lifo', currentCost: { value: 1.25 } });
  });

  test('a body SKU other than the path SKU is 400 validation-error on sku, and nothing changes', async () => {
    const m = await createRecord('material');
    const other = await createRecord('material');
    const res = await api.patch(`${MAT}/${m.sku}`, { sku: other.sku, title: 'Hijack' });
    expectInvalid(res, 'sku');
    expect((await api.get(`${MAT}/${m.sku}`)).body).toEqual(m);
    const s = await createRecord('supply');
    expectInvalid(await api.patch(`${SUP}/${s.sku}`, { sku: `${s.sku}-X` }), 'sku');
  });

  test('an empty body, an unknown field or a bad value is 400 validation-error; an unknown SKU is 404', async () => {
    const m = await createRecord('material');
    expectError(await api.patch(`${MAT}/${m.sku}`, {}), 400, 'validation-error');
    expectInvalid(await api.patch(`${MAT}/${m.sku}`, { colour: 'red' }), 'colour');
    expectInvalid(await api.patch(`${MAT}/${m.sku}`, { costingMethod: 'lowest' }), 'costingMethod');
    expectError(await api.patch(`${MAT}/${m.sku}`, { stockAlerts: {} }), 400, 'validation-error');
    expectInvalid(
      await api.patch(`${MAT}/${m.sku}`, { alternativeUnits: [{ code: 'KG', conversionFactor: 1 }] }),
      'alternativeUnits.0.code',
    );
    expect((await api.get(`${MAT}/${m.sku}`)).body).toEqual(m);
    expectError(await api.patch(`${MAT}/${P}-nothing`, { title: 'x' }), 404, 'not-found');
    const s = await createRecord('supply');
    expectError(await api.patch(`${SUP}/${s.sku}`, {}), 400, 'validation-error');
    expectError(await api.patch(`${SUP}/${P}-nothing`, { title: 'x' }), 404, 'not-found');
  });

  test('baseUnit code/precision and currency change freely before any stock and are refused (400) once stock exists', async () => {
    const m = await createRecord('material');
    const before = await api.patch(`${MAT}/${m.sku}`, { baseUnit: { precision: 2 } });
    expect(before.status).toBe(200);
    expect(before.body.baseUnit).toEqual({ code: 'kg', name: 'Kilogram', precision: 2 });
    const recoded = await api.patch(`${MAT}/${m.sku}`, { baseUnit: { code: 'g', name: 'Gram' }, currency: 'EUR' });
    expect(recoded.status).toBe(200);
    expect(recoded.body).toMatchObject({
      baseUnit: { code: 'g', name: 'Gram', precision: 2 },
      currency: 'EUR',
      costing: { currentCost: { currency: 'EUR', perUnit: 'g' } },
    });

    await receive('material', m.sku, 1.25);
    const locked = (await api.get(`${MAT}/${m.sku}`)).body;
    expectInvalid(await api.patch(`${MAT}/${m.sku}`, { baseUnit: { precision: 3 } }), 'baseUnit');
    expectInvalid(await api.patch(`${MAT}/${m.sku}`, { baseUnit: { code: 'kg' } }), 'baseUnit');
    expectInvalid(await api.patch(`${MAT}/${m.sku}`, { currency: 'USD' }), 'currency');
    expectInvalid(await api.patch(`${MAT}/${m.sku}`, { currency: 'USD', title: 'also refused' }), 'currency');
    expect((await api.get(`${MAT}/${m.sku}`)).body).toEqual(locked);
    // the same values again, the unit's name and other fields still change
    const same = await api.patch(`${MAT}/${m.sku}`, {
      baseUnit: { code: 'g', precision: 2, name: 'Gramme' },
      currency: 'EUR',
      title: 'Still editable',
    });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ baseUnit: { code: 'g', name: 'Gramme', precision: 2 }, currency: 'EUR' });
    expect((await api.get(`${MAT}/${m.sku}/stock`)).body).toMatchObject({ unit: 'g', totalQuantity: 1.25 });
  });

  test('a supply consumptionUnit, unitPrecision and currency change before stock, and are refused once stock exists', async () => {
    const s = await createRecord('supply');
    const before = await api.patch(`${SUP}/${s.sku}`, { consumptionUnit: 'box', unitPrecision: 0, currency: 'MXN' });
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ consumptionUnit: 'box', unitPrecision: 0, currency: 'MXN' });
    await receive('supply', s.sku, 4);
    expectInvalid(await api.patch(`${SUP}/${s.sku}`, { unitPrecision: 2 }), 'consumptionUnit');
    expectInvalid(await api.patch(`${SUP}/${s.sku}`, { consumptionUnit: 'pza' }), 'consumptionUnit');
    expectInvalid(await api.patch(`${SUP}/${s.sku}`, { currency: 'USD' }), 'currency');
    expect((await api.get(`${SUP}/${s.sku}`)).body).toMatchObject({
      consumptionUnit: 'box',
      unitPrecision: 0,
      currency: 'MXN',
    });
    expect((await api.patch(`${SUP}/${s.sku}`, { supplyCategory: 'shipping' })).body.supplyCategory).toBe('shipping');
  });
});

describe('delete', () => {
  test.each(['material', 'supply'] as const)(
    'a %s without stock is deleted (200 {success, message}), then 404, and its SKU is free again',
    async (kind) => {
      const r = await createRecord(kind);
      const res = await api.delete(`${base(kind)}/${r.sku.toLowerCase()}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, message: expect.stringContaining(r.sku) });
      expectError(await api.get(`${base(kind)}/${r.sku}`), 404, 'not-found');
      expectError(await api.delete(`${base(kind)}/${r.sku}`), 404, 'not-found');
      expectError(await api.patch(`${base(kind)}/${r.sku}`, { title: 'x' }), 404, 'not-found');
      expect((await api.get(`/products/sku/${r.sku}/exists`)).body).toEqual({
        sku: r.sku,
        exists: false,
        kind: null,
        productId: null,
      });
      // free for a record of either kind, or a product
      const again = await api.post(base(kind), bodyOf(kind, r.sku, { title: 'Second life' }));
      expect(again.status).toBe(201);
      expect(again.body.title).toEqual({ value: 'Second life' });
      expect((await api.delete(`${base(kind)}/${r.sku}`)).status).toBe(200);
      const product = await createProduct({ sku: r.sku });
      expect(product.sku).toBe(r.sku);
    },
  );

  test.each(['material', 'supply'] as const)(
    'a %s with stock is refused: 400 validation-error, details.reason has-stock naming the location; it stays',
    async (kind) => {
      const r = await createRecord(kind);
      await receive(kind, r.sku, 2, {}, loc2);
      const res = await api.delete(`${base(kind)}/${r.sku}`);
      expectError(res, 400, 'validation-error');
      expect(res.body.details).toEqual({ reason: 'has-stock', locations: [loc2] });
      expect(res.body.message).toContain(loc2);
      expect((await api.get(`${base(kind)}/${r.sku}`)).status).toBe(200);
      expect((await api.get(`${base(kind)}/${r.sku}/stock`)).body.totalQuantity).toBe(2);
      expect((await api.get('/products/sku/' + r.sku + '/exists')).body.kind).toBe(kind);
    },
  );

  test("a material in a product's bill of materials is refused: 400 in-use naming the product; deletable once the product is gone", async () => {
    const m = await createRecord('material');
    const sub = await createRecord('material');
    const productSku = nextSku('p').toUpperCase();
    const product = await createProduct({
      sku: productSku,
      billOfMaterials: {
        consumptionMode: 'manual',
        yield: { quantity: 1, unit: 'pza' },
        components: [
          {
            materialSku: m.sku.toLowerCase(),
            quantity: 1,
            unit: 'kg',
            substitutes: [{ materialSku: sub.sku.toLowerCase(), conversionFactor: 1 }],
          },
        ],
      },
    });
    for (const used of [m, sub]) {
      const res = await api.delete(`${MAT}/${used.sku}`);
      expectError(res, 400, 'validation-error');
      expect(res.body.details).toEqual({ reason: 'in-use', usedBy: [{ sku: productSku, as: 'bom' }] });
      expect(res.body.message).toContain(productSku);
      expect((await api.get(`${MAT}/${used.sku}`)).status).toBe(200);
    }
    expect((await api.delete(`/products/${product.id}`)).status).toBe(200);
    expect((await api.delete(`${MAT}/${m.sku}`)).status).toBe(200);
    expect((await api.delete(`${MAT}/${sub.sku}`)).status).toBe(200);
  });

  test.each(['material', 'supply'] as const)(
    "a %s a product's modifier consumes is refused: 400 in-use, as 'modifier'",
    async (kind) => {
      const r = await createRecord(kind);
      const productSku = nextSku('p').toUpperCase();
      await createProduct({
        sku: productSku,
        modifiersConfig: {
          enabled: true,
          groups: [
            {
              name: { value: 'Extras' },
              selectionRule: { minSelections: 0, maxSelections: 2 },
              modifiers: [
                { name: 'Nothing extra' },
                {
                  name: 'Extra cheese',
                  inventoryConsumption: [
                    { sku: r.sku.toLowerCase(), quantity: 1, unit: kind === 'material' ? 'kg' : 'pza' },
                  ],
                },
              ],
            },
          ],
        },
      });
      const res = await api.delete(`${base(kind)}/${r.sku}`);
      expectError(res, 400, 'validation-error');
      expect(res.body.details).toEqual({ reason: 'in-use', usedBy: [{ sku: productSku, as: 'modifier' }] });
      expect(res.body.message).toContain(productSku);
      expect((await api.get(`${base(kind)}/${r.sku}`)).status).toBe(200);
    },
  );

  test('an unknown SKU is 404 not-found', async () => {
    expectError(await api.delete(`${MAT}/${P}-nothing`), 404, 'not-found');
    expectError(await api.delete(`${SUP}/${P}-nothing`), 404, 'not-found');
  });
});

describe('list', () => {
  // a tenant of its own, so that totals are exact
  let lister: ApiClient;
  const skus: string[] = [];
  beforeAll(async () => {
    lister = new ApiClient((await deps.tenantWithKey()).key);
    const rows: [string, string, string, string][] = [
      ['flour-00', 'Wheat Flour 00', 'dry', 'active'],
      ['sugar', 'Cane sugar', 'dry', 'active'],
      ['milk', 'Whole milk', 'dairy', 'active'],
      ['butter', 'Butter (unsalted)', 'dairy', 'draft'],
      ['yeast', 'Dry yeast', 'dry', 'disabled'],
    ];
    for (const [tag, title, category, status] of rows) {
      const sku = `${P}-${tag}`;
      skus.push(sku.toUpperCase());
      await createRecord('material', { sku, title, category, status }, lister);
    }
    skus.sort();
  });

  test('defaults: page 0, limit 50, sorted by SKU, with total, totalPages and hasMore', async () => {
    const res = await lister.get(MAT);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: expect.any(Array),
      total: 5,
      page: 0,
      limit: 50,
      totalPages: 1,
      hasMore: false,
    });
    expect(res.body.data.map((r: { sku: string }) => r.sku)).toEqual(skus);
    expect(res.body.data[0]).toEqual((await lister.get(`${MAT}/${skus[0]}`)).body);
  });

  test('pages are 0-based: limit 2 gives pages 0..2, hasMore until the last; past the end is empty', async () => {
    const pages = [];
    for (const page of [0, 1, 2, 3]) {
      const res = await lister.get(MAT, { query: { page, limit: 2 } });
      expect(res.status).toBe(200);
      pages.push(res.body);
    }
    expect(pages.map((p) => [p.page, p.limit, p.total, p.totalPages, p.hasMore])).toEqual([
      [0, 2, 5, 3, true],
      [1, 2, 5, 3, true],
      [2, 2, 5, 3, false],
      [3, 2, 5, 3, false],
    ]);
    expect(pages.flatMap((p) => p.data.map((r: { sku: string }) => r.sku))).toEqual(skus);
  });

  test('filters: category, status, and term in the SKU or the title in any case', async () => {
    const skusOf = async (query: Record<string, string | number>) => {
      const res = await lister.get(MAT, { query });
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(res.body.data.length);
      return res.body.data.map((r: { sku: string }) => r.sku.slice(P.length + 1));
    };
    expect(await skusOf({ category: 'dairy' })).toEqual(['BUTTER', 'MILK']);
    expect(await skusOf({ status: 'active' })).toEqual(['FLOUR-00', 'MILK', 'SUGAR']);
    expect(await skusOf({ category: 'dry', status: 'disabled' })).toEqual(['YEAST']);
    expect(await skusOf({ term: 'flour-0' })).toEqual(['FLOUR-00']); // in the SKU, lower-case
    expect(await skusOf({ term: 'MILK' })).toEqual(['MILK']);
    expect(await skusOf({ term: 'dry ' })).toEqual(['YEAST']); // in the title, any case
    expect(await skusOf({ term: 'ane SUG' })).toEqual(['SUGAR']);
    expect(await skusOf({ term: '(unsalted)' })).toEqual(['BUTTER']); // regex characters are text
    expect(await skusOf({ term: '.*' })).toEqual([]);
    expect(await skusOf({ category: 'frozen' })).toEqual([]);
  });

  test('bad page or limit, an unknown status or an empty term is 400 validation-error', async () => {
    for (const [query, field] of [
      [{ page: -1 }, 'page'],
      [{ limit: 0 }, 'limit'],
      [{ limit: 201 }, 'limit'],
      [{ page: 'first' }, 'page'],
      [{ limit: 1.5 }, 'limit'],
      [{ status: 'archived' }, 'status'],
      [{ term: '' }, 'term'],
    ] as const) {
      const res = await lister.get(MAT, { query });
      expectError(res, 400, 'validation-error');
      expect(res.body.field).toBe(field);
      expectError(await lister.get(SUP, { query }), 400, 'validation-error');
    }
    expect((await lister.get(MAT, { query: { limit: 200 } })).body.limit).toBe(200);
  });

  test('supplies list: category is the supplyCategory; materials are not listed with supplies', async () => {
    const own = new ApiClient((await deps.tenantWithKey()).key);
    const a = await createRecord('supply', { supplyCategory: 'labels', title: 'Thermal label' }, own);
    const b = await createRecord('supply', { supplyCategory: 'cleaning', title: 'Soap' }, own);
    await createRecord('material', { category: 'labels' }, own);
    const all = await own.get(SUP);
    expect(all.body).toMatchObject({ total: 2, page: 0, limit: 50, totalPages: 1, hasMore: false });
    expect(all.body.data.map((r: { sku: string }) => r.sku)).toEqual([a.sku, b.sku].sort());
    expect((await own.get(SUP, { query: { category: 'labels' } })).body.data).toEqual([a]);
    expect((await own.get(SUP, { query: { term: 'SOAP' } })).body.data).toEqual([b]);
    expect((await own.get(MAT)).body.total).toBe(1);
    const empty = await new ApiClient((await deps.tenantWithKey()).key).get(SUP);
    expect(empty.body).toEqual({ data: [], total: 0, page: 0, limit: 50, totalPages: 0, hasMore: false });
  });
});

describe('validation on create', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['missing baseUnit', { baseUnit: undefined }, 'baseUnit'],
    ['baseUnit without a name', { baseUnit: { code: 'kg' } }, 'baseUnit.name'],
    ['precision 7', { baseUnit: { code: 'kg', name: 'Kilogram', precision: 7 } }, 'baseUnit.precision'],
    ['precision -1', { baseUnit: { code: 'kg', name: 'Kilogram', precision: -1 } }, 'baseUnit.precision'],
    [
      'an alternative unit named like the base unit in another case',
      { alternativeUnits: [{ code: 'KG', conversionFactor: 1 }] },
      'alternativeUnits.0.code',
    ],
    [
      'two alternative units with one code in two cases',
      {
        alternativeUnits: [
          { code: 'bag', conversionFactor: 25 },
          { code: 'box', conversionFactor: 10 },
          { code: 'Bag', conversionFactor: 50 },
        ],
      },
      'alternativeUnits.2.code',
    ],
    [
      'a conversionFactor of 0',
      { alternativeUnits: [{ code: 'bag', conversionFactor: 0 }] },
      'alternativeUnits.0.conversionFactor',
    ],
    ['an unknown field', { colour: 'white' }, 'colour'],
    [
      'an unknown nested field',
      { stockAlerts: { minStock: 1, reorderPoint: 2, reorderQuantity: 3, max: 9 } },
      'stockAlerts.max',
    ],
    [
      'stockAlerts without reorderQuantity',
      { stockAlerts: { minStock: 1, reorderPoint: 2 } },
      'stockAlerts.reorderQuantity',
    ],
    ['a currency that is not ISO 4217', { currency: 'ABC' }, 'currency'],
    ['a lower-case currency', { currency: 'usd' }, 'currency'],
    ['an unknown costing method', { costingMethod: 'hifo' }, 'costingMethod'],
    ['a negative initialCost', { initialCost: -1 }, 'initialCost'],
    ['an unknown status', { status: 'archived' }, 'status'],
    ['a SKU with a space', { sku: 'has space' }, 'sku'],
    ['no title', { title: undefined }, 'title'],
    ['a supplier without supplierId', { suppliers: [{ name: 'x' }] }, 'suppliers.0.supplierId'],
  ];
  test.each(cases)(
    'a material with %s is 400 validation-error naming the field; nothing is created',
    async (_w, extra, field) => {
      const sku = nextSku();
      const body: Record<string, unknown> = materialBody(sku, extra);
      for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
      const res = await api.post(MAT, body);
      expectError(res, 400, 'validation-error');
      expect(res.body.field).toBe(field);
      expect(res.body.fieldErrors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expectError(await api.get(`${MAT}/${sku}`), 404, 'not-found');
      expect((await api.get(`/products/sku/${sku}/exists`)).body.exists).toBe(false);
    },
  );

  const supplyCases: [string, Record<string, unknown>, string][] = [
    ['unitPrecision 7', { unitPrecision: 7 }, 'unitPrecision'],
    ['an unknown supplyCategory', { supplyCategory: 'food' }, 'supplyCategory'],
    [
      'an alternative unit named like the consumption unit',
      { alternativeUnits: [{ code: 'PZA', conversionFactor: 1 }] },
      'alternativeUnits.0.code',
    ],
    ['a material field', { baseUnit: { code: 'kg', name: 'Kilogram' } }, 'baseUnit'],
    ['a bad currency', { currency: 'EURO' }, 'currency'],
  ];
  test.each(supplyCases)('a supply with %s is 400 validation-error naming the field', async (_w, extra, field) => {
    const sku = nextSku('s');
    const res = await api.post(SUP, supplyBody(sku, extra));
    expectError(res, 400, 'validation-error');
    expect(res.body.field).toBe(field);
    expectError(await api.get(`${SUP}/${sku}`), 404, 'not-found');
  });

  test('no body at all is a 400', async () => {
    expect((await api.post(MAT)).status).toBe(400);
    expect((await api.post(SUP)).status).toBe(400);
  });
});

describe('one SKU space per tenant', () => {
  let productSku: string;
  let variantSku: string;
  let productId: string;
  beforeAll(async () => {
    productSku = nextSku('p').toUpperCase();
    variantSku = `${productSku}-L`;
    const product = await createProduct({
      sku: productSku,
      variants: [{ sku: variantSku, title: { value: 'L' }, price: 10, position: 0 }],
    });
    productId = product.id;
  });

  test.each(['material', 'supply'] as const)(
    "a %s with a product's or a variant's SKU (any case) is 400 duplicate; nothing is created",
    async (kind) => {
      for (const sku of [productSku.toLowerCase(), variantSku.toLowerCase()]) {
        const res = await api.post(base(kind), bodyOf(kind, sku));
        expectError(res, 400, 'duplicate');
        expect(res.body.field).toBe('sku');
        expect(res.body.message).toContain(sku.toUpperCase());
        expectError(await api.get(`${base(kind)}/${sku}`), 404, 'not-found');
      }
      expect((await api.get(`/products/sku/${variantSku}/exists`)).body).toEqual({
        sku: variantSku,
        exists: true,
        kind: 'variant',
        productId,
      });
    },
  );

  test('a second material with the same SKU in another case is 400 duplicate', async () => {
    const m = await createRecord('material');
    const res = await api.post(MAT, materialBody(m.sku.toLowerCase(), { title: 'Twin' }));
    expectError(res, 400, 'duplicate');
    expect((await api.get(`${MAT}/${m.sku}`)).body).toEqual(m);
  });

  test('a supply with a material SKU is 400 duplicate, and a material with a supply SKU too', async () => {
    const m = await createRecord('material');
    const s = await createRecord('supply');
    const supplyOverMaterial = await api.post(SUP, supplyBody(m.sku.toLowerCase()));
    expectError(supplyOverMaterial, 400, 'duplicate');
    const materialOverSupply = await api.post(MAT, materialBody(s.sku.toLowerCase()));
    expectError(materialOverSupply, 400, 'duplicate');
    expectError(await api.get(`${SUP}/${m.sku}`), 404, 'not-found');
    expectError(await api.get(`${MAT}/${s.sku}`), 404, 'not-found');
    expect((await api.get(`/products/sku/${m.sku}/exists`)).body.kind).toBe('material');
    expect((await api.get(`/products/sku/${s.sku}/exists`)).body.kind).toBe('supply');
    // each SKU is still held by its record: a product cannot take either
    for (const [sku, kind] of [
      [m.sku, 'material'],
      [s.sku, 'supply'],
    ]) {
      const product = await api.post('/products', { sku, title: { value: 'Clash' }, price: 1 });
      expectError(product, 409, 'duplicate-sku');
      expect(product.body.details.collidesWith).toBe(kind);
    }
  });

  test.each(['material', 'supply'] as const)(
    'ALERTS (any case) cannot be a %s SKU, since it would be the alerts route: 400 validation-error on sku',
    async (kind) => {
      const res = await api.post(base(kind), bodyOf(kind, 'alerts'));
      expectInvalid(res, 'sku');
      expect((await api.get(`${base(kind)}/alerts`)).body).toMatchObject({ data: expect.any(Array), page: 0 });
      expect((await api.get('/products/sku/ALERTS/exists')).body.exists).toBe(false);
    },
  );

  test.each(['material', 'supply'] as const)(
    "a product or a variant with a %s's SKU is 409 duplicate-sku collidesWith the kind; nothing is created",
    async (kind) => {
      const r = await createRecord(kind);
      const asProduct = await api.post('/products', { sku: r.sku.toLowerCase(), title: { value: 'Clash' }, price: 1 });
      expectError(asProduct, 409, 'duplicate-sku');
      expect(asProduct.body.details).toEqual({ sku: r.sku, collidesWith: kind });
      const asVariant = await api.post('/products', {
        sku: nextSku('p'),
        title: { value: 'Clash' },
        price: 1,
        variants: [{ sku: r.sku, title: { value: 'v' }, price: 1, position: 0 }],
      });
      expectError(asVariant, 409, 'duplicate-sku');
      expect(asVariant.body.details).toMatchObject({ sku: r.sku, collidesWith: kind });
      // the record still holds its SKU
      expect((await api.get(`${base(kind)}/${r.sku}`)).body).toEqual(r);
      expect((await api.get(`/products/sku/${r.sku.toLowerCase()}/exists`)).body).toEqual({
        sku: r.sku,
        exists: true,
        kind,
        productId: null,
      });
    },
  );

  test('exists reports product for a product SKU and nothing for a free one', async () => {
    expect((await api.get(`/products/sku/${productSku.toLowerCase()}/exists`)).body).toEqual({
      sku: productSku,
      exists: true,
      kind: 'product',
      productId,
    });
    expect((await api.get(`/products/sku/${P}-free/exists`)).body).toEqual({
      sku: `${P}-FREE`,
      exists: false,
      kind: null,
      productId: null,
    });
  });
});

describe('permission matrix', () => {
  interface Route {
    name: string;
    scope: Scope;
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
    ok: number;
    /** The path and body of one request; `fresh` is a new record of the kind (for create and delete). */
    request: (kind: Kind, sku: string, fresh: () => Promise<string>) => Promise<{ path: string; body?: unknown }>;
  }
  const routes: Route[] = [
    { name: 'list', scope: 'products:read', method: 'GET', ok: 200, request: async (k) => ({ path: base(k) }) },
    {
      name: 'create',
      scope: 'products:create',
      method: 'POST',
      ok: 201,
      request: async (k) => ({ path: base(k), body: bodyOf(k, nextSku(k === 'material' ? 'm' : 's')) }),
    },
    {
      name: 'get',
      scope: 'products:read',
      method: 'GET',
      ok: 200,
      request: async (k, sku) => ({ path: `${base(k)}/${sku}` }),
    },
    {
      name: 'patch',
      scope: 'products:update',
      method: 'PATCH',
      ok: 200,
      request: async (k, sku) => ({ path: `${base(k)}/${sku}`, body: { tags: ['patched'] } }),
    },
    {
      name: 'delete',
      scope: 'products:delete',
      method: 'DELETE',
      ok: 200,
      request: async (k, _sku, fresh) => ({ path: `${base(k)}/${await fresh()}` }),
    },
    {
      name: 'total stock',
      scope: 'products:read',
      method: 'GET',
      ok: 200,
      request: async (k, sku) => ({ path: `${base(k)}/${sku}/stock` }),
    },
    {
      name: 'stock at a location',
      scope: 'products:read',
      method: 'GET',
      ok: 200,
      request: async (k, sku) => ({ path: `${base(k)}/${sku}/stock/${loc}` }),
    },
    {
      name: 'receipt',
      scope: 'inventory:update',
      method: 'POST',
      ok: 200,
      request: async (k, sku) => ({ path: `${base(k)}/${sku}/stock/${loc}`, body: { quantity: 1 } }),
    },
    {
      name: 'transfer',
      scope: 'inventory:transfer',
      method: 'POST',
      ok: 200,
      request: async (k, sku) => ({
        path: `${base(k)}/transfer`,
        body: {
          [k === 'material' ? 'materialSku' : 'supplySku']: sku,
          fromLocationId: loc,
          toLocationId: loc2,
          quantity: 1,
        },
      }),
    },
    {
      name: 'alerts',
      scope: 'products:read',
      method: 'GET',
      ok: 200,
      request: async (k) => ({ path: `${base(k)}/alerts` }),
    },
    {
      name: 'movements',
      scope: 'products:read',
      method: 'GET',
      ok: 200,
      request: async (k, sku) => ({ path: `${base(k)}/${sku}/movements` }),
    },
  ];
  const only = new Map<Scope, string>();
  const allBut = new Map<Scope, string>();
  const stocked = new Map<Kind, string>();

  beforeAll(async () => {
    for (const scope of new Set(routes.map((r) => r.scope))) {
      only.set(scope, (await deps.tenancy.issueKey(tenantId, [scope])).key);
      allBut.set(
        scope,
        (
          await deps.tenancy.issueKey(
            tenantId,
            SCOPES.filter((s) => s !== scope),
          )
        ).key,
      );
    }
    for (const kind of ['material', 'supply'] as const) {
      const r = await createRecord(kind);
      await receive(kind, r.sku, 100);
      stocked.set(kind, r.sku);
    }
  });

  test('every materials and supplies route is in the matrix', () => {
    expect(materialRoutes).toHaveLength(routes.length * 2);
  });

  describe.each(['material', 'supply'] as const)('%s routes', (kind) => {
    const fresh = async () => (await createRecord(kind)).sku as string;

    test.each(routes.map((r) => [r.name, r] as const))(
      '%s: no key → 401; every scope but the one it needs → 403; that scope alone → success',
      async (_name, route) => {
        const sku = stocked.get(kind)!;
        const noKey = await api.as(null).request(route.method, (await route.request(kind, sku, fresh)).path);
        expectError(noKey, 401, 'auth:invalid_token');

        const denied = await route.request(kind, sku, fresh);
        const refused = await api
          .as(allBut.get(route.scope)!)
          .request(route.method, denied.path, { body: denied.body });
        expectError(refused, 403, 'auth:permission_denied');
        expect(refused.body.message).toContain(route.scope);
        if (route.name === 'delete') expect((await api.get(denied.path)).status).toBe(200); // nothing deleted

        const allowed = await route.request(kind, sku, fresh);
        const res = await api.as(only.get(route.scope)!).request(route.method, allowed.path, { body: allowed.body });
        expect({ status: res.status, body: res.status === route.ok ? 'ok' : res.body }).toEqual({
          status: route.ok,
          body: 'ok',
        });
      },
    );
  });
});

describe('tenant isolation', () => {
  let other: ApiClient;
  let otherLoc: string;
  let otherLoc2: string;
  const mine = new Map<Kind, any>();

  beforeAll(async () => {
    const t = await deps.tenantWithKey();
    other = new ApiClient(t.key);
    otherLoc = systemLocationId(t.tenantId);
    otherLoc2 = must(await other.post('/locations', { name: `Other ${P}`, type: 'location' }), 201, 'location').id;
    for (const kind of ['material', 'supply'] as const) {
      const r = await createRecord(kind, { stockAlerts: { minStock: 1, reorderPoint: 50, reorderQuantity: 10 } });
      await receive(kind, r.sku, 5); // below the reorder point: an open alert in this tenant
      mine.set(kind, (await api.get(`${base(kind)}/${r.sku}`)).body);
    }
  });

  test.each(['material', 'supply'] as const)(
    "another tenant gets 404 for every read and write of this tenant's %s, and nothing changes",
    async (kind) => {
      const r = mine.get(kind);
      const path = `${base(kind)}/${r.sku}`;
      const skuField = kind === 'material' ? 'materialSku' : 'supplySku';
      const attempts: [string, Promise<HttpResult>][] = [
        ['get', other.get(path)],
        ['patch', other.patch(path, { title: 'Stolen' })],
        ['delete', other.delete(path)],
        ['total stock', other.get(`${path}/stock`)],
        ['stock at its own location', other.get(`${path}/stock/${otherLoc}`)],
        ['stock at the owner location', other.get(`${path}/stock/${loc}`)],
        ['receipt at its own location', other.post(`${path}/stock/${otherLoc}`, { quantity: 1 })],
        ['receipt at the owner location', other.post(`${path}/stock/${loc}`, { quantity: 1 })],
        [
          'transfer between its own locations',
          other.post(`${base(kind)}/transfer`, {
            [skuField]: r.sku,
            fromLocationId: otherLoc,
            toLocationId: otherLoc2,
            quantity: 1,
          }),
        ],
        [
          'transfer between the owner locations',
          other.post(`${base(kind)}/transfer`, {
            [skuField]: r.sku,
            fromLocationId: loc,
            toLocationId: loc2,
            quantity: 1,
          }),
        ],
        ['movements', other.get(`${path}/movements`)],
      ];
      for (const [what, pending] of attempts) {
        const res = await pending;
        expect({ what, status: res.status, code: res.body?.code }).toEqual({ what, status: 404, code: 'not-found' });
      }
      expect((await api.get(path)).body).toEqual(r);
      expect((await api.get(`${path}/stock`)).body).toMatchObject({
        totalQuantity: 5,
        byLocation: [{ locationId: loc, quantity: 5 }],
      });
      expect((await api.get(`${path}/movements`)).body.total).toBe(1);
      // nothing of it in the other tenant's lists, alerts or SKU space
      expect((await other.get(base(kind), { query: { term: r.sku } })).body.total).toBe(0);
      expect((await other.get(`${base(kind)}/alerts`)).body.total).toBe(0);
      expect((await api.get(`${base(kind)}/alerts`, { query: { status: 'open' } })).body.data).toEqual(
        expect.arrayContaining([expect.objectContaining({ sku: r.sku, locationId: loc })]),
      );
      expect((await other.get(`/products/sku/${r.sku}/exists`)).body.exists).toBe(false);
    },
  );

  test.each(['material', 'supply'] as const)(
    'another tenant creates a %s with the same SKU for itself; each tenant sees its own',
    async (kind) => {
      const r = mine.get(kind);
      const theirs = await other.post(base(kind), bodyOf(kind, r.sku.toLowerCase(), { title: 'Theirs' }));
      expect(theirs.status).toBe(201);
      expect(theirs.body).toMatchObject({ sku: r.sku, title: { value: 'Theirs' } });
      expect((await other.get(`${base(kind)}/${r.sku}`)).body.title).toEqual({ value: 'Theirs' });
      expect((await other.get(`${base(kind)}/${r.sku}/stock`)).body).toMatchObject({
        totalQuantity: 0,
        byLocation: [],
      });
      expect((await api.get(`${base(kind)}/${r.sku}`)).body).toEqual(r);
      // its delete frees its SKU, not ours
      expect((await other.delete(`${base(kind)}/${r.sku}`)).status).toBe(200);
      expect((await api.get(`${base(kind)}/${r.sku}`)).body).toEqual(r);
      expect((await api.get(`/products/sku/${r.sku}/exists`)).body.kind).toBe(kind);
    },
  );
});

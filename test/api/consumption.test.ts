import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';
import { SCOPES, type Scope } from '../../shared/auth/scopes';
import { TenantDb } from '../../shared/db/tenant-db';
import { StockStore } from '../../shared/materials/stock';
import { materialConsumptions, type ConsumptionDoc } from '../../shared/consumption/collections';
import { movementIdOf } from '../../shared/consumption/engine';
import { finishStaleConsumptions } from '../../shared/consumption/recovery';
import { ConsumptionService } from '../../shared/consumption/service';

/**
 * Consumption of materials through HTTP on the real API: a BOM run (POST /products/{sku}/bom/consume)
 * takes real stock, all or nothing, exactly once per reference; the consumption routes check,
 * estimate and consume a product's BOM plus its selected modifiers' materials.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let A: string;
let B: string;
const P = `C${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key);
  A = systemLocationId(tenantId);
  const second = await api.post('/locations', { name: `Kitchen ${P}`, type: 'location' });
  expect(second.status).toBe(201);
  B = second.body.id;
});
afterAll(() => deps.close());

type Body = Record<string, unknown>;

async function material(tag: string, extra: Body = {}): Promise<string> {
  const sku = `${P}-${tag}-${++n}`.toUpperCase();
  const res = await api.post('/products/materials', {
    sku,
    title: `Material ${tag}`,
    baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
    alternativeUnits: [{ code: 'g', conversionFactor: 0.001 }],
    ...extra,
  });
  expect(res.status).toBe(201);
  return sku;
}

async function supply(tag: string, extra: Body = {}): Promise<string> {
  const sku = `${P}-${tag}-${++n}`.toUpperCase();
  const res = await api.post('/products/supplies', {
    sku,
    title: `Supply ${tag}`,
    consumptionUnit: 'pza',
    unitPrecision: 0,
    ...extra,
  });
  expect(res.status).toBe(201);
  return sku;
}

async function receive(sku: string, quantity: number, costPerUnit?: number, location = A, extra: Body = {}) {
  const path = sku.includes('-BOX-') ? 'supplies' : 'materials';
  const res = await api.post(`/products/${path}/${sku}/stock/${location}`, {
    quantity,
    ...(costPerUnit !== undefined ? { lot: { costPerUnit } } : {}),
    ...extra,
  });
  expect(res.status).toBe(200);
  return res.body;
}

async function onHand(sku: string, location = A): Promise<number> {
  const path = sku.includes('-BOX-') ? 'supplies' : 'materials';
  const res = await api.get(`/products/${path}/${sku}/stock/${location}`);
  return res.status === 404 ? 0 : res.body.quantity;
}

/** A product with a bill of materials (and optional modifiers); its SKU. */
async function product(tag: string, bom: Body | null, extra: Body = {}): Promise<string> {
  return (await productDoc(tag, bom, extra)).sku;
}

async function productDoc(tag: string, bom: Body | null, extra: Body = {}): Promise<any> {
  const sku = `${P}-${tag}-${++n}`.toUpperCase();
  const res = await api.post('/products', {
    sku,
    title: { value: `Product ${tag}` },
    price: 10,
    ...(bom ? { billOfMaterials: bom } : {}),
    ...extra,
  });
  if (res.status !== 201) throw new Error(`${res.status} ${res.text}`);
  return res.body;
}

const bomOf = (components: Body[], extra: Body = {}): Body => ({
  consumptionMode: 'manual',
  yield: { quantity: 1, unit: 'pza' },
  components,
  ...extra,
});

describe('a BOM run takes real stock', () => {
  it('deducts quantity × (quantity / yield) × (1 + wastage): 250 g per 12 cookies ×24 with 10% wastage takes 0.55 kg', async () => {
    const flour = await material('FLOUR', { costingMethod: 'fifo' });
    await receive(flour, 2, 1.5);
    const cookie = await product(
      'COOKIE',
      bomOf([{ materialSku: flour, quantity: 250, unit: 'g' }], {
        yield: { quantity: 12, unit: 'pza' },
        wastagePercent: 10,
      }),
    );
    const res = await api.post(`/products/${cookie}/bom/consume`, { quantity: 24, referenceId: 'batch-1' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      quantityProduced: 24,
      unit: 'pza',
      referenceId: 'batch-1',
      referenceType: 'production',
      replayed: false,
      totalCost: 0.83, // 0.55 kg × 1.50 = 0.825 → 0.83
      currency: 'USD',
      componentsConsumed: [
        { materialSku: flour, quantity: 0.55, unit: 'kg', costPerUnit: 1.509091, totalCost: 0.83, substituted: false },
      ],
    });
    expect(await onHand(flour)).toBe(1.45);
  });

  it('takes lots FIFO or LIFO per the material’s costing: 3 kg from lots of 2 kg at 1.00 and 2 kg at 2.00 cost 4.00 FIFO, 5.00 LIFO', async () => {
    const costs: Record<string, number> = {};
    for (const method of ['fifo', 'lifo']) {
      const sugar = await material(`SUGAR-${method}`, { costingMethod: method });
      await receive(sugar, 2, 1);
      await receive(sugar, 2, 2);
      const cake = await product(`CAKE-${method}`, bomOf([{ materialSku: sugar, quantity: 3, unit: 'kg' }]));
      const res = await api.post(`/products/${cake}/bom/consume`, { quantity: 1 });
      expect(res.status).toBe(200);
      costs[method] = res.body.totalCost;
      const lots = res.body.componentsConsumed[0].lotsConsumed;
      expect(lots.map((l: any) => [l.quantity, l.costPerUnit])).toEqual(
        method === 'fifo'
          ? [
              [2, 1],
              [1, 2],
            ]
          : [
              [2, 2],
              [1, 1],
            ],
      );
      expect(await onHand(sugar)).toBe(1);
    }
    expect(costs).toEqual({ fifo: 4, lifo: 5 });
  });

  it('refuses with insufficient-stock naming every shortfall and takes nothing', async () => {
    const a = await material('A');
    const b = await material('B');
    const c = await material('C');
    await receive(a, 5, 1);
    await receive(b, 0.1, 1);
    const p = await product(
      'ABC',
      bomOf([
        { materialSku: a, quantity: 1, unit: 'kg' },
        { materialSku: b, quantity: 1, unit: 'kg' },
        { materialSku: c, quantity: 1, unit: 'kg' },
      ]),
    );
    const res = await api.post(`/products/${p}/bom/consume`, { quantity: 2, referenceId: 'r1' });
    expectError(res, 400, 'insufficient-stock');
    expect(res.body.errors).toEqual([
      expect.objectContaining({ materialSku: b, required: 2, available: 0.1, unit: 'kg' }),
      expect.objectContaining({ materialSku: c, required: 2, available: 0, unit: 'kg' }),
    ]);
    expect(await onHand(a)).toBe(5);
    expect(await onHand(b)).toBe(0.1);
    // after a restock the same reference is a new attempt, and it applies
    await receive(b, 2, 1);
    await receive(c, 2, 1);
    const again = await api.post(`/products/${p}/bom/consume`, { quantity: 2, referenceId: 'r1' });
    expect(again.status).toBe(200);
    expect(await onHand(a)).toBe(3);
    expect(await onHand(b)).toBe(0.1);
    expect(await onHand(c)).toBe(0);
  });

  it('uses a substitute only when allowed and the primary is short: the primary gives what it has', async () => {
    const butter = await material('BUTTER', { costingMethod: 'fifo' });
    const marg = await material('MARG', { costingMethod: 'fifo' });
    await receive(butter, 0.3, 10);
    await receive(marg, 5, 4);
    const p = await product(
      'CROISSANT',
      bomOf([
        { materialSku: butter, quantity: 0.5, unit: 'kg', substitutes: [{ materialSku: marg, conversionFactor: 1.2 }] },
      ]),
    );
    const refused = await api.post(`/products/${p}/bom/consume`, { quantity: 1 });
    expectError(refused, 400, 'insufficient-stock');
    const res = await api.post(`/products/${p}/bom/consume`, { quantity: 1, allowSubstitutes: true });
    expect(res.status).toBe(200);
    // 0.3 kg of butter at 10.00 = 3.00; the missing 0.2 kg as 0.24 kg of margarine at 4.00 = 0.96
    expect(res.body.componentsConsumed).toEqual([
      expect.objectContaining({ materialSku: butter, quantity: 0.3, totalCost: 3, substituted: false }),
      expect.objectContaining({ materialSku: marg, quantity: 0.24, totalCost: 0.96, substituted: true }),
    ]);
    expect(res.body.totalCost).toBe(3.96);
    expect(await onHand(butter)).toBe(0);
    expect(await onHand(marg)).toBe(4.76);
  });

  it('is exactly once per (product, referenceType, referenceId): 10 concurrent identical requests take once', async () => {
    const milk = await material('MILK');
    const box = await supply('BOX');
    await receive(milk, 10, 1);
    await receive(box, 10);
    const p = await product(
      'LATTE',
      bomOf([
        { materialSku: milk, quantity: 0.25, unit: 'kg' },
        { materialSku: box, quantity: 1, unit: 'pza' },
      ]),
    );
    const body = { quantity: 2, referenceId: 'order-77', referenceType: 'order' };
    const all = await Promise.all(Array.from({ length: 10 }, () => api.post(`/products/${p}/bom/consume`, body)));
    expect(all.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(new Set(all.map((r) => r.body.consumptionId)).size).toBe(1);
    // the request that recorded it answers replayed false, whichever request's takes decided it
    expect(all.filter((r) => r.body.replayed === false).length).toBe(1);
    expect(await onHand(milk)).toBe(9.5);
    expect(await onHand(box)).toBe(8);
    // a later retry answers the first result and takes nothing; another referenceType is another consumption
    const retry = await api.post(`/products/${p}/bom/consume`, body);
    expect(retry.body).toMatchObject({ replayed: true, consumptionId: all[0].body.consumptionId });
    const other = await api.post(`/products/${p}/bom/consume`, { ...body, referenceType: 'sample' });
    expect(other.body.replayed).toBe(false);
    expect(await onHand(milk)).toBe(9);
    const movements = await api.get(`/products/materials/${milk}/movements`);
    expect(movements.body.data.filter((m: any) => m.type === 'consumption')).toHaveLength(2);
  });

  it('a retry answers the first result even when the stock could no longer cover it', async () => {
    const flour = await material('FLOUR');
    await receive(flour, 1, 1);
    const p = await product('BREAD', bomOf([{ materialSku: flour, quantity: 1, unit: 'kg' }]));
    const body = { quantity: 1, referenceId: 'batch-1' };
    const first = await api.post(`/products/${p}/bom/consume`, body);
    expect(first.status).toBe(200);
    expect(await onHand(flour)).toBe(0);
    const retry = await api.post(`/products/${p}/bom/consume`, body);
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ replayed: true, consumptionId: first.body.consumptionId });
    expectError(
      await api.post(`/products/${p}/bom/consume`, { ...body, referenceId: 'batch-2' }),
      400,
      'insufficient-stock',
    );
    expect(await onHand(flour)).toBe(0);
  });

  it('a process planning on the stock it last wrote ends right after another process moved that stock', async () => {
    // this test's process runs BOMs (it remembers the stock it wrote); the API moves stock in between
    const oats = await material('OATS');
    const milk = await material('MILK');
    await receive(oats, 2, 1);
    await receive(milk, 2, 1);
    const p = await product(
      'PORRIDGE',
      bomOf([
        { materialSku: oats, quantity: 1, unit: 'kg' },
        { materialSku: milk, quantity: 0.5, unit: 'kg' },
      ]),
    );
    const here = new ConsumptionService(new TenantDb(deps.db, tenantId), 'test-process');
    await here.runBom(p, { quantity: 1, referenceId: 'r1' }); // remembers oats 1 kg, milk 1.5 kg
    await receive(oats, 1, 1); // oats 2 kg, unseen here
    // the remembered 1 kg of oats is short of 2: planned again on a fresh read, it goes through
    const second = await here.runBom(p, { quantity: 2, referenceId: 'r2' });
    expect(second.componentsConsumed.map((c) => c.quantity)).toEqual([2, 1]);
    expect(await onHand(oats)).toBe(0);
    await receive(oats, 5, 1);
    await here.runBom(p, { quantity: 1, referenceId: 'r3' }); // remembers oats 4 kg, milk 0
    await receive(milk, 0.5, 1);
    await here.runBom(p, { quantity: 1, referenceId: 'r4' }); // remembers oats 3 kg, milk 0
    const tenantDb = new TenantDb(deps.db, tenantId);
    await new StockStore(tenantDb, 'material').receive(milk, { actor: 'test-process', locationId: A, quantity: 1 });
    const move = await api.post('/products/materials/transfer', {
      materialSku: oats,
      fromLocationId: A,
      toLocationId: B,
      quantity: 3,
    });
    expect(move.status).toBe(200); // oats 0 kg here, unseen by this process
    // the remembered 3 kg of oats would cover it; the take, on a fresh read, refuses and nothing is taken
    const refused = await here.runBom(p, { quantity: 1, referenceId: 'r5' }).catch((err: unknown) => err);
    expect(refused).toMatchObject({ status: 400, code: 'insufficient-stock' });
    expect(await onHand(oats)).toBe(0);
    expect(await onHand(milk)).toBe(1);
  });

  it('takes from the location asked (default: the tenant’s default location)', async () => {
    const oil = await material('OIL');
    await receive(oil, 1, 1, B);
    const p = await product('FRIES', bomOf([{ materialSku: oil, quantity: 0.1, unit: 'kg' }]));
    expectError(await api.post(`/products/${p}/bom/consume`, { quantity: 1 }), 400, 'insufficient-stock');
    const res = await api.post(`/products/${p}/bom/consume`, { quantity: 1, locationId: B });
    expect(res.status).toBe(200);
    expect(await onHand(oil, B)).toBe(0.9);
    expectError(
      await api.post(`/products/${p}/bom/consume`, { quantity: 1, locationId: 'loc_nope' }),
      404,
      'not-found',
    );
  });

  it('answers 404 for a product without a BOM, an unknown product, and 400 for bad input', async () => {
    const plain = await product('PLAIN', null);
    const res = await api.post(`/products/${plain}/bom/consume`, { quantity: 1 });
    expectError(res, 404, 'not-found');
    expect(res.body.message).toBe('Product or BOM not found');
    expectError(await api.post(`/products/${P}-NOPE/bom/consume`, { quantity: 1 }), 404, 'not-found');
    expectError(await api.post(`/products/${plain}/bom/consume`, { quantity: 0 }), 400, 'validation-error');
    expectError(await api.post(`/products/${plain}/bom/consume`, {}), 400, 'validation-error');
    expectError(
      await api.post(`/products/${plain}/bom/consume`, { quantity: 1, referenceType: 'gift' }),
      400,
      'validation-error',
    );
  });

  it('another tenant’s product is 404', async () => {
    const flour = await material('XT');
    await receive(flour, 1, 1);
    const p = await product('XTP', bomOf([{ materialSku: flour, quantity: 0.1, unit: 'kg' }]));
    const stranger = new ApiClient((await deps.tenantWithKey()).key);
    expectError(await stranger.post(`/products/${p}/bom/consume`, { quantity: 1 }), 404, 'not-found');
    expect(await onHand(flour)).toBe(1);
  });
});

describe('consumption routes', () => {
  let cheese: string;
  let dough: string;
  let pizza: string;
  let groupId: string;
  let extraCheese: string;

  beforeAll(async () => {
    cheese = await material('CHEESE', { costingMethod: 'average' });
    dough = await material('DOUGH', { costingMethod: 'fifo' });
    await receive(cheese, 1, 8);
    await receive(dough, 3, 2);
    const doc = await productDoc(
      'PIZZA',
      bomOf([
        { materialSku: dough, quantity: 300, unit: 'g' },
        { materialSku: cheese, quantity: 100, unit: 'g' },
      ]),
      {
        modifiersConfig: {
          enabled: true,
          groups: [
            {
              name: { value: 'Extras' },
              selectionRule: { minSelections: 0, maxSelections: 3, allowDuplicates: true, maxPerModifier: 3 },
              modifiers: [{ name: 'Extra cheese', inventoryConsumption: [{ sku: cheese, quantity: 50, unit: 'g' }] }],
            },
          ],
        },
      },
    );
    pizza = doc.sku;
    groupId = doc.modifiersConfig.groups[0].id;
    extraCheese = doc.modifiersConfig.groups[0].modifiers[0].id;
  });

  it('check sums the BOM and the selected modifiers per material, and takes nothing', async () => {
    const res = await api.post('/products/materials/consumption/check', {
      productSku: pizza,
      locationId: A,
      quantity: 2,
      selectedModifiers: [{ groupId, modifierId: extraCheese, quantity: 2 }],
    });
    expect(res.status).toBe(200);
    expect(res.body.available).toBe(true);
    expect(res.body.calculation.totalMaterials).toBe(2);
    expect(res.body.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ materialSku: dough, required: 0.6, available: 3, sufficient: true }),
        // 2 × 100 g + 2 × 2 × 50 g = 0.4 kg
        expect.objectContaining({ materialSku: cheese, required: 0.4, available: 1, sufficient: true }),
      ]),
    );
    expect(await onHand(cheese)).toBe(1);
  });

  it('estimate prices each material at its current cost', async () => {
    const res = await api.post('/products/materials/consumption/estimate', { productSku: pizza, locationId: A });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ totalCost: 1.4, currency: 'USD' }); // 0.3 × 2 + 0.1 × 8
    expect(res.body.breakdown).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ materialSku: dough, quantity: 0.3, costPerUnit: 2, totalCost: 0.6 }),
        expect.objectContaining({ materialSku: cheese, quantity: 0.1, costPerUnit: 8, totalCost: 0.8 }),
      ]),
    );
  });

  it('consume takes all of it, exactly once per options.referenceId; too much is consumption-failed with nothing taken', async () => {
    const body = {
      productSku: pizza,
      locationId: A,
      selectedModifiers: [{ groupId, modifierId: extraCheese }],
      options: { referenceId: `ticket-${P}` },
    };
    const res = await api.post('/products/materials/consumption/consume', body);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, replayed: false, errors: [], currency: 'USD' });
    expect(res.body.consumed).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ materialSku: dough, quantity: 0.3 }),
        expect.objectContaining({ materialSku: cheese, quantity: 0.15 }),
      ]),
    );
    const again = await api.post('/products/materials/consumption/consume', body);
    expect(again.body.replayed).toBe(true);
    expect(await onHand(cheese)).toBe(0.85);
    expect(await onHand(dough)).toBe(2.7);

    const tooMuch = await api.post('/products/materials/consumption/consume', { ...body, quantity: 10, options: {} });
    expectError(tooMuch, 400, 'consumption-failed');
    expect(tooMuch.body.errors).toEqual([
      expect.objectContaining({ materialSku: dough, required: 3, available: 2.7 }),
      expect.objectContaining({ materialSku: cheese, required: 1.5, available: 0.85 }),
    ]);
    expect(await onHand(cheese)).toBe(0.85);
  });

  it('a product without BOM or consuming modifiers is a zero-component result; unknown product and modifier ids are refused', async () => {
    const plain = await product('NOTHING', null);
    const check = await api.post('/products/materials/consumption/check', { productSku: plain, locationId: A });
    expect(check.status).toBe(200);
    expect(check.body).toMatchObject({
      available: true,
      calculation: { totalMaterials: 0, components: [], byMaterial: [] },
    });
    const consume = await api.post('/products/materials/consumption/consume', { productSku: plain, locationId: A });
    expect(consume.body).toMatchObject({ success: true, consumed: [], totalCost: 0 });
    expectError(
      await api.post('/products/materials/consumption/check', { productSku: `${P}-NONE`, locationId: A }),
      404,
      'not-found',
    );
    expectError(
      await api.post('/products/materials/consumption/check', {
        productSku: pizza,
        locationId: A,
        selectedModifiers: [{ groupId, modifierId: 'nope' }],
      }),
      400,
      'validation-error',
    );
    expectError(
      await api.post('/products/materials/consumption/check', { productSku: pizza }),
      400,
      'validation-error',
    );
    // another tenant's product is not found, on every route
    const stranger = new ApiClient((await deps.tenantWithKey()).key);
    for (const route of ['check', 'estimate', 'consume'])
      expectError(
        await stranger.post(`/products/materials/consumption/${route}`, { productSku: pizza, locationId: A }),
        404,
        'not-found',
      );
  });

  it('a selection the product’s rules refuse (an unavailable modifier, too many) takes nothing on any route', async () => {
    const salt = await material('SALT');
    await receive(salt, 1, 1);
    const doc = await productDoc('FRIES', null, {
      modifiersConfig: {
        enabled: true,
        groups: [
          {
            name: { value: 'Extras' },
            selectionRule: { minSelections: 0, maxSelections: 1 },
            modifiers: [
              { name: 'Salt', available: false, inventoryConsumption: [{ sku: salt, quantity: 100, unit: 'g' }] },
              { name: 'Pepper', inventoryConsumption: [{ sku: salt, quantity: 10, unit: 'g' }] },
              { name: 'Vinegar', inventoryConsumption: [] },
            ],
          },
        ],
      },
    });
    const [g] = doc.modifiersConfig.groups;
    const [unavailable, pepper, vinegar] = g.modifiers.map((m: { id: string }) => m.id);
    const pick = (...ids: string[]) => ids.map((modifierId) => ({ groupId: g.id, modifierId }));
    for (const selectedModifiers of [pick(unavailable), pick(pepper, vinegar)])
      for (const route of ['check', 'estimate', 'consume']) {
        const res = await api.post(`/products/materials/consumption/${route}`, {
          productSku: doc.sku,
          locationId: A,
          selectedModifiers,
        });
        expectError(res, 400, 'validation-error');
        expect(res.body.details.errors.length).toBeGreaterThan(0);
      }
    expect((await api.get(`/products/materials/${salt}/stock/${A}`)).body.quantity).toBe(1);
    const ok = await api.post('/products/materials/consumption/consume', {
      productSku: doc.sku,
      locationId: A,
      selectedModifiers: pick(pepper),
    });
    expect(ok.body).toMatchObject({ success: true });
    expect((await api.get(`/products/materials/${salt}/stock/${A}`)).body.quantity).toBe(0.99);
  });

  it.each([
    ['/products/materials/consumption/check', 'inventory:read'],
    ['/products/materials/consumption/estimate', 'inventory:read'],
    ['/products/materials/consumption/consume', 'inventory:update'],
  ] as [string, Scope][])('%s: 401 without a key, 403 without %s', async (path, scope) => {
    const body = { productSku: pizza, locationId: A };
    expectError(await new ApiClient('').post(path, body), 401, 'auth:invalid_token');
    const without = new ApiClient(
      (
        await deps.tenancy.issueKey(
          tenantId,
          SCOPES.filter((s) => s !== scope),
        )
      ).key,
    );
    expectError(await without.post(path, body), 403, 'auth:permission_denied');
    const only = new ApiClient((await deps.tenancy.issueKey(tenantId, [scope])).key);
    expect((await only.post(path, body)).status).toBe(200);
  });
});

describe('a consumption whose driver died half-way', () => {
  /** Records a consumption of 0.5 kg of each SKU as a killed driver leaves it, having taken the first. */
  async function halfDriven(id: string, skus: string[], status: ConsumptionDoc['status']) {
    const tenantDb = new TenantDb(deps.db, tenantId);
    const old = new Date(Date.now() - 5 * 60_000);
    const lines = skus.map((s) => ({
      sku: s,
      kind: 'material' as const,
      minor: 500,
      unit: 'kg',
      precision: 3,
      source: 'component' as const,
    }));
    await tenantDb.collection(materialConsumptions).insertOne({
      _id: `${tenantId}:${id}`,
      consumptionId: id,
      reference: null,
      status,
      attempt: 1,
      plan: { locationId: A, lines },
      consumed: null,
      shortfalls: null,
      meta: {},
      actor: 'key_killed',
      createdAt: old,
      updatedAt: old,
    });
    await new StockStore(tenantDb, 'material').consume(skus[0], {
      actor: 'key_killed',
      movementId: movementIdOf(id, 1, skus[0], 'take'),
      returnId: movementIdOf(id, 1, skus[0], 'return'),
      consumption: { id, reference: null },
      locationId: A,
      minor: 500,
    });
    return tenantDb;
  }

  it('pending: the recovery sweep takes the rest, exactly once', async () => {
    const a = await material('RA');
    const b = await material('RB');
    await receive(a, 2, 1);
    await receive(b, 2, 1);
    const id = `crash-${P}-1`;
    const tenantDb = await halfDriven(id, [a, b], 'pending');
    expect([await onHand(a), await onHand(b)]).toEqual([1.5, 2]);
    await finishStaleConsumptions(deps.db);
    await finishStaleConsumptions(deps.db);
    expect([await onHand(a), await onHand(b)]).toEqual([1.5, 1.5]);
    expect((await tenantDb.collection(materialConsumptions).findOne({ _id: `${tenantId}:${id}` }))?.status).toBe(
      'applied',
    );
  });

  it('failing: the recovery sweep puts back what was taken and voids the rest', async () => {
    const a = await material('RC');
    const b = await material('RD');
    await receive(a, 2, 1);
    await receive(b, 2, 1);
    const id = `crash-${P}-2`;
    const tenantDb = await halfDriven(id, [a, b], 'failing');
    await finishStaleConsumptions(deps.db);
    expect([await onHand(a), await onHand(b)]).toEqual([2, 2]);
    expect((await tenantDb.collection(materialConsumptions).findOne({ _id: `${tenantId}:${id}` }))?.status).toBe(
      'failed',
    );
    // the voided line can never be taken by a driver that wakes up late
    const late = new StockStore(tenantDb, 'material').consume(b, {
      actor: 'key_late',
      movementId: movementIdOf(id, 1, b, 'take'),
      returnId: movementIdOf(id, 1, b, 'return'),
      consumption: { id, reference: null },
      locationId: A,
      minor: 500,
    });
    await expect(late).rejects.toMatchObject({ status: 409 });
    expect(await onHand(b)).toBe(2);
  });
});

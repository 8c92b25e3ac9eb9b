import { ApiClient, type HttpResult } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import { SCOPES, type Scope } from '../../shared/auth/scopes';
import { systemLocationId } from '../../shared/locations/locations';
import { allRoutes } from '../../api/routes';
import { bomRoutes } from '../../api/bom/routes';

/**
 * Bills of materials through HTTP on the real stack: get (with the cost computed at read time),
 * assign, partial update and remove; the rule that components name materials or supplies of the
 * tenant in one of their units, kept alike by PUT /products; the permission matrix; tenant
 * isolation.
 */
let deps: TestDeps;
let app: { url: string; close: () => Promise<void> };
let api: ApiClient;
let tenantId: string;
let loc: string;
const P = `B${Date.now().toString(36).toUpperCase()}`; // this run's SKU prefix
let n = 0;
/** A new SKU of this run, upper-case. */
const nextSku = (tag: string) => `${P}-${tag}${++n}`;

function must(res: HttpResult, status: number, what: string): any {
  if (res.status !== status) throw new Error(`${what} → ${res.status} ${res.text}`);
  return res.body;
}

/** A material counted in kg (precision 3), also in g. */
async function material(extra: Record<string, unknown> = {}, client = api): Promise<string> {
  const sku = (extra.sku as string | undefined) ?? nextSku('MAT');
  const body = {
    sku,
    title: `Material ${sku}`,
    baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
    alternativeUnits: [{ code: 'g', conversionFactor: 0.001 }],
    costingMethod: 'last_purchase',
    initialCost: 0.8,
    currency: 'USD',
    ...extra,
  };
  return must(await client.post('/products/materials', body), 201, `material ${sku}`).sku;
}

async function supply(extra: Record<string, unknown> = {}): Promise<string> {
  const sku = nextSku('SUP');
  const body = { sku, title: `Supply ${sku}`, consumptionUnit: 'pza', price: 0.35, currency: 'USD', ...extra };
  return must(await api.post('/products/supplies', body), 201, `supply ${sku}`).sku;
}

async function product(extra: Record<string, unknown> = {}, client = api): Promise<any> {
  const sku = nextSku('P');
  return must(await client.post('/products', { sku, title: { value: 'Bread' }, price: 10, ...extra }), 201, 'product');
}

const bomPath = (sku: string) => `/products/${sku}/bom`;

/** Flour (kg, g) at 0.80/kg and a box (pza) at 0.35: the kitchen most tests cook in. */
let FLOUR: string;
let SUGAR: string;
let BOX: string;

/** A valid BOM: 250 g of flour and a box for 12 pieces, 5% wastage. One run costs 0.21 + 0.37 = 0.58. */
const breadBom = (extra: Record<string, unknown> = {}) => ({
  consumptionMode: 'on_sale',
  yield: { quantity: 12, unit: 'pza' },
  components: [
    {
      materialSku: FLOUR.toLowerCase(),
      quantity: 250,
      unit: 'g',
      substitutes: [{ materialSku: SUGAR, conversionFactor: 1 }],
    },
    { materialSku: BOX, quantity: 1, unit: 'PZA', required: false, notes: 'one box per batch' },
  ],
  wastagePercent: 5,
  ...extra,
});

/** A product with the bread BOM assigned. */
async function productWithBom(extra: Record<string, unknown> = {}): Promise<any> {
  const p = await product();
  must(await api.put(bomPath(p.sku), breadBom(extra)), 200, 'assign BOM');
  return p;
}

function expectInvalid(res: HttpResult, field: string, ...inMessage: string[]): void {
  expectError(res, 400, 'validation-error');
  expect(res.body.field).toBe(field);
  const message = res.body.fieldErrors.find((f: { field: string }) => f.field === field)?.message ?? '';
  for (const text of inMessage) expect(message).toContain(text);
}

/** A BOM as answered, its cost's time left free (each read computes the cost anew). */
const anyTime = (bom: any) => ({ ...bom, calculatedCost: { ...bom.calculatedCost, calculatedAt: expect.any(String) } });

function expectNotFound(res: HttpResult): void {
  expectError(res, 404, 'not-found');
  expect(res.body.message).toBe('Product or BOM not found');
}

beforeAll(async () => {
  deps = await TestDeps.open();
  // the BOM routes as the API serves them (registered before the product routes)
  app = await deps.serveApp(allRoutes);
  const tenant = await deps.tenantWithKey();
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key, app.url);
  loc = systemLocationId(tenantId);
  [FLOUR, SUGAR, BOX] = await Promise.all([material(), material({ initialCost: 1.2 }), supply()]);
});
afterAll(async () => {
  await app?.close();
  await deps?.close();
});

describe('assign (PUT)', () => {
  test('answers 200 {sku, billOfMaterials}: sequence from 0, SKUs upper-cased, defaults filled, the cost of one run', async () => {
    const p = await product();
    const before = Date.now();
    const res = await api.put(
      bomPath(p.sku.toLowerCase()),
      breadBom({ preparationNotes: 'Knead 10 min', prepTimeMinutes: 40 }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      sku: p.sku,
      billOfMaterials: {
        consumptionMode: 'on_sale',
        yield: { quantity: 12, unit: 'pza' },
        components: [
          {
            materialSku: FLOUR,
            quantity: 250,
            unit: 'g',
            required: true,
            sequence: 0,
            substitutes: [{ materialSku: SUGAR, conversionFactor: 1 }],
          },
          {
            materialSku: BOX,
            quantity: 1,
            unit: 'PZA',
            required: false,
            sequence: 1,
            substitutes: [],
            notes: 'one box per batch',
          },
        ],
        wastagePercent: 5,
        preparationNotes: { value: 'Knead 10 min' },
        prepTimeMinutes: 40,
        // 250 g × 1.05 = 0.2625 kg → 0.263 kg × 0.80 = 0.2104 → 0.21; 1 box × 1.05 = 1.05 pza × 0.35 = 0.3675 → 0.37;
        // the sugar substitute does not count
        calculatedCost: { value: 0.58, currency: 'USD', calculatedAt: expect.any(String) },
      },
    });
    expect(new Date(res.body.billOfMaterials.calculatedCost.calculatedAt).getTime()).toBeGreaterThanOrEqual(
      before - 1000,
    );

    // read back the same, at the root and under /v1, the SKU in any case
    for (const path of [bomPath(p.sku), `/v1${bomPath(p.sku.toLowerCase())}`]) {
      const got = await api.get(path);
      expect(got.status).toBe(200);
      expect(got.body).toEqual(anyTime(res.body.billOfMaterials));
    }
    // stored on the product without the cost, which is never stored
    const stored = must(await api.get(`/products/${p.id}`), 200, 'product').billOfMaterials;
    const { calculatedCost: _c, ...asStored } = res.body.billOfMaterials;
    expect(stored).toEqual(asStored);
  });

  test('a second PUT replaces the whole BOM: fields it does not send are gone', async () => {
    const p = await productWithBom({ preparationNotes: { value: 'old' }, prepTimeMinutes: 5 });
    const res = await api.put(bomPath(p.sku), {
      consumptionMode: 'manual',
      yield: { quantity: 1, unit: 'kg' },
      components: [{ materialSku: SUGAR, quantity: 2, unit: 'kg' }],
    });
    expect(res.status).toBe(200);
    expect(res.body.billOfMaterials).toEqual({
      consumptionMode: 'manual',
      yield: { quantity: 1, unit: 'kg' },
      components: [{ materialSku: SUGAR, quantity: 2, unit: 'kg', required: true, sequence: 0, substitutes: [] }],
      calculatedCost: { value: 2.4, currency: 'USD', calculatedAt: expect.any(String) },
    });
    expect((await api.get(bomPath(p.sku))).body).toEqual(anyTime(res.body.billOfMaterials));
  });

  test('a SKU that is not a material or supply of the tenant is 400 naming the component and the SKU; nothing is stored', async () => {
    const p = await product();
    const other = await product();
    const cases: [string, Record<string, unknown>, string, string][] = [
      [
        'an unknown SKU',
        { materialSku: 'flour-x' },
        'components.0.materialSku',
        'references no material or supply of the tenant (FLOUR-X)',
      ],
      ['another product', { materialSku: other.sku }, 'components.0.materialSku', `(${other.sku})`],
      [
        'the product itself',
        { materialSku: p.sku.toLowerCase() },
        'components.0.materialSku',
        `this product's own SKU (${p.sku})`,
      ],
    ];
    for (const [_what, change, field, text] of cases) {
      const body = breadBom();
      body.components[0] = { ...body.components[0], ...change };
      expectInvalid(await api.put(bomPath(p.sku), body), field, text);
    }
    const body = breadBom();
    body.components.push({ materialSku: 'nope-1', quantity: 1, unit: 'kg' } as never);
    const res = await api.put(bomPath(p.sku), body);
    expectInvalid(res, 'components.2.materialSku', 'NOPE-1');
    expect(res.body.message).toContain('NOPE-1');
    expectNotFound(await api.get(bomPath(p.sku)));
  });

  test('a variant of the product is not a component: 400 naming it', async () => {
    const variantSku = nextSku('V');
    const p = await product({ variants: [{ sku: variantSku, title: { value: 'Small' }, price: 9, position: 0 }] });
    const body = breadBom();
    body.components[1] = { materialSku: variantSku.toLowerCase(), quantity: 1, unit: 'pza' } as never;
    expectInvalid(await api.put(bomPath(p.sku), body), 'components.1.materialSku', `variant ${variantSku}`);
  });

  test('a unit the material does not have is 400 naming the unit and the known ones; units match in any case', async () => {
    const p = await product();
    const body = breadBom();
    body.components[0] = { ...body.components[0], unit: 'lb' };
    expectInvalid(await api.put(bomPath(p.sku), body), 'components.0.unit', 'unit lb', 'kg, g');
    // a supply's units are its consumptionUnit and its alternatives
    const box = breadBom();
    box.components[1] = { ...box.components[1], unit: 'kg' };
    expectInvalid(await api.put(bomPath(p.sku), box), 'components.1.unit', 'unit kg', 'pza');
    body.components[0] = { ...body.components[0], unit: 'KG', quantity: 0.25 };
    expect((await api.put(bomPath(p.sku), body)).status).toBe(200);
  });

  test('a material twice among the components, a substitute that is its own component, or a substitute twice: 400', async () => {
    const p = await product();
    const twice = breadBom();
    twice.components.push({ materialSku: FLOUR.toLowerCase(), quantity: 10, unit: 'g' } as never);
    expectInvalid(
      await api.put(bomPath(p.sku), twice),
      'components.2.materialSku',
      `names ${FLOUR} again (component 0)`,
    );

    const self = breadBom();
    self.components[0].substitutes = [{ materialSku: FLOUR.toLowerCase(), conversionFactor: 1 }];
    expectInvalid(await api.put(bomPath(p.sku), self), 'components.0.substitutes.0.materialSku', 'own material');

    const dup = breadBom();
    dup.components[0].substitutes = [
      { materialSku: SUGAR, conversionFactor: 1 },
      { materialSku: SUGAR.toLowerCase(), conversionFactor: 2 },
    ];
    expectInvalid(await api.put(bomPath(p.sku), dup), 'components.0.substitutes.1.materialSku', 'twice');

    const unknownSub = breadBom();
    unknownSub.components[0].substitutes = [{ materialSku: 'ghost', conversionFactor: 1 }];
    expectInvalid(await api.put(bomPath(p.sku), unknownSub), 'components.0.substitutes.0.materialSku', '(GHOST)');

    // a supply may be a component, and a material may be another component's substitute
    const ok = breadBom();
    ok.components[1] = { materialSku: SUGAR, quantity: 1, unit: 'g' } as never;
    expect((await api.put(bomPath(p.sku), ok)).status).toBe(200);
  });

  const withComponent = (change: Record<string, unknown>) => {
    const body = breadBom();
    body.components[0] = { ...body.components[0], ...change };
    return body;
  };
  test.each<[string, () => unknown, string, string]>([
    [
      'sequence is assigned by the server',
      () => withComponent({ sequence: 3 }),
      'components.0.sequence',
      'assigned by the server',
    ],
    [
      'calculatedCost is read-only',
      () => breadBom({ calculatedCost: { value: 1, currency: 'USD' } }),
      'calculatedCost',
      'read-only',
    ],
    ['an unknown field', () => breadBom({ colour: 'brown' }), 'colour', 'not a known field'],
    ['an unknown component field', () => withComponent({ cost: 3 }), 'components.0.cost', 'not a known field'],
    ['consumptionMode is required', () => breadBom({ consumptionMode: undefined }), 'consumptionMode', 'required'],
    ['yield is required', () => breadBom({ yield: undefined }), 'yield', 'required'],
    ['components are required', () => breadBom({ components: undefined }), 'components', 'required'],
    ['at least one component', () => breadBom({ components: [] }), 'components', 'fewer than 1'],
    [
      'a consumptionMode of the list',
      () => breadBom({ consumptionMode: 'on_delivery' }),
      'consumptionMode',
      'allowed values',
    ],
    ['a yield quantity > 0', () => breadBom({ yield: { quantity: 0, unit: 'pza' } }), 'yield.quantity', '> 0'],
    ['a yield unit', () => breadBom({ yield: { quantity: 1 } }), 'yield.unit', 'required'],
    ['a component quantity > 0', () => withComponent({ quantity: 0 }), 'components.0.quantity', '> 0'],
    ['a component unit', () => withComponent({ unit: undefined }), 'components.0.unit', 'required'],
    ['a component quantity ≤ 10⁹', () => withComponent({ quantity: 1e10 }), 'components.0.quantity', '<= 1000000000'],
    [
      'a substitute conversionFactor > 0',
      () => withComponent({ substitutes: [{ materialSku: SUGAR, conversionFactor: 0 }] }),
      'components.0.substitutes.0.conversionFactor',
      '> 0',
    ],
    ['wastagePercent ≤ 100', () => breadBom({ wastagePercent: 101 }), 'wastagePercent', '<= 100'],
    ['wastagePercent ≥ 0', () => breadBom({ wastagePercent: -1 }), 'wastagePercent', '>= 0'],
    ['prepTimeMinutes ≥ 0', () => breadBom({ prepTimeMinutes: -5 }), 'prepTimeMinutes', '>= 0'],
    [
      'preparationNotes a text or {value}',
      () => breadBom({ preparationNotes: 7 }),
      'preparationNotes',
      'must be string',
    ],
  ])('%s: 400 validation-error naming the field', async (_name, body, field, text) => {
    const p = await product();
    const res = await api.put(bomPath(p.sku), body());
    expectError(res, 400, 'validation-error');
    const named = res.body.fieldErrors.filter((f: { field: string }) => f.field === field);
    expect(named.length).toBeGreaterThan(0);
    expect(named.map((f: { message: string }) => f.message).join(' ')).toContain(text);
    expectNotFound(await api.get(bomPath(p.sku)));
  });

  test('no body is 400 validation-error', async () => {
    const p = await product();
    expectError(await api.put(bomPath(p.sku)), 400, 'validation-error');
  });
});

describe('get', () => {
  test("a product without a BOM is 404 'Product or BOM not found'", async () => {
    const p = await product();
    expectNotFound(await api.get(bomPath(p.sku)));
  });

  test('unknown SKUs, variant SKUs and material SKUs are 404 on every route', async () => {
    const variantSku = nextSku('V');
    await productWithBom();
    const withVariant = await product({
      variants: [{ sku: variantSku, title: { value: 'S' }, price: 9, position: 0 }],
    });
    must(await api.put(bomPath(withVariant.sku), breadBom()), 200, 'assign');
    for (const sku of ['no-such-product', variantSku, variantSku.toLowerCase(), FLOUR, BOX]) {
      expectNotFound(await api.get(bomPath(sku)));
      expectNotFound(await api.put(bomPath(sku), breadBom()));
      expectNotFound(await api.patch(bomPath(sku), { wastagePercent: 1 }));
      expectNotFound(await api.delete(bomPath(sku)));
    }
    // the parent's BOM is untouched
    expect((await api.get(bomPath(withVariant.sku))).body.wastagePercent).toBe(5);
  });

  test('calculatedCost follows the current cost: a receipt at a new cost (last_purchase) changes it at once', async () => {
    const butter = await material({ initialCost: 2 });
    const p = await product();
    must(
      await api.put(bomPath(p.sku), {
        consumptionMode: 'on_production',
        yield: { quantity: 1, unit: 'batch' },
        components: [{ materialSku: butter, quantity: 500, unit: 'g' }],
        wastagePercent: 10,
      }),
      200,
      'assign',
    );
    // 500 g × 1.1 = 0.55 kg × 2.00 = 1.10
    expect((await api.get(bomPath(p.sku))).body.calculatedCost).toMatchObject({ value: 1.1, currency: 'USD' });
    must(
      await api.post(`/products/materials/${butter}/stock/${loc}`, { quantity: 10, lot: { costPerUnit: 3.5 } }),
      200,
      'receipt',
    );
    // 0.55 kg × 3.50 = 1.925 → 1.93
    const after = (await api.get(bomPath(p.sku))).body.calculatedCost;
    expect(after).toMatchObject({ value: 1.93, currency: 'USD' });
    must(
      await api.post(`/products/materials/${butter}/stock/${loc}`, { quantity: 1, lot: { costPerUnit: 1 } }),
      200,
      'receipt',
    );
    expect((await api.get(bomPath(p.sku))).body.calculatedCost).toMatchObject({ value: 0.55 });
  });

  test('components in different currencies: value and currency null, with a note naming them', async () => {
    const lime = await material({ currency: 'MXN', initialCost: 30 });
    const p = await product();
    const res = await api.put(bomPath(p.sku), {
      consumptionMode: 'manual',
      yield: { quantity: 1, unit: 'l' },
      components: [
        { materialSku: lime, quantity: 100, unit: 'g' },
        { materialSku: SUGAR, quantity: 20, unit: 'g' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.billOfMaterials.calculatedCost).toEqual({
      value: null,
      currency: null,
      calculatedAt: expect.any(String),
      note: expect.stringContaining('different currencies (MXN, USD)'),
    });
    expect((await api.get(bomPath(p.sku))).body.calculatedCost.value).toBeNull();
  });

  test('a quantity no stock can hold (stored through PUT /products, whose schema has no maximum) reads with a null cost, not a 500', async () => {
    const p = await product();
    must(
      await api.put(`/products/${p.id}`, {
        sku: p.sku,
        title: { value: 'Bread' },
        price: 10,
        billOfMaterials: {
          consumptionMode: 'manual',
          yield: { quantity: 1, unit: 'pza' },
          components: [{ materialSku: FLOUR, quantity: 1e300, unit: 'kg' }],
        },
      }),
      200,
      'product PUT',
    );
    const res = await api.get(bomPath(p.sku));
    expect(res.status).toBe(200);
    expect(res.body.calculatedCost).toMatchObject({
      value: null,
      currency: null,
      note: expect.stringContaining(FLOUR),
    });
  });

  test('a BOM sent with PUT /products/{id} is read here with its cost', async () => {
    const p = await product();
    const res = await api.put(`/products/${p.id}`, {
      sku: p.sku,
      title: { value: 'Bread' },
      price: 10,
      billOfMaterials: {
        consumptionMode: 'manual',
        yield: { quantity: 1, unit: 'pza' },
        components: [{ materialSku: FLOUR, quantity: 1, unit: 'kg' }],
      },
    });
    expect(res.status).toBe(200);
    expect((await api.get(bomPath(p.sku))).body).toMatchObject({
      components: [{ materialSku: FLOUR, sequence: 0 }],
      calculatedCost: { value: 0.8, currency: 'USD' },
    });
  });
});

describe('partial update (PATCH)', () => {
  test('the fields sent replace the stored ones; the rest stay; the cost is recomputed', async () => {
    const p = await productWithBom({ preparationNotes: 'Knead', prepTimeMinutes: 30 });
    const before = (await api.get(bomPath(p.sku))).body;
    const res = await api.patch(bomPath(p.sku), { wastagePercent: 0, preparationNotes: 'Knead well' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      sku: p.sku,
      billOfMaterials: {
        ...before,
        wastagePercent: 0,
        preparationNotes: { value: 'Knead well' },
        // 0.25 kg × 0.80 = 0.20, plus the box 0.35
        calculatedCost: { value: 0.55, currency: 'USD', calculatedAt: expect.any(String) },
      },
    });
    expect((await api.get(bomPath(p.sku))).body).toEqual(anyTime(res.body.billOfMaterials));
  });

  test('yield is merged; components are replaced as a whole and numbered again from 0', async () => {
    const p = await productWithBom();
    const y = await api.patch(bomPath(p.sku.toLowerCase()), { yield: { quantity: 6 } });
    expect(y.status).toBe(200);
    expect(y.body.billOfMaterials.yield).toEqual({ quantity: 6, unit: 'pza' });
    expect(y.body.billOfMaterials.components).toHaveLength(2);

    const c = await api.patch(bomPath(p.sku), {
      components: [
        { materialSku: SUGAR, quantity: 100, unit: 'g' },
        { materialSku: FLOUR, quantity: 0.5, unit: 'kg', substitutes: [{ materialSku: SUGAR, conversionFactor: 1.1 }] },
      ],
      consumptionMode: 'manual',
    });
    expect(c.status).toBe(200);
    expect(c.body.billOfMaterials).toMatchObject({
      consumptionMode: 'manual',
      yield: { quantity: 6, unit: 'pza' },
      wastagePercent: 5,
      components: [
        { materialSku: SUGAR, quantity: 100, unit: 'g', required: true, sequence: 0, substitutes: [] },
        {
          materialSku: FLOUR,
          quantity: 0.5,
          unit: 'kg',
          sequence: 1,
          substitutes: [{ materialSku: SUGAR, conversionFactor: 1.1 }],
        },
      ],
      // 0.105 kg × 1.20 = 0.126 → 0.13; 0.525 kg × 0.80 = 0.42
      calculatedCost: { value: 0.55, currency: 'USD' },
    });
  });

  test('the same rules as PUT: an unknown material or unit is 400 naming the component; nothing changes', async () => {
    const p = await productWithBom();
    const before = (await api.get(bomPath(p.sku))).body;
    expectInvalid(
      await api.patch(bomPath(p.sku), { components: [{ materialSku: 'flour-x', quantity: 1, unit: 'kg' }] }),
      'components.0.materialSku',
      'FLOUR-X',
    );
    expectInvalid(
      await api.patch(bomPath(p.sku), { components: [{ materialSku: FLOUR, quantity: 1, unit: 'oz' }] }),
      'components.0.unit',
      'oz',
    );
    expectInvalid(await api.patch(bomPath(p.sku), { yield: { quantity: -1 } }), 'yield.quantity');
    expectInvalid(await api.patch(bomPath(p.sku), { sequence: 1 }), 'sequence');
    expectInvalid(
      await api.patch(bomPath(p.sku), { components: [{ materialSku: FLOUR, quantity: 1, unit: 'kg', sequence: 0 }] }),
      'components.0.sequence',
      'assigned by the server',
    );
    const { calculatedCost: _c, ...stored } = before;
    expect((await api.get(bomPath(p.sku))).body).toMatchObject(stored);
  });

  test('concurrent updates never overwrite each other silently: each is 200 or 409 conflict, and one that answered 200 is stored', async () => {
    const p = await productWithBom();
    const answers = await Promise.all([1, 2, 3, 4, 5].map((w) => api.patch(bomPath(p.sku), { wastagePercent: w })));
    for (const a of answers) if (a.status !== 200) expectError(a, 409, 'conflict');
    const won = answers.flatMap((a, i) => (a.status === 200 ? [i + 1] : []));
    expect(won.length).toBeGreaterThan(0);
    expect(won).toContain((await api.get(bomPath(p.sku))).body.wastagePercent);
  });

  test('an empty body is 400; a product without a BOM is 404', async () => {
    const p = await productWithBom();
    const empty = await api.patch(bomPath(p.sku), {});
    expectError(empty, 400, 'validation-error');
    expect(empty.body.message).toContain('at least one field');
    const bare = await product();
    expectNotFound(await api.patch(bomPath(bare.sku), { wastagePercent: 3 }));
    expectNotFound(await api.get(bomPath(bare.sku)));
  });
});

describe('remove (DELETE)', () => {
  test('answers {success, message}; the BOM is gone, the product stays, its materials are free to delete', async () => {
    const onlyHere = await material();
    const p = await product();
    must(
      await api.put(bomPath(p.sku), {
        consumptionMode: 'manual',
        yield: { quantity: 1, unit: 'pza' },
        components: [{ materialSku: onlyHere, quantity: 1, unit: 'kg' }],
      }),
      200,
      'assign',
    );
    // a material a BOM uses cannot be deleted
    const refused = await api.delete(`/products/materials/${onlyHere}`);
    expectError(refused, 400, 'validation-error');
    expect(refused.body.details).toEqual({ reason: 'in-use', usedBy: [{ sku: p.sku, as: 'bom' }] });

    const res = await api.delete(bomPath(p.sku.toLowerCase()));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: expect.stringContaining(p.sku) });
    expectNotFound(await api.get(bomPath(p.sku)));
    expectNotFound(await api.delete(bomPath(p.sku)));
    const stored = must(await api.get(`/products/${p.id}`), 200, 'product');
    expect(stored.billOfMaterials).toBeUndefined();
    expect(stored.sku).toBe(p.sku);
    expect((await api.delete(`/products/materials/${onlyHere}`)).status).toBe(200);
  });
});

describe('one rule for every product write', () => {
  test('POST and PUT /products refuse a BOM naming an unknown material or unit: 400 naming billOfMaterials.components.<i>', async () => {
    const p = await product();
    const bom = (materialSku: string, unit: string) => ({
      consumptionMode: 'manual',
      yield: { quantity: 1, unit: 'pza' },
      components: [
        { materialSku: FLOUR, quantity: 1, unit: 'kg' },
        { materialSku, quantity: 1, unit },
      ],
    });
    const put = (billOfMaterials: unknown) =>
      api.put(`/products/${p.id}`, { sku: p.sku, title: { value: 'Bread' }, price: 10, billOfMaterials });
    expectInvalid(
      await put(bom('flour-x', 'kg')),
      'billOfMaterials.components.1.materialSku',
      'references no material or supply of the tenant (FLOUR-X)',
    );
    expectInvalid(await put(bom(SUGAR, 'cup')), 'billOfMaterials.components.1.unit', 'unit cup', 'kg, g');
    expectInvalid(await put(bom(FLOUR, 'g')), 'billOfMaterials.components.1.materialSku', 'again');
    expectInvalid(
      await api.post('/products', {
        sku: nextSku('P'),
        title: { value: 'x' },
        price: 1,
        billOfMaterials: bom('ghost', 'kg'),
      }),
      'billOfMaterials.components.1.materialSku',
      '(GHOST)',
    );
    expect((await put(bom(SUGAR, 'g'))).status).toBe(200);
  });

  test('a material cannot drop a unit a BOM names it in (400 unit-in-use); other unit changes go through', async () => {
    const salt = await material();
    const p = await product();
    must(
      await api.put(bomPath(p.sku), {
        consumptionMode: 'manual',
        yield: { quantity: 1, unit: 'pza' },
        components: [{ materialSku: salt, quantity: 5, unit: 'g' }],
      }),
      200,
      'assign BOM',
    );
    const dropped = await api.patch(`/products/materials/${salt}`, { alternativeUnits: [] });
    expectInvalid(dropped, 'alternativeUnits', 'unit g', p.sku);
    expect(dropped.body.details).toMatchObject({
      reason: 'unit-in-use',
      usedBy: [{ sku: p.sku, as: 'bom', unit: 'g' }],
    });
    const added = await api.patch(`/products/materials/${salt}`, {
      alternativeUnits: [
        { code: 'G', conversionFactor: 0.001 },
        { code: 'lb', conversionFactor: 0.4536 },
      ],
    });
    expect(added.status).toBe(200);
    expect((await api.get(bomPath(p.sku))).body.calculatedCost.value).not.toBeNull();
  });

  test('a dropped unit is found in use however many products name the material in kept units', async () => {
    const salt = await material();
    const inKg = { consumptionMode: 'manual', yield: { quantity: 1, unit: 'pza' } };
    for (let i = 0; i < 11; i++)
      await product({ billOfMaterials: { ...inKg, components: [{ materialSku: salt, quantity: 1, unit: 'kg' }] } });
    const inGrams = await product({
      billOfMaterials: { ...inKg, components: [{ materialSku: salt, quantity: 5, unit: 'g' }] },
    });
    const dropped = await api.patch(`/products/materials/${salt}`, { alternativeUnits: [] });
    expectInvalid(dropped, 'alternativeUnits', 'unit g', inGrams.sku);
    expect(dropped.body.details.usedBy).toEqual([{ sku: inGrams.sku, as: 'bom', unit: 'g' }]);
  });
});

describe('permission matrix', () => {
  interface Route {
    name: string;
    scope: Scope;
    method: 'GET' | 'PUT' | 'PATCH' | 'DELETE';
    body?: () => unknown;
  }
  const routes: Route[] = [
    { name: 'get', scope: 'products:read', method: 'GET' },
    { name: 'assign', scope: 'products:update', method: 'PUT', body: () => breadBom() },
    { name: 'update', scope: 'products:update', method: 'PATCH', body: () => ({ wastagePercent: 2 }) },
    { name: 'remove', scope: 'products:delete', method: 'DELETE' },
  ];
  const only = new Map<Scope, string>();
  const allBut = new Map<Scope, string>();

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
  });

  test('every BOM route is in the matrix', () => {
    expect(bomRoutes.map((r) => r.method.toUpperCase()).sort()).toEqual(routes.map((r) => r.method).sort());
  });

  test.each(routes.map((r) => [r.name, r] as const))(
    '%s: no key → 401; every scope but the one it needs → 403 and nothing changes; that scope alone → 200',
    async (_name, route) => {
      const p = await productWithBom();
      const path = bomPath(p.sku);
      const before = (await api.get(path)).body;
      const send = (client: ApiClient) => client.request(route.method, path, route.body ? { body: route.body() } : {});

      expectError(await send(api.as(null)), 401, 'auth:invalid_token');
      const refused = await send(api.as(allBut.get(route.scope)!));
      expectError(refused, 403, 'auth:permission_denied');
      expect(refused.body.message).toContain(route.scope);
      expect({ ...(await api.get(path)).body, calculatedCost: null }).toEqual({ ...before, calculatedCost: null });

      const res = await send(api.as(only.get(route.scope)!));
      expect({ status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({ status: 200, body: 'ok' });
    },
  );
});

describe('tenant isolation', () => {
  test("another tenant gets 404 for every BOM route of this tenant's product, and cannot name its materials", async () => {
    const p = await productWithBom();
    const before = (await api.get(bomPath(p.sku))).body;
    const t = await deps.tenantWithKey();
    const other = new ApiClient(t.key, app.url);
    expectNotFound(await other.get(bomPath(p.sku)));
    expectNotFound(
      await other.put(bomPath(p.sku), {
        consumptionMode: 'manual',
        yield: { quantity: 1, unit: 'pza' },
        components: [{ materialSku: 'X', quantity: 1, unit: 'kg' }],
      }),
    );
    expectNotFound(await other.patch(bomPath(p.sku), { wastagePercent: 50 }));
    expectNotFound(await other.delete(bomPath(p.sku)));
    const { calculatedCost: _c, ...stored } = before;
    expect((await api.get(bomPath(p.sku))).body).toMatchObject(stored);

    // its own product cannot use this tenant's flour; with its own flour of the same SKU it can
    const mine = await product({}, other);
    const theirs = {
      consumptionMode: 'manual',
      yield: { quantity: 1, unit: 'pza' },
      components: [{ materialSku: FLOUR, quantity: 1, unit: 'kg' }],
    };
    expectInvalid(await other.put(bomPath(mine.sku), theirs), 'components.0.materialSku', `(${FLOUR})`);
    await material({ sku: FLOUR, initialCost: 3 }, other);
    const res = await other.put(bomPath(mine.sku), theirs);
    expect(res.status).toBe(200);
    expect(res.body.billOfMaterials.calculatedCost).toMatchObject({ value: 3, currency: 'USD' });
  });
});

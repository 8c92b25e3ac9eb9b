import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';

/**
 * The product model, rule by rule, through HTTP on the real API process: a valid and an invalid
 * value for each rule, the status, the code, the field named, and that nothing was stored on a 4xx.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key);
});
afterAll(() => deps.close());

const uniqueSku = (base = 'm') => `${base}-${Date.now().toString(36)}-${++n}`;

function product(overrides: Record<string, unknown> = {}): Record<string, any> {
  return { sku: uniqueSku(), title: { value: 'A product' }, price: 10, ...overrides };
}

async function stored(sku: string): Promise<number> {
  return deps.db.collection('products').countDocuments({ tenantId, sku: sku.toUpperCase() });
}

async function expectRefused(
  body: Record<string, any>,
  field: string,
  code = 'validation-error',
  messagePart?: string,
) {
  const res = await api.post('/products', body);
  expectError(res, 400, code);
  if (code === 'validation-error') expect(res.body.fieldErrors.map((f: { field: string }) => f.field)).toContain(field);
  else expect(res.body.field).toBe(field);
  if (messagePart) expect(JSON.stringify(res.body)).toContain(messagePart);
  if (typeof body.sku === 'string') expect(await stored(body.sku)).toBe(0);
  return res;
}

async function expectCreated(body: Record<string, any>) {
  const res = await api.post('/products', body);
  expect({ status: res.status, body: res.body }).toMatchObject({ status: 201 });
  return res.body;
}

describe('sku', () => {
  test('required, stored upper-case, id derived from _id', async () => {
    await expectRefused({ title: { value: 'x' }, price: 1 }, 'sku');
    await expectRefused(product({ sku: 'has space' }), 'sku');
    const sku = uniqueSku('lower');
    const created = await expectCreated(product({ sku }));
    expect(created.sku).toBe(sku.toUpperCase());
    expect(created.id).toMatch(/^[0-9a-f]{24}$/);
    expect(created._id).toBeUndefined();
    expect(created.tenantId).toBe(tenantId);
  });

  test('unique across products and variants: 409 naming the SKU and what holds it', async () => {
    const base = await expectCreated(
      product({ variants: [{ sku: uniqueSku('v'), title: { value: 'V' }, price: 1, position: 0 }] }),
    );
    const variantSku = base.variants[0].sku;
    expect(base.variants[0]).toMatchObject({ parentSku: base.sku, productSku: base.sku });

    const sameProduct = await api.post('/products', product({ sku: base.sku.toLowerCase() }));
    expectError(sameProduct, 409, 'duplicate-sku');
    expect(sameProduct.body).toMatchObject({
      field: 'sku',
      details: { sku: base.sku, collidesWith: 'product', productId: base.id },
    });

    const productOnVariant = await api.post('/products', product({ sku: variantSku }));
    expectError(productOnVariant, 409, 'duplicate-sku');
    expect(productOnVariant.body.details).toMatchObject({ sku: variantSku, collidesWith: 'variant' });

    const variantOnProduct = await api.post(
      '/products',
      product({ variants: [{ sku: base.sku, title: { value: 'V' }, price: 1, position: 0 }] }),
    );
    expectError(variantOnProduct, 409, 'duplicate-sku');
    expect(variantOnProduct.body.details.collidesWith).toBe('product');
    // the refused product left no SKU behind
    expect(
      await deps.db
        .collection('product_skus')
        .countDocuments({ tenantId, sku: variantOnProduct.body.details.sku, productId: { $ne: base.id } }),
    ).toBe(0);
  });

  test('variant SKUs: not the product SKU, not repeated', async () => {
    const sku = uniqueSku();
    await expectRefused(
      product({ sku, variants: [{ sku, title: { value: 'V' }, price: 1, position: 0 }] }),
      'variants.0.sku',
    );
    const v = uniqueSku('v');
    await expectRefused(
      product({ variants: [0, 1].map((i) => ({ sku: v, title: { value: 'V' }, price: 1, position: i })) }),
      'variants.1.sku',
    );
    await expectRefused(
      product({
        variants: [{ sku: uniqueSku('v'), parentSku: 'OTHER', title: { value: 'V' }, price: 1, position: 0 }],
      }),
      'variants.0.parentSku',
    );
  });

  test('20 concurrent creates of one SKU: exactly one 201, the rest 409, one product stored', async () => {
    const sku = uniqueSku('race');
    const results = await Promise.all(Array.from({ length: 20 }, () => api.post('/products', product({ sku }))));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(19);
    expect(await stored(sku)).toBe(1);
    expect(await deps.db.collection('product_skus').countDocuments({ tenantId, sku: sku.toUpperCase() })).toBe(1);
  });
});

describe('status and productType', () => {
  test('status defaults to draft; active/disabled accepted; inactive and out_of_stock are invalid-status', async () => {
    expect((await expectCreated(product())).status).toBe('draft');
    expect((await expectCreated(product({ status: 'disabled' }))).status).toBe('disabled');
    for (const status of ['inactive', 'out_of_stock'])
      await expectRefused(product({ status }), 'status', 'invalid-status', status);
  });

  test('productType enum; `type` and simple/variable refused with what to send instead', async () => {
    expect((await expectCreated(product({ productType: 'service' }))).productType).toBe('service');
    expect((await expectCreated(product())).productType).toBe('physical');
    await expectRefused(product({ type: 'physical' }), 'type', 'validation-error', 'send productType');
    for (const productType of ['simple', 'variable'])
      await expectRefused(product({ productType }), 'productType', 'validation-error', 'variants[] is not empty');
  });
});

describe('field formats', () => {
  const cases: [string, Record<string, unknown>, Record<string, unknown>, string][] = [
    ['upc is exactly 12 digits', { upc: '012345678905' }, { upc: '01234567890' }, 'upc'],
    ['satCode is 8 digits', { satCode: '43211500' }, { satCode: '4321150A' }, 'satCode'],
    ['currency is ISO 4217', { currency: 'MXN' }, { currency: 'XYZ' }, 'currency'],
    ['price ≥ 0', { price: 0 }, { price: -1 }, 'price'],
    ['cost ≥ 0', { cost: 2.5 }, { cost: -0.01 }, 'cost'],
    ['compareAtPrice > price', { price: 10, compareAtPrice: 12 }, { price: 10, compareAtPrice: 10 }, 'compareAtPrice'],
    [
      'seo.metaTitle ≤ 60',
      { seo: { metaTitle: 'x'.repeat(60) } },
      { seo: { metaTitle: 'x'.repeat(61) } },
      'seo.metaTitle',
    ],
    [
      'seo.metaDescription ≤ 160',
      { seo: { metaDescription: 'x'.repeat(160) } },
      { seo: { metaDescription: 'x'.repeat(161) } },
      'seo.metaDescription',
    ],
    ['seo.slug pattern', { seo: { slug: 'red-shirt-2' } }, { seo: { slug: 'Red Shirt' } }, 'seo.slug'],
    ['bullets ≤ 7', { bullets: Array(7).fill('b') }, { bullets: Array(8).fill('b') }, 'bullets'],
    [
      'media src http(s) only',
      { media: [{ src: 'https://cdn.example.com/a.jpg', name: 'a', position: 0, alt: { value: 'A' } }] },
      { media: [{ src: 'ftp://cdn.example.com/a.jpg', name: 'a', position: 0, alt: { value: 'A' } }] },
      'media.0.src',
    ],
    ['condition: 12 values', { condition: 'collectible-very-good' }, { condition: 'used' }, 'condition'],
    [
      'title is a translated field',
      { title: { value: 'T', translations: [{ locale: 'es-MX', value: 'T' }] } },
      { title: 'plain string' },
      'title',
    ],
    [
      'translations need a locale',
      { description: { value: 'd', translations: [{ locale: 'fr', value: 'x' }] } },
      { description: { value: 'd', translations: [{ value: 'x' }] } },
      'description.translations.0.locale',
    ],
    [
      'metafield value matches its type',
      { metafields: [{ namespace: 'mkt_attr', key: 'k', type: 'number_integer', value: 3 }] },
      { metafields: [{ key: 'k', type: 'number_integer', value: 1.5 }] },
      'metafields.0.value',
    ],
    [
      'metafield types',
      { metafields: [{ key: 'd', type: 'date', value: '2026-01-31' }] },
      { metafields: [{ key: 'd', type: 'money', value: 1 }] },
      'metafields.0.type',
    ],
    [
      'price schema target customers needs channels',
      {
        priceSchemas: [
          { name: 'Retail', content: { amount: 9 }, currency: 'USD', target: 'customers', channels: ['web'] },
        ],
      },
      { priceSchemas: [{ name: 'Retail', content: { amount: 9 }, currency: 'USD', target: 'customers' }] },
      'priceSchemas.0.channels',
    ],
    [
      'price schema target segment needs segment',
      {
        priceSchemas: [
          { name: 'VIP', content: {}, currency: 'MXN', target: 'segment', segment: 'vip', isWholesale: true },
        ],
      },
      { priceSchemas: [{ name: 'VIP', content: {}, currency: 'MXN', target: 'segment' }] },
      'priceSchemas.0.segment',
    ],
    [
      'cost reasons',
      { costs: [{ type: 'money', cost: 1, currency: 'USD', reason: 'delivery-packaging' }] },
      { costs: [{ type: 'money', cost: 1, currency: 'USD', reason: 'shipping' }] },
      'costs.0.reason',
    ],
    [
      'binding channel types come from the registry',
      { bindings: [{ channelId: 'c1', handle: 'h', type: 'amazon' }] },
      { bindings: [{ channelId: 'c1', handle: 'h', type: 'pos' }] },
      'bindings.0.type',
    ],
    ['minAlertStock ≥ 0', { minAlertStock: 0 }, { minAlertStock: -2 }, 'minAlertStock'],
  ];

  test.each(cases)('%s', async (_name, ok, bad, field) => {
    await expectCreated(product(ok));
    await expectRefused(product(bad), field);
  });

  test('currency defaults to USD, taxable to true, sellIfOutOfStock to false, minAlertStock to 5', async () => {
    expect(await expectCreated(product())).toMatchObject({
      currency: 'USD',
      taxable: true,
      sellIfOutOfStock: false,
      minAlertStock: 5,
      categoryMap: [],
    });
  });

  test('both spellings of a channel type resolve to one stored type', async () => {
    const created = await expectCreated(
      product({
        bindings: [
          { channelId: 'c1', handle: 'h1', type: 'mercado-libre' },
          { channelId: 'c2', handle: 'h2', type: 'MercadoLibre'.toLowerCase() },
        ],
      }),
    );
    expect(created.bindings.map((b: { type: string }) => b.type)).toEqual(['mercadolibre', 'mercadolibre']);
    expect(created.bindings[0]).toMatchObject({ reservedStock: 0, overrides: [], customValues: [] });
  });
});

describe('variants', () => {
  const variant = (o: Record<string, unknown> = {}) => ({
    sku: uniqueSku('v'),
    title: { value: 'V' },
    price: 5,
    position: 0,
    ...o,
  });

  test('options reference product option ids', async () => {
    const options = [{ id: 'color', name: 'Color', values: ['Red'] }];
    await expectCreated(
      product({ options, variants: [variant({ options: [{ id: 'color', name: 'Color', value: 'Red' }] })] }),
    );
    await expectRefused(
      product({ options, variants: [variant({ options: [{ id: 'size', name: 'Size', value: 'M' }] })] }),
      'variants.0.options.0.id',
    );
  });

  test('position ≥ 0, productType physical/digital/service, compareAtPrice not compared with price', async () => {
    const created = await expectCreated(
      product({ variants: [variant({ productType: 'digital', price: 10, compareAtPrice: 5 })] }),
    );
    expect(created.variants[0]).toMatchObject({
      productType: 'digital',
      compareAtPrice: 5,
      taxable: true,
      sellIfOutOfStock: false,
    });
    expect((await expectCreated(product({ variants: [variant()] }))).variants[0].productType).toBe('physical');
    await expectRefused(product({ variants: [variant({ position: -1 })] }), 'variants.0.position');
    await expectRefused(product({ variants: [variant({ productType: 'bundle' })] }), 'variants.0.productType');
  });

  test('minAlertStock inherits from the product, else 5; its own value wins', async () => {
    const inherits = await expectCreated(
      product({ minAlertStock: 7, variants: [variant(), variant({ position: 1, minAlertStock: 2 })] }),
    );
    expect(inherits.variants.map((v: { minAlertStock: number }) => v.minAlertStock)).toEqual([7, 2]);
    expect((await expectCreated(product({ variants: [variant()] }))).variants[0].minAlertStock).toBe(5);
  });

  test('no stock field on input, and imageId must reference a media id', async () => {
    await expectRefused(
      product({ variants: [variant({ stock: 4 })] }),
      'variants.0.stock',
      'validation-error',
      'inventory',
    );
    const media = [{ id: 'img1', src: 'https://x.test/1.png', name: '1', position: 0, alt: { value: '1' } }];
    expect(
      (await expectCreated(product({ media, variants: [variant({ imageId: 'img1' })] }))).variants[0].imageId,
    ).toBe('img1');
    await expectRefused(product({ media, variants: [variant({ imageId: 'img2' })] }), 'variants.0.imageId');
  });
});

describe('bundleConfig', () => {
  test('only on bundles; components are SKUs of the tenant (product or variant), quantity ≥ 1, never the bundle itself', async () => {
    const part = await expectCreated(
      product({ variants: [{ sku: uniqueSku('pv'), title: { value: 'V' }, price: 1, position: 0 }] }),
    );
    const components = [
      { productSku: part.sku.toLowerCase() },
      { productSku: part.variants[0].sku, quantity: 2, variantMode: 'any' },
    ];
    const bundle = await expectCreated(product({ productType: 'bundle', bundleConfig: { components } }));
    expect(bundle.bundleConfig).toEqual({
      inventoryMode: 'calculated',
      components: [
        { productSku: part.sku, quantity: 1, variantMode: 'fixed', required: true },
        { productSku: part.variants[0].sku, quantity: 2, variantMode: 'any', required: true },
      ],
    });
    await expectRefused(product({ productType: 'physical', bundleConfig: { components } }), 'bundleConfig');
    await expectRefused(
      product({ productType: 'bundle', bundleConfig: { components: [{ productSku: 'NO-SUCH-SKU-XYZ' }] } }),
      'bundleConfig.components.0.productSku',
    );
    await expectRefused(
      product({ productType: 'bundle', bundleConfig: { components: [{ productSku: part.sku, quantity: 0 }] } }),
      'bundleConfig.components.0.quantity',
    );
    await expectRefused(
      product({ productType: 'bundle', bundleConfig: { components: [] } }),
      'bundleConfig.components',
    );
    const self = uniqueSku('self');
    await expectRefused(
      product({ sku: self, productType: 'bundle', bundleConfig: { components: [{ productSku: self }] } }),
      'bundleConfig.components.0.productSku',
      'validation-error',
      'may not contain itself',
    );
  });

  test('a product a bundle names (itself or a variant) cannot be deleted until the bundle lets it go', async () => {
    const part = await expectCreated(
      product({ variants: [{ sku: uniqueSku('dv'), title: { value: 'V' }, price: 1, position: 0 }] }),
    );
    const bundle = await expectCreated(
      product({ productType: 'bundle', bundleConfig: { components: [{ productSku: part.variants[0].sku }] } }),
    );
    const refused = await api.delete(`/products/${part.id}`);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: 'validation-error',
      details: { reason: 'in-use', usedBy: [{ sku: bundle.sku, as: 'bundle' }] },
    });
    expect((await api.get(`/products/${part.id}`)).status).toBe(200);
    const { id: _id, createdAt: _c, updatedAt: _u, version: _v, tenantId: _t, ...rest } = bundle;
    const other = await expectCreated(product());
    const edited = { ...rest, bundleConfig: { components: [{ productSku: other.sku }] } };
    expect((await api.put(`/products/${bundle.id}`, edited)).status).toBe(200);
    expect((await api.delete(`/products/${part.id}`)).status).toBe(200);
  });
});

describe('supply, material, BOM and modifiers are stored with their shapes', () => {
  test('supplyConfig defaults', async () => {
    const created = await expectCreated(
      product({
        productType: 'supply',
        supplyConfig: { consumptionUnit: 'pza', stockAlerts: { minStock: 1, reorderPoint: 2, reorderQuantity: 10 } },
      }),
    );
    expect(created.supplyConfig).toEqual({
      supplyCategory: 'other',
      consumptionUnit: 'pza',
      stockAlerts: { minStock: 1, reorderPoint: 2, reorderQuantity: 10, alertEmails: [], alertEnabled: true },
    });
    await expectRefused(
      product({ supplyConfig: { supplyCategory: 'food', consumptionUnit: 'pza' } }),
      'supplyConfig.supplyCategory',
    );
  });

  test('materialConfig requires baseUnit, costing and stockAlerts; precision ≤ 6', async () => {
    const materialConfig = {
      baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
      costing: { method: 'fifo' },
      stockAlerts: { minStock: 0, reorderPoint: 0, reorderQuantity: 0 },
    };
    expect(
      (await expectCreated(product({ productType: 'material', materialConfig }))).materialConfig.lotTrackingEnabled,
    ).toBe(false);
    await expectRefused(
      product({ materialConfig: { ...materialConfig, baseUnit: { code: 'kg', name: 'Kg', precision: 7 } } }),
      'materialConfig.baseUnit.precision',
    );
    await expectRefused(
      product({ materialConfig: { ...materialConfig, costing: { method: 'random' } } }),
      'materialConfig.costing.method',
    );
  });

  test('billOfMaterials: sequence assigned in order from 0, wastage ≤ 100, calculatedCost is read-only', async () => {
    // components name materials of the tenant (test/api/bom.test.ts has the refusals)
    for (const sku of ['flour', 'sugar', 'honey']) {
      const res = await api.post('/products/materials', {
        sku,
        title: sku,
        baseUnit: { code: 'kg', name: 'Kilogram' },
      });
      expect([201, 400]).toContain(res.status); // 400 duplicate on a rerun against a kept database
    }
    const billOfMaterials = {
      consumptionMode: 'on_sale',
      yield: { quantity: 1, unit: 'pza' },
      components: [
        { materialSku: 'flour', quantity: 0.2, unit: 'kg' },
        {
          materialSku: 'sugar',
          quantity: 0.05,
          unit: 'kg',
          substitutes: [{ materialSku: 'honey', conversionFactor: 0.8 }],
        },
      ],
      wastagePercent: 5,
    };
    const created = await expectCreated(product({ billOfMaterials }));
    expect(
      created.billOfMaterials.components.map((c: { sequence: number; materialSku: string }) => [
        c.sequence,
        c.materialSku,
      ]),
    ).toEqual([
      [0, 'FLOUR'],
      [1, 'SUGAR'],
    ]);
    await expectRefused(
      product({ billOfMaterials: { ...billOfMaterials, wastagePercent: 101 } }),
      'billOfMaterials.wastagePercent',
    );
    await expectRefused(
      product({ billOfMaterials: { ...billOfMaterials, calculatedCost: { value: 1, currency: 'USD' } } }),
      'billOfMaterials.calculatedCost',
      'validation-error',
      'read-only',
    );
  });

  test('modifiersConfig: server ids and group codes; selection rules checked', async () => {
    // a modifier's consumption names a material of the tenant in one of its units
    await api.post('/products/materials', {
      sku: 'cheese',
      title: 'Cheese',
      baseUnit: { code: 'kg', name: 'Kilogram' },
      alternativeUnits: [{ code: 'slice', conversionFactor: 0.02 }],
    });
    const group = {
      name: { value: 'Extras' },
      selectionRule: { minSelections: 0, maxSelections: 2 },
      modifiers: [
        {
          name: 'Cheese',
          priceAdjustment: { type: 'fixed', value: 1.5 },
          inventoryConsumption: [{ sku: 'cheese', quantity: 1, unit: 'slice' }],
        },
      ],
    };
    const created = await expectCreated(product({ modifiersConfig: { enabled: true, groups: [group] } }));
    const g = created.modifiersConfig.groups[0];
    expect(g.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(g.code).toBe('group-1');
    expect(g.modifiers[0]).toMatchObject({
      type: 'addon',
      available: true,
      isDefault: false,
      inventoryConsumption: [{ sku: 'CHEESE', quantity: 1, unit: 'slice' }],
    });
    expect(g.modifiers[0].id).toMatch(/^[0-9a-f-]{36}$/);
    await expectRefused(
      product({ modifiersConfig: { groups: [{ ...group, selectionRule: { minSelections: 3, maxSelections: 1 } }] } }),
      'modifiersConfig.groups.0.selectionRule.maxSelections',
    );
    await expectRefused(
      product({ modifiersConfig: { groups: [{ ...group, modifiers: [] }] } }),
      'modifiersConfig.groups.0.modifiers',
    );
  });
});

describe('fields that are not stored, read-only or unknown: a 400 naming each, nothing dropped', () => {
  test('not-persisted fields name where the data lives instead', async () => {
    const fields = {
      inventoryQuantity: 3,
      categoryString: 'A > B',
      attributeGroups: [],
      warranty: '1y',
      preparationTime: 5,
      localization: {},
      marketplaceCategories: [],
    };
    const res = await expectRefused(product(fields), 'inventoryQuantity');
    const named = Object.fromEntries(
      res.body.fieldErrors.map((f: { field: string; message: string }) => [f.field, f.message]),
    );
    expect(Object.keys(named).sort()).toEqual(Object.keys(fields).sort());
    expect(named.inventoryQuantity).toContain('/inventory');
    expect(named.categoryString).toContain('category');
    expect(named.preparationTime).toContain('billOfMaterials.prepTimeMinutes');
    expect(named.marketplaceCategories).toContain('/products/marketplace-categories');
  });

  test.each(['inventoryCost', 'inventoryCostMethod', 'embeddings', 'embeddingMetadata'])(
    '%s is read-only',
    async (field) => {
      await expectRefused(
        product({ [field]: field === 'inventoryCost' ? 1 : {} }),
        field,
        'validation-error',
        'read-only',
      );
    },
  );

  test('any other unknown field is named, at any depth', async () => {
    await expectRefused(product({ colour: 'red' }), 'colour', 'validation-error', 'not a known field');
    await expectRefused(product({ seo: { keywords: 'a' } }), 'seo.keywords');
    await expectRefused(product({ id: 'abc' }), 'id', 'validation-error', 'server-managed');
  });

  test('a body that is not an object', async () => {
    expectError(
      await api.post('/products', undefined, { raw: '[1,2]', headers: { 'content-type': 'application/json' } }),
      400,
      'validation-error',
    );
  });
});

describe('hostile input is a 4xx, never a 500, and writes nothing', () => {
  /** JSON nested 5,000 levels deep under `field`: the body parser refuses it (deeper than 64) before any handler runs. */
  const deeplyNested = (sku: string, field: string, depth = 5000) =>
    `{"sku":"${sku}","title":{"value":"deep"},"price":1,"${field}":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
  const asJson = { 'content-type': 'application/json' };

  test('a create body nested 5,000 levels deep is 400 validation-error; nothing stored', async () => {
    const sku = uniqueSku('deep');
    const res = await api.post('/products', undefined, { raw: deeplyNested(sku, 'fitmentConfig'), headers: asJson });
    expectError(res, 400, 'validation-error');
    expect(await stored(sku)).toBe(0);
  });

  test('an update body nested 5,000 levels deep is 400 validation-error; the product is unchanged', async () => {
    const created = await expectCreated(product());
    const res = await api.put(`/products/${created.id}`, undefined, {
      raw: deeplyNested(created.sku, 'fitmentConfig'),
      headers: asJson,
    });
    expectError(res, 400, 'validation-error');
    expect((await api.get(`/products/${created.id}`)).body).toEqual(created);
  });
});

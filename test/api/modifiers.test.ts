import { ApiClient, type HttpResult } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import { SCOPES, type Scope } from '../../shared/auth/scopes';
import { allRoutes } from '../../api/routes';
import { modifierRoutes } from '../../api/modifiers/routes';
import { localTime } from '../../shared/modifiers/selection';

/**
 * Modifiers through HTTP on the real stack: configure, read, update and delete a group, disable,
 * validate a selection (prices, rules, the tenant's time zone), the errors of each, the
 * permission matrix and tenant isolation.
 */
let deps: TestDeps;
let app: { url: string; close: () => Promise<void> };
let api: ApiClient;
let tenantId: string;
const P = `MD${Date.now().toString(36).toUpperCase()}`; // this run's SKU prefix
let n = 0;
const MOZZ = `${P}-MOZZ`;
const BOX = `${P}-BOX`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function must(res: HttpResult, status: number, what: string): any {
  if (res.status !== status) throw new Error(`${what} → ${res.status} ${res.text}`);
  return res.body;
}

/** Product ids by SKU as sent. */
const productIds = new Map<string, string>();

/** A new product of this run (price 10, variants -L at 12.50 and -S at 9); its SKU as sent, lower-case. */
async function createProduct(client = api): Promise<string> {
  const sku = `${P}-burger${++n}`.toLowerCase();
  const created = must(
    await client.post('/products', {
      sku,
      title: { value: 'Burger' },
      price: 10,
      currency: 'USD',
      variants: [
        { sku: `${sku}-l`, title: { value: 'Large' }, price: 12.5, position: 0 },
        { sku: `${sku}-s`, title: { value: 'Small' }, price: 9, position: 1 },
      ],
    }),
    201,
    `product ${sku}`,
  );
  productIds.set(sku, created.id);
  return sku;
}

const path = (sku: string, rest = '') => `/products/${sku}/modifiers${rest}`;

/** Size (required, exactly one) and Extras (0–3, duplicates up to 2 each), as the spec's input. */
const configureBody = (extra: Record<string, unknown> = {}) => ({
  enabled: true,
  groups: [
    {
      name: 'Size',
      displayName: 'Pick a size',
      selectionRule: { minSelections: 1, maxSelections: 1, exactlyOne: true },
      modifiers: [
        { name: 'Regular' },
        { name: 'Jumbo', priceAdjustment: { type: 'replace', value: 15 }, sortOrder: 5 },
      ],
    },
    {
      name: { value: 'Extras' },
      selectionRule: { minSelections: 0, maxSelections: 3, allowDuplicates: true, maxPerModifier: 2 },
      modifiers: [
        {
          name: 'Cheese',
          priceAdjustment: { type: 'fixed', value: 1.5 },
          inventoryConsumption: { materialSku: MOZZ.toLowerCase(), quantity: 30, unit: 'G' },
        },
        { name: 'Bacon', priceAdjustment: { type: 'percentage', value: 10 }, isAvailable: true },
        {
          name: 'Takeaway box',
          inventoryConsumption: { materialSku: BOX, quantity: 1, unit: 'pcs' },
          isAvailable: false,
        },
      ],
      sortOrder: 1,
    },
  ],
  ...extra,
});

async function configure(sku: string, body: unknown = configureBody(), client = api): Promise<any> {
  return must(await client.put(path(sku), body), 200, `configure ${sku}`).modifiersConfig;
}

beforeAll(async () => {
  deps = await TestDeps.open();
  app = await deps.serveApp(allRoutes);
  const tenant = await deps.tenantWithKey();
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key, app.url);
  must(
    await api.post('/products/materials', {
      sku: MOZZ,
      title: 'Mozzarella',
      baseUnit: { code: 'kg', name: 'Kilogram' },
      alternativeUnits: [{ code: 'g', name: 'Gram', conversionFactor: 0.001 }],
    }),
    201,
    'material',
  );
  must(await api.post('/products/supplies', { sku: BOX, title: 'Box', consumptionUnit: 'pcs' }), 201, 'supply');
});
afterAll(async () => {
  await app?.close();
  await deps.close();
});

describe('configure and read', () => {
  test('a product never configured: {enabled: false, groups: []}', async () => {
    const sku = await createProduct();
    for (const spelled of [sku, sku.toUpperCase()]) {
      const res = await api.get(path(spelled));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ enabled: false, groups: [] });
    }
  });

  test('configure answers {sku, modifiersConfig} in the stored shape, and GET reads it back', async () => {
    const sku = await createProduct();
    const res = await api.put(path(sku), configureBody({ conditions: { variantSkus: [`${sku}-l`] } }));
    expect(res.status).toBe(200);
    expect(res.body.sku).toBe(sku.toUpperCase());
    const config = res.body.modifiersConfig;
    const [size, extras] = config.groups;
    expect(config).toEqual({
      enabled: true,
      groups: [
        {
          id: expect.stringMatching(UUID),
          code: 'group-1',
          name: { value: 'Size', translations: [] },
          description: 'Pick a size',
          selectionRule: { minSelections: 1, maxSelections: 1, exactlyOne: true, allowDuplicates: false },
          modifiers: [
            {
              id: expect.stringMatching(UUID),
              code: 'group-1-1',
              name: 'Regular',
              type: 'addon',
              inventoryConsumption: [],
              available: true,
              isDefault: false,
              position: 0,
              channelBindings: [],
            },
            {
              id: expect.stringMatching(UUID),
              code: 'group-1-2',
              name: 'Jumbo',
              type: 'addon',
              priceAdjustment: { type: 'replace', value: 15, currency: 'USD' },
              inventoryConsumption: [],
              available: true,
              isDefault: false,
              position: 5,
              channelBindings: [],
            },
          ],
          position: 0,
          active: true,
          channelBindings: [],
        },
        {
          id: expect.stringMatching(UUID),
          code: 'group-2',
          name: { value: 'Extras', translations: [] },
          selectionRule: {
            minSelections: 0,
            maxSelections: 3,
            exactlyOne: false,
            allowDuplicates: true,
            maxPerModifier: 2,
          },
          modifiers: [
            expect.objectContaining({
              code: 'group-2-1',
              name: 'Cheese',
              priceAdjustment: { type: 'fixed', value: 1.5, currency: 'USD' },
              inventoryConsumption: [{ sku: MOZZ, quantity: 30, unit: 'g' }],
              available: true,
            }),
            expect.objectContaining({ code: 'group-2-2', name: 'Bacon', available: true }),
            expect.objectContaining({
              code: 'group-2-3',
              inventoryConsumption: [{ sku: BOX, quantity: 1, unit: 'pcs' }],
              available: false,
            }),
          ],
          position: 1,
          active: true,
          channelBindings: [],
        },
      ],
      conditions: { variantSkus: [`${sku}-l`.toUpperCase()] },
    });
    expect(new Set([size.id, extras.id, ...size.modifiers.map((m: any) => m.id)]).size).toBe(4);
    expect((await api.get(path(sku.toUpperCase()))).body).toEqual(config);
    // stored on the product itself
    const product = must(await api.get(`/products/${productIds.get(sku)}`), 200, 'product');
    expect(product.modifiersConfig).toEqual(config);
  });

  test('configure replaces everything: new ids, the old groups gone', async () => {
    const sku = await createProduct();
    const first = await configure(sku);
    const second = await configure(sku, { enabled: false, groups: [configureBody().groups[1]] });
    expect(second.enabled).toBe(false);
    expect(second.groups).toHaveLength(1);
    expect(second.groups[0].code).toBe('group-1');
    expect(second.groups[0].id).not.toBe(first.groups[1].id);
  });

  test.each<[string, (b: any) => void, string, RegExp]>([
    [
      'an unknown material',
      (b) => (b.groups[1].modifiers[0].inventoryConsumption.materialSku = `${P}-nothing`),
      'groups.1.modifiers.0.inventoryConsumption.materialSku',
      new RegExp(`${P}-NOTHING`),
    ],
    [
      'a unit the material does not have',
      (b) => (b.groups[1].modifiers[0].inventoryConsumption.unit = 'lb'),
      'groups.1.modifiers.0.inventoryConsumption.unit',
      new RegExp(`'lb' is not a unit of ${MOZZ} \\(its units: kg, g\\)`),
    ],
    [
      'minSelections above maxSelections',
      (b) => (b.groups[1].selectionRule = { minSelections: 4, maxSelections: 3 }),
      'groups.1.selectionRule.maxSelections',
      /at least minSelections/,
    ],
    [
      'exactlyOne against min/max',
      (b) => (b.groups[0].selectionRule = { minSelections: 0, maxSelections: 0, exactlyOne: true }),
      'groups.0.selectionRule.exactlyOne',
      /contradicts/,
    ],
    ['enabled missing', (b) => delete b.enabled, 'enabled', /required/],
    ['a group without modifiers', (b) => (b.groups[0].modifiers = []), 'groups.0.modifiers', /fewer than 1/],
    [
      'an unknown price adjustment type',
      (b) => (b.groups[0].modifiers[1].priceAdjustment.type = 'bogus'),
      'groups.0.modifiers.1.priceAdjustment.type',
      /allowed values/,
    ],
    [
      'a variantSkus entry of no variant',
      (b) => (b.conditions = { variantSkus: ['X-1'] }),
      'conditions.variantSkus.0',
      /X-1/,
    ],
    [
      'a bad time of day',
      (b) => (b.conditions = { availableHours: { start: '24:00', end: '02:00' } }),
      'conditions.availableHours.start',
      /pattern/,
    ],
  ])('refused with 400 validation-error naming the field: %s', async (_name, spoil, field, message) => {
    const sku = await createProduct();
    const before = await configure(sku);
    const body: any = configureBody();
    spoil(body);
    const res = await api.put(path(sku), body);
    expectError(res, 400, 'validation-error');
    expect(res.body.fieldErrors.map((f: { field: string }) => f.field)).toContain(field);
    expect(JSON.stringify(res.body.fieldErrors)).toMatch(message);
    expect((await api.get(path(sku))).body).toEqual(before); // nothing written
  });
});

describe('not found', () => {
  test('an unknown SKU, a variant SKU and a material SKU are no product: 404 on every route', async () => {
    const sku = await createProduct();
    const config = await configure(sku);
    const groupId = config.groups[0].id;
    for (const other of [`${P}-none`, `${sku}-l`, MOZZ]) {
      const answers = await Promise.all([
        api.get(path(other)),
        api.put(path(other), configureBody()),
        api.delete(path(other)),
        api.post(path(other, '/validate'), { selections: [] }),
        api.patch(path(other, `/${groupId}`), { displayName: 'x' }),
        api.delete(path(other, `/${groupId}`)),
      ]);
      for (const res of answers) expectError(res, 404, 'not-found');
    }
  });
});

describe('update one group', () => {
  test('fields replace, the rule is merged, id and code stay; the other group is untouched', async () => {
    const sku = await createProduct();
    const [size, extras] = (await configure(sku)).groups;
    const res = await api.patch(path(sku, `/${extras.id}`), {
      name: 'Toppings',
      displayName: 'Add toppings',
      selectionRule: { maxSelections: 5 },
      sortOrder: 9,
      channelBindings: [{ channelId: 'ch-1', externalGroupId: 'ext-9' }],
    });
    expect(res.status).toBe(200);
    expect(res.body.sku).toBe(sku.toUpperCase());
    const [size2, extras2] = res.body.modifiersConfig.groups;
    expect(size2).toEqual(size);
    expect(extras2).toEqual({
      ...extras,
      name: { value: 'Toppings', translations: [] },
      description: 'Add toppings',
      selectionRule: { ...extras.selectionRule, maxSelections: 5 },
      position: 9,
      channelBindings: [{ channelId: 'ch-1', externalGroupId: 'ext-9', isEnabled: true }],
    });
    expect((await api.get(path(sku))).body).toEqual(res.body.modifiersConfig);
  });

  test("modifiers replace the group's modifiers, converted as in configure", async () => {
    const sku = await createProduct();
    const [, extras] = (await configure(sku)).groups;
    const res = await api.patch(path(sku, `/${extras.id}`), {
      modifiers: [{ name: 'Double cheese', inventoryConsumption: { materialSku: MOZZ, quantity: 0.06, unit: 'KG' } }],
    });
    expect(res.status).toBe(200);
    expect(res.body.modifiersConfig.groups[1].modifiers).toEqual([
      {
        id: expect.stringMatching(UUID),
        // a new modifier: its code follows the group's three, never taking one of theirs back
        code: 'group-2-4',
        name: 'Double cheese',
        type: 'addon',
        inventoryConsumption: [{ sku: MOZZ, quantity: 0.06, unit: 'kg' }],
        available: true,
        isDefault: false,
        position: 0,
        channelBindings: [],
      },
    ]);
  });

  test('refusals: an unknown group 404 (codes are not ids), an empty body, a rule made contradictory, an unknown material', async () => {
    const sku = await createProduct();
    const config = await configure(sku);
    const extras = config.groups[1];
    expectError(
      await api.patch(path(sku, '/6f1c1d1e-0000-4000-8000-000000000000'), { displayName: 'x' }),
      404,
      'not-found',
    );
    expectError(await api.patch(path(sku, '/group-2'), { displayName: 'x' }), 404, 'not-found');
    expectError(await api.patch(path(sku, `/${extras.id}`), {}), 400, 'validation-error');
    const contradictory = await api.patch(path(sku, `/${extras.id}`), { selectionRule: { minSelections: 4 } });
    expectError(contradictory, 400, 'validation-error');
    expect(contradictory.body.field).toBe('selectionRule.maxSelections');
    const unknown = await api.patch(path(sku, `/${extras.id}`), {
      modifiers: [{ name: 'Ghost', inventoryConsumption: { materialSku: `${P}-ghost`, quantity: 1, unit: 'kg' } }],
    });
    expectError(unknown, 400, 'validation-error');
    expect(unknown.body.field).toBe('modifiers.0.inventoryConsumption.materialSku');
    expect((await api.get(path(sku))).body).toEqual(config);
  });
});

describe('disable and delete a group', () => {
  test('disable: enabled false, groups kept; again (or never configured) the same 200', async () => {
    const sku = await createProduct();
    const config = await configure(sku);
    for (let i = 0; i < 2; i++) {
      const res = await api.delete(path(sku));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, message: expect.stringContaining(sku.toUpperCase()) });
    }
    expect((await api.get(path(sku))).body).toEqual({ ...config, enabled: false });
    const bare = await createProduct();
    expect((await api.delete(path(bare))).body.success).toBe(true);
    expect((await api.get(path(bare))).body).toEqual({ enabled: false, groups: [] });
  });

  test('delete one group: gone, the other keeps its code; an unknown id is a silent 200', async () => {
    const sku = await createProduct();
    const [size, extras] = (await configure(sku)).groups;
    const res = await api.delete(path(sku, `/${size.id}`));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: expect.any(String) });
    expect((await api.get(path(sku))).body).toEqual({ enabled: true, groups: [extras] });
    for (const unknown of [size.id, 'no-such-group']) {
      const again = await api.delete(path(sku, `/${unknown}`));
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ success: true, message: expect.any(String) });
    }
    expect((await api.get(path(sku))).body).toEqual({ enabled: true, groups: [extras] });
  });
});

describe('validate a selection', () => {
  let sku: string;
  let size: any;
  let extras: any;
  beforeAll(async () => {
    sku = await createProduct();
    [size, extras] = (await configure(sku)).groups;
  });
  const validate = (body: unknown, client = api) => client.post(path(sku, '/validate'), body);

  test('a valid selection on a variant: prices, selected modifiers and materials', async () => {
    const res = await validate({
      variantSku: `${sku}-L`,
      selections: [
        { groupId: size.id, modifierIds: [size.modifiers[0].id] },
        { groupId: extras.id, modifierIds: [extras.modifiers[0].id, extras.modifiers[1].id], quantities: [2, 1] },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      valid: true,
      errors: [],
      selectedModifiers: [
        {
          groupId: size.id,
          groupName: 'Size',
          modifierId: size.modifiers[0].id,
          modifierName: 'Regular',
          quantity: 1,
          priceAdjustment: null,
          inventoryConsumption: [],
        },
        {
          groupId: extras.id,
          groupName: 'Extras',
          modifierId: extras.modifiers[0].id,
          modifierName: 'Cheese',
          quantity: 2,
          priceAdjustment: { type: 'fixed', value: 1.5, currency: 'USD', amount: 3 },
          inventoryConsumption: [{ sku: MOZZ, quantity: 60, unit: 'g' }],
        },
        {
          groupId: extras.id,
          groupName: 'Extras',
          modifierId: extras.modifiers[1].id,
          modifierName: 'Bacon',
          quantity: 1,
          // 10 % of the variant's 12.50
          priceAdjustment: { type: 'percentage', value: 10, currency: 'USD', amount: 1.25 },
          inventoryConsumption: [],
        },
      ],
      totalPriceAdjustment: 4.25,
      materialsToConsume: [{ sku: MOZZ, quantity: 60, unit: 'g' }],
    });
  });

  test('replace on the product price: 15.00 over 10.00', async () => {
    const res = await validate({ selections: [{ groupId: size.id, modifierIds: [size.modifiers[1].id] }] });
    expect(res.body).toMatchObject({ valid: true, totalPriceAdjustment: 5 });
  });

  test('broken rules: 200 valid false with each rule named', async () => {
    const res = await validate({
      selections: [
        {
          groupId: extras.id,
          modifierIds: [extras.modifiers[0].id, extras.modifiers[2].id, 'nope'],
          quantities: [3, 1, 1],
        },
        { groupId: 'no-such-group', modifierIds: ['x'] },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(false);
    expect(res.body.errors).toEqual([
      { groupId: extras.id, modifierId: extras.modifiers[2].id, rule: 'unavailable', message: expect.any(String) },
      { groupId: extras.id, modifierId: 'nope', rule: 'unknown-modifier', message: expect.any(String) },
      { groupId: extras.id, modifierId: extras.modifiers[0].id, rule: 'maxPerModifier', message: expect.any(String) },
      { groupId: 'no-such-group', rule: 'unknown-group', message: expect.any(String) },
      { groupId: size.id, rule: 'minSelections', message: expect.stringContaining('required') },
    ]);
  });

  test('400: quantities not parallel to modifierIds, a variant of another product, a malformed body', async () => {
    const mismatch = await validate({
      selections: [{ groupId: size.id, modifierIds: [size.modifiers[0].id], quantities: [1, 2] }],
    });
    expectError(mismatch, 400, 'validation-error');
    expect(mismatch.body.field).toBe('selections.0.quantities');
    const variant = await validate({ variantSku: `${P}-other`, selections: [] });
    expectError(variant, 400, 'validation-error');
    expect(variant.body.field).toBe('variantSku');
    expectError(await validate({ selections: [{ groupId: size.id }] }), 400, 'validation-error');
    expectError(await validate({}), 400, 'validation-error');
  });

  test('conditions.variantSkus: only the listed variant takes modifiers', async () => {
    const other = await createProduct();
    const cfg = await configure(other, configureBody({ conditions: { variantSkus: [`${other}-l`] } }));
    const selections = [{ groupId: cfg.groups[0].id, modifierIds: [cfg.groups[0].modifiers[0].id] }];
    const post = (body: unknown) => api.post(path(other, '/validate'), body);
    expect((await post({ variantSku: `${other}-l`, selections })).body.valid).toBe(true);
    expect((await post({ variantSku: `${other}-s`, selections })).body.errors.map((e: any) => e.rule)).toEqual([
      'variant',
    ]);
  });

  test('a disabled configuration takes no selection', async () => {
    const other = await createProduct();
    const cfg = await configure(other);
    must(await api.delete(path(other)), 200, 'disable');
    const res = await api.post(path(other, '/validate'), {
      selections: [{ groupId: cfg.groups[0].id, modifierIds: [cfg.groups[0].modifiers[0].id] }],
    });
    expect(res.body).toMatchObject({ valid: false, errors: [{ rule: 'disabled' }] });
    expect((await api.post(path(other, '/validate'), { selections: [] })).body.valid).toBe(true);
  });

  test("availableHours are read in the tenant's time zone", async () => {
    const zoned = await deps.tenancy.createTenant('modifiers in Mexico City', { timeZone: 'America/Mexico_City' });
    expect(zoned.settings.timeZone).toBe('America/Mexico_City');
    const mx = new ApiClient((await deps.tenancy.issueKey(zoned._id, [...SCOPES])).key, app.url);
    // a two-hour window around now in Mexico City: 6 hours away from now in UTC, so closed there
    const { minutes } = localTime(new Date(), 'America/Mexico_City');
    const at = (m: number) => {
      const x = (m + 24 * 60) % (24 * 60);
      return `${String(Math.floor(x / 60)).padStart(2, '0')}:${String(x % 60).padStart(2, '0')}`;
    };
    const conditions = { availableHours: { start: at(minutes - 60), end: at(minutes + 60) } };
    const outcome = async (client: ApiClient) => {
      must(
        await client.post('/products/materials', {
          sku: MOZZ,
          title: 'Mozzarella',
          baseUnit: { code: 'kg', name: 'Kilogram' },
          alternativeUnits: [{ code: 'g', name: 'Gram', conversionFactor: 0.001 }],
        }),
        201,
        'material',
      );
      must(await client.post('/products/supplies', { sku: BOX, title: 'Box', consumptionUnit: 'pcs' }), 201, 'supply');
      const product = await createProduct(client);
      const cfg = await configure(product, configureBody({ conditions }), client);
      const res = await client.post(path(product, '/validate'), {
        selections: [{ groupId: cfg.groups[0].id, modifierIds: [cfg.groups[0].modifiers[0].id] }],
      });
      return must(res, 200, 'validate');
    };
    expect(await outcome(mx)).toMatchObject({ valid: true, errors: [] });
    const utc = new ApiClient((await deps.tenantWithKey()).key, app.url);
    expect(await outcome(utc)).toMatchObject({
      valid: false,
      errors: [{ rule: 'hours', message: expect.stringContaining('UTC') }],
    });
  });

  test('a tenant cannot be created with an unknown time zone', async () => {
    await expect(deps.tenancy.createTenant('nowhere', { timeZone: 'Mars/Olympus_Mons' })).rejects.toThrow(
      /Unknown time zone/,
    );
  });
});

describe('materials a modifier consumes', () => {
  test('cannot be deleted while a modifier uses them: 400 in-use', async () => {
    const sku = await createProduct();
    await configure(sku);
    const res = await api.delete(`/products/materials/${MOZZ}`);
    expectError(res, 400, 'validation-error');
    expect(res.body.details).toMatchObject({ reason: 'in-use' });
  });
});

describe('permission matrix', () => {
  interface Route {
    name: string;
    scope: Scope;
    method: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE';
    request: (sku: string, groupId: string) => { path: string; body?: unknown };
  }
  const routes: Route[] = [
    { name: 'get', scope: 'products:read', method: 'GET', request: (sku) => ({ path: path(sku) }) },
    {
      name: 'configure',
      scope: 'products:update',
      method: 'PUT',
      request: (sku) => ({ path: path(sku), body: configureBody() }),
    },
    { name: 'disable', scope: 'products:delete', method: 'DELETE', request: (sku) => ({ path: path(sku) }) },
    {
      name: 'validate',
      scope: 'products:read',
      method: 'POST',
      request: (sku) => ({ path: path(sku, '/validate'), body: { selections: [] } }),
    },
    {
      name: 'update a group',
      scope: 'products:update',
      method: 'PATCH',
      request: (sku, groupId) => ({ path: path(sku, `/${groupId}`), body: { displayName: 'Changed' } }),
    },
    {
      name: 'delete a group',
      scope: 'products:delete',
      method: 'DELETE',
      request: (sku) => ({ path: path(sku, '/no-such-group') }),
    },
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

  test('every modifiers route is in the matrix', () => {
    expect(modifierRoutes).toHaveLength(routes.length);
  });

  test.each(routes.map((r) => [r.name, r] as const))(
    '%s: no key → 401; every scope but the one it needs → 403; that scope alone → 200',
    async (_name, route) => {
      const sku = await createProduct();
      // a configuration the group routes can name; re-read after each request that replaces it
      const groupId = async () => (await api.get(path(sku))).body.groups[0]?.id ?? 'none';
      await configure(sku);
      const noKey = route.request(sku, await groupId());
      expectError(
        await api.as(null).request(route.method, noKey.path, { body: noKey.body }),
        401,
        'auth:invalid_token',
      );
      const denied = route.request(sku, await groupId());
      const refused = await api.as(allBut.get(route.scope)!).request(route.method, denied.path, { body: denied.body });
      expectError(refused, 403, 'auth:permission_denied');
      expect(refused.body.message).toContain(route.scope);
      const allowed = route.request(sku, await groupId());
      const res = await api.as(only.get(route.scope)!).request(route.method, allowed.path, { body: allowed.body });
      expect({ status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({ status: 200, body: 'ok' });
    },
  );
});

describe('tenant isolation', () => {
  test("another tenant's product is not found on any route, and stays as it was", async () => {
    const sku = await createProduct();
    const config = await configure(sku);
    const other = new ApiClient((await deps.tenantWithKey()).key, app.url);
    const groupId = config.groups[0].id;
    const answers = await Promise.all([
      other.get(path(sku)),
      other.put(path(sku), { enabled: false, groups: [] }),
      other.delete(path(sku)),
      other.post(path(sku, '/validate'), { selections: [] }),
      other.patch(path(sku, `/${groupId}`), { displayName: 'stolen' }),
      other.delete(path(sku, `/${groupId}`)),
    ]);
    for (const res of answers) expectError(res, 404, 'not-found');
    expect((await api.get(path(sku))).body).toEqual(config);
  });
});

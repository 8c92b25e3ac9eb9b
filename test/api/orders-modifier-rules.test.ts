import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * Order lines of products with modifiers: the product's selection rules hold with no selection
 * too (a required group must be chosen), and a modifier's price is added to a unit price with
 * fractions of a cent exactly.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `OMR${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'orders modifier rules');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

async function serviceProduct(tag: string): Promise<string> {
  const sku = `${P}-${tag}-${++n}`;
  const res = await api.post('/products', { sku, title: { value: tag }, price: 10, productType: 'service' });
  if (res.status !== 201) throw new Error(res.text);
  return res.body.sku;
}

async function configure(sku: string, groups: unknown[]): Promise<any[]> {
  const res = await api.put(`/products/${sku}/modifiers`, { enabled: true, groups });
  if (res.status !== 200) throw new Error(res.text);
  return res.body.modifiersConfig.groups;
}

test('an order line that skips a required modifier group (minSelections 1) is refused like the validate endpoint refuses it', async () => {
  const pizza = await serviceProduct('PIZZA');
  await configure(pizza, [
    {
      name: 'Size',
      selectionRule: { minSelections: 1, maxSelections: 1, exactlyOne: true },
      modifiers: [{ name: 'Regular' }, { name: 'Large', priceAdjustment: { type: 'fixed', value: 2 } }],
    },
  ]);
  // the product's own rules: no size chosen is invalid
  const verdict = await api.post(`/products/${pizza}/modifiers/validate`, { selections: [] });
  expect(verdict.status).toBe(200);
  expect(verdict.body).toMatchObject({ valid: false, errors: [{ rule: 'minSelections' }] });

  const res = await api.post('/orders', {
    externalId: `${P}-required`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: pizza, quantity: 1 }],
  });
  expect(res.status).toBe(400);
  expect(res.body?.error?.code).toBe('validation:invalid_input');
});

test('a sub-cent unit price plus a fixed modifier is not rounded before multiplying: 100 × (0.005 + 0.50) = 50.50', async () => {
  const screw = await serviceProduct('SCREW');
  const [finish] = await configure(screw, [
    {
      name: 'Finish',
      selectionRule: { minSelections: 0, maxSelections: 1 },
      modifiers: [{ name: 'Zinc', priceAdjustment: { type: 'fixed', value: 0.5 } }],
    },
  ]);
  const res = await api.post('/orders', {
    externalId: `${P}-subcent`,
    customerInfo: { name: 'Ana' },
    items: [
      {
        sku: screw,
        quantity: 100,
        price: 0.005,
        selectedModifiers: [{ groupId: finish.id, modifierId: finish.modifiers[0].id }],
      },
    ],
  });
  expect(res.status).toBe(201);
  expect(res.body.data.items[0]).toMatchObject({ price: 0.505, lineTotal: 50.5 });
});

test('the order names the missing group; choosing it is accepted and priced', async () => {
  const pizza = await serviceProduct('PIZZA2');
  const [size] = await configure(pizza, [
    {
      name: 'Size',
      selectionRule: { minSelections: 1, maxSelections: 1, exactlyOne: true },
      modifiers: [{ name: 'Regular' }, { name: 'Large', priceAdjustment: { type: 'fixed', value: 2 } }],
    },
  ]);
  const refused = await api.post('/orders', {
    externalId: `${P}-named`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: pizza, quantity: 1 }],
  });
  expect(refused.status).toBe(400);
  expect(refused.body.error.message).toMatch(/items\.0\.selectedModifiers: .*Size.*\(minSelections\)/);
  expect((await api.get('/orders', { query: { externalId: `${P}-named` } })).body.data ?? []).toEqual([]);
  const large = size.modifiers.find((m: any) => m.name === 'Large');
  const ok = await api.post('/orders', {
    externalId: `${P}-named`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: pizza, quantity: 2, selectedModifiers: [{ groupId: size.id, modifierId: large.id }] }],
  });
  expect(ok.status).toBe(201);
  expect(ok.body.data.items[0]).toMatchObject({ price: 12, lineTotal: 24 });
});

test('a product with modifiers switched off takes lines without a selection at its own price', async () => {
  const pizza = await serviceProduct('PIZZA3');
  await configure(pizza, [
    { name: 'Size', selectionRule: { minSelections: 1, maxSelections: 1 }, modifiers: [{ name: 'Regular' }] },
  ]);
  expect((await api.delete(`/products/${pizza}/modifiers`)).status).toBe(200);
  const res = await api.post('/orders', {
    externalId: `${P}-off`,
    customerInfo: { name: 'Ana' },
    items: [{ sku: pizza, quantity: 1 }],
  });
  expect(res.status).toBe(201);
  expect(res.body.data.items[0]).toMatchObject({ price: 10, lineTotal: 10 });
  expect(res.body.data.items[0]).not.toHaveProperty('selectedModifiers');
});

test("a replace modifier on a price with fractions of a cent: the line is the modifier's price", async () => {
  const screw = await serviceProduct('SCREW2');
  const [kind] = await configure(screw, [
    {
      name: 'Kind',
      selectionRule: { minSelections: 0, maxSelections: 1 },
      modifiers: [{ name: 'Titanium', priceAdjustment: { type: 'replace', value: 2 } }],
    },
  ]);
  const res = await api.post('/orders', {
    externalId: `${P}-replace`,
    customerInfo: { name: 'Ana' },
    items: [
      {
        sku: screw,
        quantity: 3,
        price: 0.005,
        selectedModifiers: [{ groupId: kind.id, modifierId: kind.modifiers[0].id }],
      },
    ],
  });
  expect(res.status).toBe(201);
  expect(res.body.data.items[0]).toMatchObject({ price: 2, lineTotal: 6 });
});

// bases whose half cent a double does not hold exactly (1.005 × 100 is 100.499…)
test.each([1.005, 1.015, 0.285, 1.255])(
  "a replace modifier on a line price of %s: the unit price is the modifier's 5.00, to the cent",
  async (price) => {
    const sku = await serviceProduct('REPL');
    const [kind] = await configure(sku, [
      {
        name: 'Kind',
        selectionRule: { minSelections: 0, maxSelections: 1 },
        modifiers: [{ name: 'Premium', priceAdjustment: { type: 'replace', value: 5 } }],
      },
    ]);
    const res = await api.post('/orders', {
      externalId: `${P}-repl-${price}`,
      customerInfo: { name: 'Ana' },
      items: [{ sku, quantity: 1, price, selectedModifiers: [{ groupId: kind.id, modifierId: kind.modifiers[0].id }] }],
    });
    expect(res.status).toBe(201);
    expect(res.body.data.items[0]).toMatchObject({ price: 5, lineTotal: 5 });
    expect(res.body.data.subtotal).toBe(5);
  },
);

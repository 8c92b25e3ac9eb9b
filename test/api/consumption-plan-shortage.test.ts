import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * How a consumption plans what it takes when the stock cannot cover everything: an optional BOM
 * component gives way to required needs of the same material (planned first), and a refusal
 * reports for a material both its own need and what it gives as another component's substitute.
 */
let deps: TestDeps;
let api: ApiClient;
let A: string;
const P = `CPS${Date.now().toString(36).toUpperCase()}`;
let n = 0;
type Body = Record<string, unknown>;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'consumption plan shortage');
  api = new ApiClient(t.key);
  A = systemLocationId(t.tenantId);
});
afterAll(() => deps.close());

async function material(tag: string): Promise<string> {
  const sku = `${P}-${tag}-${++n}`.toUpperCase();
  const res = await api.post('/products/materials', {
    sku,
    title: `M ${tag}`,
    baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
    alternativeUnits: [{ code: 'g', conversionFactor: 0.001 }],
  });
  if (res.status !== 201) throw new Error(res.text);
  return sku;
}
async function receive(sku: string, quantity: number) {
  const res = await api.post(`/products/materials/${sku}/stock/${A}`, { quantity, lot: { costPerUnit: 1 } });
  if (res.status !== 200) throw new Error(res.text);
}
const onHand = async (sku: string) => {
  const r = await api.get(`/products/materials/${sku}/stock/${A}`);
  return r.status === 404 ? 0 : r.body.quantity;
};
async function productDoc(tag: string, extra: Body): Promise<any> {
  const res = await api.post('/products', { sku: `${P}-${tag}-${++n}`, title: { value: tag }, price: 10, ...extra });
  if (res.status !== 201) throw new Error(res.text);
  return res.body;
}

test('an optional BOM component gives way to a selected modifier that needs the same material: consumed, not refused', async () => {
  const cheese = await material('CHEESE');
  await receive(cheese, 0.1);
  const pizza = await productDoc('PIZZA', {
    billOfMaterials: {
      consumptionMode: 'manual',
      yield: { quantity: 1, unit: 'pza' },
      components: [{ materialSku: cheese, quantity: 100, unit: 'g', required: false }],
    },
  });
  const cfg = await api.put(`/products/${pizza.sku}/modifiers`, {
    enabled: true,
    groups: [
      {
        name: 'Extras',
        selectionRule: { minSelections: 0, maxSelections: 1 },
        modifiers: [{ name: 'Extra cheese', inventoryConsumption: { materialSku: cheese, quantity: 100, unit: 'g' } }],
      },
    ],
  });
  expect(cfg.status).toBe(200);
  const g = cfg.body.modifiersConfig.groups[0];
  const res = await api.post('/products/materials/consumption/consume', {
    productSku: pizza.sku,
    locationId: A,
    selectedModifiers: [{ groupId: g.id, modifierId: g.modifiers[0].id }],
  });
  expect(res.status).toBe(200);
  expect(res.body.consumed).toEqual([expect.objectContaining({ materialSku: cheese, quantity: 0.1 })]);
  expect(await onHand(cheese)).toBe(0);
});

test('a substitute that is also another component: the insufficient-stock entry reports a real shortage, not "5 available, 3 required"', async () => {
  const x = await material('X');
  const y = await material('Y');
  await receive(x, 2);
  await receive(y, 5);
  const p = await productDoc('XY', {
    billOfMaterials: {
      consumptionMode: 'manual',
      yield: { quantity: 1, unit: 'pza' },
      components: [
        { materialSku: x, quantity: 5, unit: 'kg', substitutes: [{ materialSku: y, conversionFactor: 1 }] },
        { materialSku: y, quantity: 3, unit: 'kg' },
      ],
    },
  });
  // X needs 5 (has 2, the other 3 from Y), Y needs 3 of its own: 6 of Y, only 5 → refused
  const res = await api.post(`/products/${p.sku}/bom/consume`, { quantity: 1, allowSubstitutes: true });
  expect(res.status).toBe(400);
  expect(res.body.code).toBe('insufficient-stock');
  expect(res.body.errors.length).toBeGreaterThan(0);
  expect(res.body.errors).toEqual([expect.objectContaining({ materialSku: y, required: 6, available: 5 })]);
  expect(await onHand(x)).toBe(2);
  expect(await onHand(y)).toBe(5);
});

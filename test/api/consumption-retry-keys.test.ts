import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * Exactly-once keys of BOM runs and consumptions: a request under the referenceId or
 * Idempotency-Key of a consumption made is its retry only when it asks the same (product,
 * quantity, location, selections; a BOM run's notes are a label). Another is 409, nothing taken.
 */
let deps: TestDeps;
let api: ApiClient;
let A: string;
let B: string;
const P = `CRK${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'consumption retry keys');
  api = new ApiClient(t.key);
  A = systemLocationId(t.tenantId);
  const second = await api.post('/locations', { name: `Kitchen ${P}`, type: 'location' });
  if (second.status !== 201) throw new Error(second.text);
  B = second.body.id;
});
afterAll(() => deps.close());

async function flourWithBread(stockAt: string[] = [A]): Promise<{ flour: string; bread: string }> {
  const flour = `${P}-FLOUR-${++n}`;
  const m = await api.post('/products/materials', {
    sku: flour,
    title: 'Flour',
    baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
  });
  if (m.status !== 201) throw new Error(m.text);
  for (const loc of stockAt) {
    const r = await api.post(`/products/materials/${flour}/stock/${loc}`, { quantity: 10, lot: { costPerUnit: 1 } });
    if (r.status !== 200) throw new Error(r.text);
  }
  const p = await api.post('/products', {
    sku: `${P}-BREAD-${++n}`,
    title: { value: 'Bread' },
    price: 10,
    billOfMaterials: {
      consumptionMode: 'manual',
      yield: { quantity: 1, unit: 'pza' },
      components: [{ materialSku: flour, quantity: 1, unit: 'kg' }],
    },
  });
  if (p.status !== 201) throw new Error(p.text);
  return { flour: m.body.sku, bread: p.body.sku };
}
const onHand = async (sku: string, loc = A) => {
  const r = await api.get(`/products/materials/${sku}/stock/${loc}`);
  return r.status === 404 ? 0 : r.body.quantity;
};

test('a BOM run under an Idempotency-Key already used for another quantity is 409, not the first run replayed', async () => {
  const { flour, bread } = await flourWithBread();
  const key = `${P}-key-1`;
  const first = await api.post(
    `/products/${bread}/bom/consume`,
    { quantity: 1 },
    { headers: { 'Idempotency-Key': key } },
  );
  expect(first.status).toBe(200);
  const other = await api.post(
    `/products/${bread}/bom/consume`,
    { quantity: 3 },
    { headers: { 'Idempotency-Key': key } },
  );
  expect([other.status, other.body.code]).toEqual([409, 'idempotency-key-reused']);
  expect(await onHand(flour)).toBe(9);
  // the same request again is the retry: answered as the first, nothing more taken
  const retry = await api.post(
    `/products/${bread}/bom/consume`,
    { quantity: 1, notes: 'again' },
    { headers: { 'Idempotency-Key': key } },
  );
  expect(retry.status).toBe(200);
  expect(retry.body).toMatchObject({ replayed: true, consumptionId: first.body.consumptionId });
  expect(await onHand(flour)).toBe(9);
});

test('a BOM run reusing a referenceId with another quantity is 409, not the first run replayed', async () => {
  const { flour, bread } = await flourWithBread();
  const first = await api.post(`/products/${bread}/bom/consume`, { quantity: 1, referenceId: 'batch-7' });
  expect(first.status).toBe(200);
  const other = await api.post(`/products/${bread}/bom/consume`, { quantity: 4, referenceId: 'batch-7' });
  expect([other.status, other.body.code]).toEqual([409, 'conflict']);
  expect(other.body.message).toMatch(/referenceId batch-7/);
  expect(await onHand(flour)).toBe(9);
});

test('a consumption under an Idempotency-Key already used at another location is 409, not answered as the first', async () => {
  const { flour, bread } = await flourWithBread([A, B]);
  const key = `${P}-key-2`;
  const headers = { 'Idempotency-Key': key };
  const first = await api.post(
    '/products/materials/consumption/consume',
    { productSku: bread, locationId: A },
    { headers },
  );
  expect(first.status).toBe(200);
  const other = await api.post(
    '/products/materials/consumption/consume',
    { productSku: bread, locationId: B },
    { headers },
  );
  expect([other.status, other.body.code]).toEqual([409, 'idempotency-key-reused']);
  const retry = await api.post(
    '/products/materials/consumption/consume',
    { productSku: bread, locationId: A },
    { headers },
  );
  expect(retry.body).toMatchObject({ replayed: true, locationId: A });
  expect(await onHand(flour, A)).toBe(9);
  expect(await onHand(flour, B)).toBe(10);
});

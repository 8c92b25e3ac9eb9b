import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * Input rules of the product body that were checked for one shape and not for its twin.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
const P = `RIR${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'review input rules');
  tenantId = t.tenantId;
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

const stored = (sku: string) => deps.db.collection('products').countDocuments({ tenantId, sku: sku.toUpperCase() });

/**
 * Spec: title is required ({value, translations[]}). A title of spaces is no title: supplies
 * refuse one (`title` must match \S) and locations refuse a name of spaces (missing-name), but a
 * product or variant title of spaces is now refused too (before, it was stored and listed with an
 * invisible name).
 */
test('a product title of only spaces is 400 validation-error naming title.value; nothing stored', async () => {
  const sku = `${P}-BLANK`;
  const res = await api.post('/products', { sku, title: { value: '   ' }, price: 1 });
  expect({ status: res.status, code: res.body?.code, field: res.body?.field }).toEqual({
    status: 400,
    code: 'validation-error',
    field: 'title.value',
  });
  expect(await stored(sku)).toBe(0);
});

test('a variant title of only spaces is 400 validation-error naming variants.0.title.value', async () => {
  const sku = `${P}-VBLANK`;
  const res = await api.post('/products', {
    sku,
    title: { value: 'Tee' },
    price: 1,
    variants: [{ sku: `${sku}-S`, title: { value: ' ' }, price: 1, position: 0 }],
  });
  expect({ status: res.status, code: res.body?.code, field: res.body?.field }).toEqual({
    status: 400,
    code: 'validation-error',
    field: 'variants.0.title.value',
  });
  expect(await stored(sku)).toBe(0);
});

/**
 * Two options with one id are refused (options.<i>.id "duplicates option id"), and docs/catalog.md
 * says "a variant is known by its id" (a PUT matches variants by id): two variants with one id are
 * refused as well (before, they were stored, and that id named no single variant).
 */
test('two variants with the same id are 400 validation-error naming variants.1.id; nothing stored', async () => {
  const sku = `${P}-DUPID`;
  const res = await api.post('/products', {
    sku,
    title: { value: 'Tee' },
    price: 1,
    variants: [
      { id: 'v1', sku: `${sku}-S`, title: { value: 'S' }, price: 1, position: 0 },
      { id: 'v1', sku: `${sku}-M`, title: { value: 'M' }, price: 1, position: 1 },
    ],
  });
  expect({ status: res.status, code: res.body?.code, field: res.body?.field }).toEqual({
    status: 400,
    code: 'validation-error',
    field: 'variants.1.id',
  });
  expect(await stored(sku)).toBe(0);
});

test('control: two options with the same id are refused', async () => {
  const res = await api.post('/products', {
    sku: `${P}-DUPOPT`,
    title: { value: 'Tee' },
    price: 1,
    options: [
      { id: 'o1', name: 'Size', values: ['S'] },
      { id: 'o1', name: 'Color', values: ['Red'] },
    ],
  });
  expect([res.status, res.body.field]).toEqual([400, 'options.1.id']);
});

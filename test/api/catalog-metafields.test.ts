import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A `date` or `date_time` metafield names a day that exists: 2024-02-31 is 400 validation-error
 * naming `metafields.<i>.value`, nothing stored. Before, JavaScript's Date.parse rolled it over to
 * March 2 and it was stored as a "date", while the body validator refused such dates elsewhere.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
const P = `RMF${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'review metafields');
  tenantId = t.tenantId;
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

test.each([
  ['date', '2024-02-31'],
  ['date', '2023-02-29'],
  ['date_time', '2024-02-30T10:00:00Z'],
  ['date_time', '2024-04-31T00:00:00.000Z'],
])('a %s metafield with the non-existent value %s is 400 validation-error; nothing stored', async (type, value) => {
  const sku = `${P}-${type}-${value}`.replace(/[:.]/g, '');
  const res = await api.post('/products', {
    sku,
    title: { value: 'dated' },
    price: 1,
    metafields: [{ namespace: 'custom', key: 'release', type, value }],
  });
  expect({ status: res.status, code: res.body?.code, field: res.body?.field }).toEqual({
    status: 400,
    code: 'validation-error',
    field: 'metafields.0.value',
  });
  expect(await deps.db.collection('products').countDocuments({ tenantId, sku: sku.toUpperCase() })).toBe(0);
});

test('control: an existing date is accepted', async () => {
  const res = await api.post('/products', {
    sku: `${P}-OK`,
    title: { value: 'dated' },
    price: 1,
    metafields: [
      { namespace: 'custom', key: 'release', type: 'date', value: '2024-02-29' },
      { namespace: 'custom', key: 'at', type: 'date_time', value: '2024-02-29T10:00:00Z' },
    ],
  });
  expect(res.status).toBe(201);
});

// years 0000–0099 are real years (0001-01-01 is a common "no date" sentinel), not 1900–1999
test.each([
  ['date', '0001-01-01'],
  ['date', '0099-12-31'],
  ['date_time', '0001-01-01T00:00:00Z'],
])('a %s metafield with the real early-year value %s is accepted', async (type, value) => {
  const res = await api.post('/products', {
    sku: `${P}-${type}-${value}`.replace(/[:.]/g, ''),
    title: { value: 'dated' },
    price: 1,
    metafields: [{ namespace: 'custom', key: 'since', type, value }],
  });
  expect({ status: res.status, field: res.body?.field }).toEqual({ status: 201, field: undefined });
});

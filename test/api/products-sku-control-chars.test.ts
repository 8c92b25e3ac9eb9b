import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A SKU holds no control character: one with a NUL could be stored but never named again, since
 * every route that takes a SKU in its path refuses a NUL. 400 validation-error naming the SKU.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
const P = `CNUL${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'sku control characters');
  tenantId = t.tenantId;
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

test('a product or variant SKU with a NUL byte is refused with 400 validation-error naming it, and nothing is stored', async () => {
  const sku = `${P}-A\u0000B`;
  const product = await api.post('/products', { sku, title: { value: 'Nul' }, price: 1 });
  const variant = await api.post('/products', {
    sku: `${P}-P`,
    title: { value: 'Parent' },
    price: 1,
    variants: [{ sku: `${P}-V\u0000`, title: { value: 'V' }, price: 1, position: 0 }],
  });
  expect({
    product: [product.status, product.body?.code, product.body?.field],
    variant: [variant.status, variant.body?.code, variant.body?.field],
    stored: await deps.db.collection('products').countDocuments({ tenantId }),
  }).toEqual({
    product: [400, 'validation-error', 'sku'],
    variant: [400, 'validation-error', 'variants.0.sku'],
    stored: 0,
  });
});

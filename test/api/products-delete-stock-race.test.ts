import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A product whose SKU holds stock cannot be deleted, also when its stock is set at the same moment
 * as the delete: never do both succeed (the stock would stay under a SKU no product holds, and a
 * product made later with that SKU would inherit it). The delete marks the SKU's claim before it
 * looks for stock; the stock write reads the claim after it lands and takes itself back out if
 * the product is gone.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `PDS${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'product delete stock race')).key);
});
afterAll(() => deps.close());

test('stock set while the product is deleted: never both succeed, and a new product of the SKU starts at 0', async () => {
  const loc = (await api.post('/locations', { name: `Race ${P}`, type: 'location' })).body.id as string;
  const broken: string[] = [];
  const outcomes = new Set<string>();
  for (let i = 0; i < 25 && broken.length === 0; i++) {
    const sku = `${P}-S${i}`;
    const made = await api.post('/products', { sku, title: { value: 'x' }, price: 1 });
    expect(made.status).toBe(201);
    const [stock, del] = await Promise.all([
      api.put(`/inventory/location/${loc}/product/${sku}`, { stock: 5 }),
      api.delete(`/products/${made.body.id}`),
    ]);
    outcomes.add(`${stock.status}/${del.status}`);
    expect([stock.status, del.status].filter((s) => ![200, 400, 404, 409].includes(s))).toEqual([]);
    if (stock.status === 200 && del.status === 200) broken.push(`${sku}: stock 200 and delete 200`);
    if (del.status === 200) {
      // whatever the stock write answered, nothing stays under the deleted SKU
      const again = await api.post('/products', { sku, title: { value: 'new' }, price: 1 });
      expect(again.status).toBe(201);
      const inv = (await api.get(`/inventory/items/${sku}`)).body;
      if (inv.total !== 0) broken.push(`${sku}: a new product of the SKU starts at ${inv.total}`);
    }
  }
  expect(broken).toEqual([]);
});

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';

/**
 * A preview writes nothing, so it holds nothing: after a CSV preview of a bundle naming product
 * A, A can be deleted at once (a real bundle write holds its components only while it is stored).
 */
let deps: TestDeps;
let api: ApiClient;
const P = `RVSM${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'preview holds nothing');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

function csv(rows: Record<string, string | number>[]): string {
  return toCsvText(
    nativeLayout.columns,
    rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, String(v)]))),
  );
}

test('a CSV preview of a bundle does not block deleting its component', async () => {
  const a = await api.post('/products', { sku: `${P}-A`, title: { value: 'A' }, price: 5 });
  expect(a.status).toBe(201);
  const content = csv([
    {
      sku: `${P}-KIT`,
      title: 'Kit',
      price: 9,
      productType: 'bundle',
      bundleConfig: JSON.stringify({ components: [{ productSku: `${P}-A`, quantity: 1 }] }),
    },
  ]);
  const preview = await api.post('/products/bulk/csv/preview', { content, createIfNotExists: true });
  expect(preview.status).toBe(200);
  expect(preview.body.toCreate).toEqual([{ sku: `${P}-KIT`, rows: [2] }]);
  const del = await api.delete(`/products/${a.body.id}`);
  expect({ ok: del.status < 300, message: del.body?.message }).toEqual({ ok: true, message: undefined });
});

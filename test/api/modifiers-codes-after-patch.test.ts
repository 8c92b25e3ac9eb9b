import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A modifier's code (`<group code>-<n>`) names that modifier: a group PATCH that sends its
 * modifiers again makes new ones, whose codes follow the group's, so a code kept by a channel
 * binding or a report never comes to name another modifier.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `MC${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey()).key);
});
afterAll(() => deps.close());

test('a modifier added by a group PATCH does not reuse the code of a modifier it replaced', async () => {
  const sku = `${P}-P`;
  expect((await api.post('/products', { sku, title: { value: 'p' }, price: 10 })).status).toBe(201);
  const cfg = await api.put(`/products/${sku}/modifiers`, {
    enabled: true,
    groups: [
      {
        name: 'G',
        selectionRule: { minSelections: 0, maxSelections: 3 },
        modifiers: [
          { name: 'cheese', type: 'addon' },
          { name: 'bacon', type: 'addon' },
        ],
      },
    ],
  });
  expect(cfg.status).toBe(200);
  const g = cfg.body.modifiersConfig.groups[0];
  const cheese = g.modifiers[0];
  const patched = await api.patch(`/products/${sku}/modifiers/${g.id}`, {
    modifiers: [{ name: 'onion', type: 'addon' }],
  });
  expect(patched.status).toBe(200);
  const onion = patched.body.modifiersConfig.groups[0].modifiers[0];
  expect(onion.id).not.toBe(cheese.id);
  expect(onion.code).not.toBe(cheese.code);
  expect([cheese.code, onion.code]).toEqual(['group-1-1', 'group-1-3']);
});

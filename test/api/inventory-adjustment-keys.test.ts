import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/** An adjustment's Idempotency-Key replays its first adjustment to a retry, and refuses another body. */
let deps: TestDeps;
let api: ApiClient;
let main: string;
const P = `AIK${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey(undefined, 'adjustment keys');
  api = new ApiClient(tenant.key);
  main = systemLocationId(tenant.tenantId);
  for (const sku of [`${P}-A`, `${P}-B`])
    expect((await api.post('/products', { sku, title: { value: sku }, price: 1, cost: 1 })).status).toBe(201);
});
afterAll(() => deps.close());

test('the same body again (SKU in another case, notes padded) answers the first adjustment', async () => {
  const headers = { 'idempotency-key': `same-${P}` };
  const body = { locationId: main, sku: `${P}-A`, newQuantity: 3, reason: 'found', notes: 'shelf' };
  const a = await api.post('/inventory/adjustments', body, { headers });
  expect(a.status).toBe(201);
  const b = await api.post(
    '/inventory/adjustments',
    { ...body, sku: body.sku.toLowerCase(), notes: ' shelf ' },
    { headers },
  );
  expect(b.status).toBe(201);
  expect(b.body.id).toBe(a.body.id);
});

test.each([
  ['another SKU', { sku: 'B', newQuantity: 3, reason: 'found' }],
  ['another quantity', { sku: 'A', newQuantity: 4, reason: 'found' }],
  ['another reason', { sku: 'A', newQuantity: 3, reason: 'damage' }],
  ['other notes', { sku: 'A', newQuantity: 3, reason: 'found', notes: 'else' }],
])('the key with %s is 409 idempotency-key-reused, and no second adjustment is made', async (_what, o) => {
  const headers = { 'idempotency-key': `other-${P}-${_what.replace(/ /g, '-')}` };
  const first = { locationId: main, sku: `${P}-A`, newQuantity: 3, reason: 'found' };
  expect((await api.post('/inventory/adjustments', first, { headers })).status).toBe(201);
  const before = (await api.get('/inventory/adjustments', { query: { limit: 100 } })).body;
  const b = await api.post('/inventory/adjustments', { ...first, ...o, sku: `${P}-${o.sku}` }, { headers });
  expect({ status: b.status, code: b.body?.code }).toEqual({ status: 409, code: 'idempotency-key-reused' });
  const after = (await api.get('/inventory/adjustments', { query: { limit: 100 } })).body;
  expect(after).toEqual(before);
});

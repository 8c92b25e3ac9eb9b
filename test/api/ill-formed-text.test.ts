import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';

/**
 * Text that is not well-formed Unicode (half of a UTF-16 surrogate pair) would be stored with
 * U+FFFD in its place, so two different externalIds could come back as one: every body holding
 * such text, in a value or a key, is refused 400 in its area's envelope, naming the field, and
 * nothing is written. Paired surrogates (an emoji) are text like any other.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `ILF${Date.now().toString(36).toUpperCase()}`;
let sku: string;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'ill-formed text')).key);
  sku = `${P}-SVC`;
  expect((await api.post('/products', { sku, title: { value: 'svc' }, price: 1, productType: 'service' })).status).toBe(
    201,
  );
});
afterAll(() => deps.close());

const order = (externalId: string, extra: Record<string, unknown> = {}) =>
  api.post('/orders', { externalId, customerInfo: { name: 'Ana' }, items: [{ sku, quantity: 1 }], ...extra });

test.each([
  ['externalId', { externalId: `${P}-x\ud800y` }, 'externalId'],
  ['a note', { notes: 'call \udc00 first' }, 'notes'],
  ['the customer name', { customerInfo: { name: 'A\ud83dna' } }, 'customerInfo.name'],
])('an order with half a surrogate pair in %s is 400 naming it, nothing stored', async (_what, extra, field) => {
  const externalId = `${P}-${field}`;
  const res = await order(externalId, extra);
  expectError(res, 400, 'validation:invalid_input', 'orders');
  expect(JSON.stringify(res.body)).toContain(field);
  expect(
    (await api.get('/orders', { query: { limit: 100 } })).body.data.map((o: { externalId: string }) => o.externalId),
  ).not.toContain((extra as { externalId?: string }).externalId ?? externalId);
});

test('a comment or a product key with half a pair is refused too; an emoji is kept as sent', async () => {
  const made = await order(`${P}-ok \ud83d\ude00`);
  expect(made.status).toBe(201);
  expect(made.body.data.externalId).toBe(`${P}-ok \ud83d\ude00`);
  const comment = await api.post(`/orders/${made.body.data._id}/comments`, { comment: 'half \ud800' });
  expectError(comment, 400, 'validation:invalid_input', 'orders');
  const product = await api.post('/products', {
    sku: `${P}-FIT`,
    title: { value: 'p' },
    price: 1,
    fitmentConfig: { ['k\udc00']: 1 },
  });
  expectError(product, 400, 'validation-error');
});

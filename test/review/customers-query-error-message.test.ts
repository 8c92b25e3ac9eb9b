import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * An unknown query parameter on GET /customers (or /customers/{id}/orders) is refused with 400
 * validation-error, but the message tells the client that the accepted names are the *body*
 * fields of a create (name, email, phone, …), which are not query parameters at all.
 */
let deps: TestDeps;
let api: ApiClient;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'review customers query message');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

test('GET /customers?status=x names the query parameters the list accepts', async () => {
  const res = await api.get('/customers', { query: { status: 'active' } });
  expect(res.status).toBe(400);
  expect(res.body.field).toBe('status');
  // q, tag, page, limit are what GET /customers takes
  expect(res.body.message).not.toMatch(/accepted: name, email, phone/);
});

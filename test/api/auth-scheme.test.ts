import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * The Authorization header as HTTP defines it: the scheme is a case-insensitive token (RFC 9110
 * §11.1) followed by one or more spaces (RFC 6750 §2.1), so `bearer <key>` is admitted.
 */
let deps: TestDeps;
let key: string;
let anon: ApiClient;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'auth scheme');
  key = t.key;
  anon = new ApiClient(null);
});
afterAll(() => deps.close());

test('the Bearer scheme is matched case-insensitively: `bearer <key>` is admitted', async () => {
  const res = await anon.get('/products/count', { headers: { authorization: `bearer ${key}` } });
  expect([res.status, res.body?.code]).toEqual([200, undefined]);
  const upper = await anon.get('/products/count', { headers: { authorization: `BEARER ${key}` } });
  expect([upper.status, upper.body?.code]).toEqual([200, undefined]);
});

test('two spaces after the scheme are admitted; another scheme is still 401', async () => {
  expect((await anon.get('/products/count', { headers: { authorization: `Bearer  ${key}` } })).status).toBe(200);
  expect((await anon.get('/products/count', { headers: { authorization: `Basic ${key}` } })).status).toBe(401);
});

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * docs/api-conventions.md: "A body holding text that is not well-formed Unicode (half of a
 * UTF-16 surrogate pair, in a value or a key) is 400 in its area's invalid-input code naming the
 * field, since the store would keep U+FFFD in its place (an upload's `s3Key` is 403
 * forbidden/invalid-s3-key instead...)". The sync import refuses such `content` as the preview
 * does. Before, it wrote the product with U+FFFD in place of the half pair (200, created 1): the
 * route let ill-formed text through for the whole body, not only for `s3Key`.
 */
let deps: TestDeps;
let api: ApiClient;
let n = 0;
const P = () => `ILL${Date.now().toString(36).toUpperCase()}${++n}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'review csv ill-formed')).key);
});
afterAll(() => deps.close());

test('sync import content holding half of a surrogate pair is 400 naming content, and nothing is written', async () => {
  const sku = P();
  const content = `sku,title,price\r\n${sku},Caf\ud83d,5\r\n`;

  // the preview of the very same content is refused
  const preview = await api.post('/products/bulk/csv/preview', { content, createIfNotExists: true });
  expect({ status: preview.status, code: preview.body.code, field: preview.body.field }).toEqual({
    status: 400,
    code: 'bad-request',
    field: 'content',
  });

  const res = await api.post('/products/bulk/csv/import', { content, createIfNotExists: true });
  expect({ status: res.status, code: res.body.code, field: res.body.field }).toEqual({
    status: 400,
    code: 'bad-request',
    field: 'content',
  });
  expect((await api.get(`/products/sku/${sku}/exists`)).body.exists).toBe(false);
});

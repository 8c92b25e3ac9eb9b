import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';

/**
 * docs/api-conventions.md: "a body with required fields is declared required" in /openapi.json.
 * PUT /locations/{id} refuses every request without a body (400 bad-request "Send at least one
 * field to change", minProperties 1), and the document declares its body required. Before, it
 * declared `requestBody.required: false`, telling clients and generated SDKs it may be left out.
 */
let deps: TestDeps;
let api: ApiClient;
beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'openapi put location')).key);
});
afterAll(() => deps.close());

test('PUT /locations/{id} without a body is refused, so /openapi.json declares its body required', async () => {
  const loc = await api.post('/locations', { name: `RVO ${Date.now()}`, type: 'location' });
  expect(loc.status).toBe(201);
  const bare = await api.put(`/locations/${loc.body.id}`);
  expectError(bare, 400, 'bad-request', 'locations');
  const doc = (await api.get('/openapi.json')).body;
  expect(doc.paths['/locations/{id}'].put.requestBody.required).toBe(true);
});

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * docs/webhooks.md: `POST /webhooks/{id}/rotate-secret {overlapSeconds?}` — the body member is
 * optional and defaults to WEBHOOK_SECRET_OVERLAP_SECONDS (24 h). A client that rotates without a
 * body (the natural call: `curl -X POST …/rotate-secret`) must get 200 with a new secret.
 */
let deps: TestDeps;
let api: ApiClient;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'rotate without a body');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

test('rotate-secret without a body rotates with the default overlap', async () => {
  const created = await api.post('/webhooks', { url: 'http://127.0.0.1:9/hooks', eventTypes: ['*'] });
  expect(created.status).toBe(201);
  const id = created.body.id as string;

  const rotated = await api.post(`/webhooks/${id}/rotate-secret`);
  expect({ status: rotated.status, code: rotated.body?.code }).toEqual({ status: 200, code: undefined });
  expect(rotated.body.secret).toMatch(/^whsec_/);
  expect(rotated.body.secret).not.toBe(created.body.secret);
  // the default overlap (24 h) keeps the old secret signing
  expect(rotated.body.previousSecretExpiresAt).not.toBeNull();
});

test('an empty JSON object is accepted the same way (control: the route itself works)', async () => {
  const created = await api.post('/webhooks', { url: 'http://127.0.0.1:9/hooks', eventTypes: ['*'] });
  const rotated = await api.post(`/webhooks/${created.body.id}/rotate-secret`, {});
  expect(rotated.status).toBe(200);
  expect(rotated.body.previousSecretExpiresAt).not.toBeNull();
});

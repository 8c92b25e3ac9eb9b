import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * DELETE /webhooks/{id} made several times at once: one answers 200, the others 404 not-found,
 * as a repeat after it does.
 */
let deps: TestDeps;
let api: ApiClient;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey()).key);
});
afterAll(() => deps.close());

test('of two DELETEs of one endpoint made at once, only one answers 200', async () => {
  const statuses: number[][] = [];
  for (let round = 0; round < 10; round++) {
    const made = await api.post('/webhooks', { url: 'http://127.0.0.1:9/hooks', eventTypes: ['*'] });
    expect(made.status).toBe(201);
    const answers = await Promise.all([
      api.delete(`/webhooks/${made.body.id}`),
      api.delete(`/webhooks/${made.body.id}`),
      api.delete(`/webhooks/${made.body.id}`),
    ]);
    statuses.push(answers.map((a) => a.status).sort());
  }
  // a sequential repeat is 404
  const once = await api.post('/webhooks', { url: 'http://127.0.0.1:9/hooks', eventTypes: ['*'] });
  expect((await api.delete(`/webhooks/${once.body.id}`)).status).toBe(200);
  expect((await api.delete(`/webhooks/${once.body.id}`)).status).toBe(404);
  expect(statuses.filter((s) => s.filter((x) => x === 200).length !== 1)).toEqual([]);
});

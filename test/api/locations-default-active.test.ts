import { ApiClient, type HttpResult } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';

/** The tenant's default must be able to take stock and orders: it can never be inactive. */
let deps: TestDeps;
let api: ApiClient;
beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'default stays active')).key);
});
afterAll(() => deps.close());
const err = (res: HttpResult, status: number, code: string) => expectError(res, status, code, 'locations');

async function make(o: Record<string, unknown>) {
  const res = await api.post('/locations', { name: `inactive ${Math.random()}`, type: 'location', ...o });
  expect(res.status).toBe(201);
  return res.body;
}
const defaults = async () =>
  ((await api.get('/locations?limit=100')).body.locations as any[]).filter((l) => l.isDefault);

test('set-default on an inactive location is refused and the default stays', async () => {
  const before = (await defaults()).map((l) => l.id);
  const loc = await make({ status: 'inactive' });
  const res = await api.post(`/locations/${loc.id}/set-default`);
  expect(res.status).toBe(400); // an inactive location cannot be the default (create refuses it, PUT refuses it)
  const after = await defaults();
  expect(after.map((l) => l.id)).toEqual(before);
  expect(after.every((l) => l.status === 'active')).toBe(true);
});

test("PUT {isDefault: true} on an inactive location is refused with can't-update and the default stays", async () => {
  const before = (await defaults()).map((l) => l.id);
  const loc = await make({ status: 'inactive' });
  const res = await api.put(`/locations/${loc.id}`, { isDefault: true });
  err(res, 400, "bad-request/can't-update");
  expect((await defaults()).map((l) => l.id)).toEqual(before);
});

test('concurrent set-default and PUT status inactive never leave an inactive default', async () => {
  for (let i = 0; i < 10; i++) {
    const loc = await make({});
    await Promise.all([
      api.post(`/locations/${loc.id}/set-default`),
      api.put(`/locations/${loc.id}`, { status: 'inactive' }),
    ]);
    const d = await defaults();
    expect(d).toHaveLength(1);
    expect(d[0].status).toBe('active');
    // put the system location back as the default for the next round
    const sys = ((await api.get('/locations?limit=100')).body.locations as any[]).find((l) => l.isSystem);
    await api.post(`/locations/${sys.id}/set-default`);
  }
});

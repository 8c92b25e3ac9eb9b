import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/** Blank optional text on a location is no value: answered null, never stored as an empty string. */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'blank text');
  tenantId = t.tenantId;
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

const stored = (id: string) => deps.db.collection('locations').findOne({ _id: id as never, tenantId });

async function make(o: Record<string, unknown> = {}) {
  const res = await api.post('/locations', { name: `blank ${Math.random()}`, type: 'location', ...o });
  expect(res.status).toBe(201);
  return res.body;
}

test('create with code and phone of spaces: both null, and not stored', async () => {
  const loc = await make({ code: '   ', phone: ' ' });
  expect({ code: loc.code, phone: loc.phone }).toEqual({ code: null, phone: null });
  const doc = await stored(loc.id);
  expect(doc).not.toHaveProperty('code');
  expect(doc).not.toHaveProperty('phone');
});

test('PUT code "  " clears the code, as null does', async () => {
  const loc = await make({ code: 'WH-1', phone: '555' });
  const res = await api.put(`/locations/${loc.id}`, { code: '  ', phone: '' });
  expect(res.status).toBe(200);
  expect({ code: res.body.code, phone: res.body.phone }).toEqual({ code: null, phone: null });
  expect(await stored(loc.id)).not.toHaveProperty('code');
});

test('PUT address.country "" clears that part (null or blank clears a part)', async () => {
  const loc = await make({ address: { city: 'Lyon', country: 'FR' } });
  const res = await api.put(`/locations/${loc.id}`, { address: { country: '' } });
  expect(res.status).toBe(200);
  expect(res.body.address).toEqual({ city: 'Lyon' });
  expect((await api.get(`/locations/${loc.id}`)).body.address).toEqual({ city: 'Lyon' });
});

test('control: a real code is trimmed and kept', async () => {
  const loc = await make({ code: '  WH-2 ' });
  expect(loc.code).toBe('WH-2');
});

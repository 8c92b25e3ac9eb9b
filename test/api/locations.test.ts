import { ApiClient, type HttpResult } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/** Locations through HTTP on the real API process: CRUD, the one default, stock guard, place lookups, zones, isolation, auth. */
let deps: TestDeps;
/** A tenant, with a client holding its key (every locations scope). */
type Tenant = { tenantId: string; key: string; api: ApiClient };
let A: Tenant;
let B: Tenant;
/** A client without credentials. */
const anonymous = new ApiClient();
let n = 0;
const P = `L${Date.now().toString(36).toUpperCase()}`;

async function tenant(name: string): Promise<Tenant> {
  const t = await deps.tenantWithKey(undefined, name);
  return { ...t, api: new ApiClient(t.key) };
}

beforeAll(async () => {
  deps = await TestDeps.open();
  A = await tenant('locations A');
  B = await tenant('locations B');
});
afterAll(() => deps.close());
const err = (res: HttpResult, status: number, code: string) => expectError(res, status, code, 'locations');

async function create(o: Record<string, unknown> = {}, t: Tenant = A) {
  const res = await t.api.post('/locations', { name: `${P} place ${++n}`, type: 'location', ...o });
  expect(res.status).toBe(201);
  return res.body;
}

/** The raw stored documents of a tenant, for "nothing was written" checks. */
const storedLocations = (t: Tenant) =>
  deps.db.collection('locations').find({ tenantId: t.tenantId }).sort({ _id: 1 }).toArray();
const storedZones = (t: Tenant) =>
  deps.db.collection('location_zones').find({ tenantId: t.tenantId }).sort({ _id: 1 }).toArray();

async function allOf(t: Tenant) {
  const res = await t.api.get('/locations?limit=100');
  expect(res.status).toBe(200);
  return res.body.locations as any[];
}

/** Exactly one default, through the API and in the stored mirror (after the writes settle). */
async function expectOneDefault(t: Tenant, id: string) {
  const defaults = (await allOf(t)).filter((l) => l.isDefault);
  expect(defaults.map((l) => l.id)).toEqual([id]);
  expect((await t.api.get(`/locations/${id}`)).body.isDefault).toBe(true);
  const mirror = await deps.db.collection('locations').find({ tenantId: t.tenantId, isDefault: true }).toArray();
  expect(mirror.map((d) => d._id)).toEqual([id]);
}

const LOCATION_KEYS = [
  'id',
  'name',
  'type',
  'code',
  'address',
  'phone',
  'email',
  'isDefault',
  'isSystem',
  'status',
  'managedBy',
  'createdAt',
  'updatedAt',
].sort();

describe('create and read', () => {
  test('201 with the location; id from _id, no tenantId; GET answers the same', async () => {
    const res = await A.api.post('/locations', {
      name: '  Warehouse North ',
      type: 'location',
      code: 'WH-N',
      phone: '+52 55 1234 5678',
      email: 'north@example.com',
      address: {
        street: 'Av. Reforma 222',
        city: 'Ciudad de México',
        state: 'CDMX',
        postalCode: '06600',
        country: 'MX',
      },
    });
    expect(res.status).toBe(201);
    const loc = res.body;
    expect(Object.keys(loc).sort()).toEqual(LOCATION_KEYS);
    expect(loc).toMatchObject({
      name: 'Warehouse North',
      type: 'location',
      code: 'WH-N',
      address: {
        street: 'Av. Reforma 222',
        city: 'Ciudad de México',
        state: 'CDMX',
        postalCode: '06600',
        country: 'MX',
      },
      isDefault: false,
      isSystem: false,
      status: 'active',
      managedBy: null,
    });
    expect(loc.id).toMatch(/^loc_[0-9A-Z]{26}$/);
    expect(new Date(loc.createdAt).toISOString()).toBe(loc.createdAt);
    expect(res.headers.get('location')).toBe(`/locations/${loc.id}`);
    expect(JSON.stringify(loc)).not.toContain(A.tenantId);
    const read = await A.api.get(`/locations/${loc.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(loc);
    expect((await A.api.get(`/v1/locations/${loc.id}`)).body).toEqual(loc);
  });

  test('optional fields absent: null, address {}; type zone and status inactive accepted', async () => {
    const loc = await create({ type: 'zone', status: 'inactive' });
    expect(loc).toMatchObject({ type: 'zone', status: 'inactive', code: null, phone: null, email: null, address: {} });
  });

  test.each([
    ['no body at all', undefined, 'bad-request/missing-name', 'name'],
    ['empty object', {}, 'bad-request/missing-name', 'name'],
    ['blank name', { name: '   ', type: 'location' }, 'bad-request/missing-name', 'name'],
    ['null name', { name: null, type: 'location' }, 'bad-request/missing-name', 'name'],
    ['no type', { name: 'x' }, 'bad-request/missing-type', 'type'],
    ['blank type', { name: 'x', type: '' }, 'bad-request/missing-type', 'type'],
    ['type warehouse', { name: 'x', type: 'warehouse' }, 'bad-request/invalid-type', 'type'],
    ['type not a string', { name: 'x', type: 7 }, 'bad-request/invalid-type', 'type'],
    ['unknown field', { name: 'x', type: 'location', capacity: 10 }, 'bad-request', 'capacity'],
    ['server field isSystem', { name: 'x', type: 'location', isSystem: true }, 'bad-request', 'isSystem'],
    ['tenantId sent', { name: 'x', type: 'location', tenantId: 'ten_other' }, 'bad-request', 'tenantId'],
    ['unknown address part', { name: 'x', type: 'location', address: { zip: '1' } }, 'bad-request', 'address.zip'],
    [
      'country not ISO alpha-2',
      { name: 'x', type: 'location', address: { country: 'Mexico' } },
      'bad-request',
      'address.country',
    ],
    ['bad email', { name: 'x', type: 'location', email: 'not-an-email' }, 'bad-request', 'email'],
    ['bad status', { name: 'x', type: 'location', status: 'closed' }, 'bad-request', 'status'],
    ['isDefault not boolean', { name: 'x', type: 'location', isDefault: 'yes' }, 'bad-request', 'isDefault'],
    ['name not a string', { name: 42, type: 'location' }, 'bad-request', 'name'],
    ['an array body', [{ name: 'x', type: 'location' }], 'bad-request', '(body)'],
  ])('invalid create: %s → 400, nothing stored', async (_name, body, code, field) => {
    const before = await storedLocations(A);
    const res = await A.api.post('/locations', body);
    err(res, 400, code);
    expect(res.body.field).toBe(field);
    expect(await storedLocations(A)).toEqual(before);
  });

  test('malformed JSON → 400 bad-request/invalid-json, nothing stored', async () => {
    const before = await storedLocations(A);
    const res = await A.api.post('/locations', undefined, {
      raw: '{"name": "x", ',
      headers: { 'content-type': 'application/json' },
    });
    err(res, 400, 'bad-request/invalid-json');
    expect(await storedLocations(A)).toEqual(before);
  });

  test('GET of an unknown id → 404 not-found', async () => {
    err(await A.api.get('/locations/loc_doesnotexist'), 404, 'not-found');
    err(await A.api.get('/locations/%20'), 404, 'not-found');
  });
});

describe('list and count', () => {
  let T: Tenant;
  let made: any[];
  beforeAll(async () => {
    T = await tenant('locations list');
    made = [];
    for (let i = 0; i < 6; i++) {
      made.push(
        await create(
          {
            name: `Store ${i}`,
            type: i % 3 === 2 ? 'zone' : 'location',
            status: i === 5 ? 'inactive' : 'active',
            address: {
              street: `Calle ${i}`,
              city: i < 3 ? 'Monterrey' : 'Guadalajara',
              postalCode: `6400${i}`,
              country: 'MX',
            },
          },
          T,
        ),
      );
    }
  });

  test('the system location always exists, is first, and is the default', async () => {
    const res = await T.api.get('/locations');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['limit', 'locations', 'page', 'totalCount']);
    expect(res.body).toMatchObject({ totalCount: 7, page: 1, limit: 50 });
    const [sys, ...rest] = res.body.locations;
    expect(sys).toMatchObject({
      id: systemLocationId(T.tenantId),
      isSystem: true,
      isDefault: true,
      type: 'location',
      status: 'active',
      address: {},
    });
    expect(Object.keys(sys).sort()).toEqual(LOCATION_KEYS);
    expect(rest.map((l: { id: string }) => l.id)).toEqual(made.map((l) => l.id));
    expect(rest.every((l: { isDefault: boolean; isSystem: boolean }) => !l.isDefault && !l.isSystem)).toBe(true);
  });

  test('a new tenant sees its system location on its first read', async () => {
    const fresh = await tenant('locations fresh');
    const res = await fresh.api.get('/locations');
    expect(res.body.totalCount).toBe(1);
    expect(res.body.locations[0]).toMatchObject({
      id: systemLocationId(fresh.tenantId),
      isSystem: true,
      isDefault: true,
    });
    expect((await fresh.api.get('/locations/count')).body).toEqual({ count: 1 });
  });

  test('paging: pages partition the list, in order, with no overlap', async () => {
    const all = await allOf(T);
    const seen: string[] = [];
    for (let page = 1; page <= 4; page++) {
      const res = await T.api.get(`/locations?limit=2&page=${page}`);
      expect(res.body).toMatchObject({ totalCount: 7, page, limit: 2 });
      seen.push(...res.body.locations.map((l: { id: string }) => l.id));
    }
    expect(seen).toEqual(all.map((l) => l.id));
    expect((await T.api.get('/locations?limit=2&page=9')).body.locations).toEqual([]);
  });

  test('filters: q (name and address, any case, every word), type, status; count agrees', async () => {
    const ids = async (query: string) =>
      ((await T.api.get(`/locations?${query}`)).body.locations as { id: string }[]).map((l) => l.id);
    const count = async (query: string) => (await T.api.get(`/locations/count?${query}`)).body.count;
    expect(await ids('q=monterrey')).toEqual(made.slice(0, 3).map((l) => l.id));
    expect(await ids('q=STORE')).toEqual(made.map((l) => l.id));
    expect(await ids('q=64003')).toEqual([made[3].id]);
    expect(await ids('q=guadalajara%20calle%205')).toEqual([made[5].id]);
    expect(await ids('q=.*')).toEqual([]); // text, not a pattern
    expect(await ids('type=zone')).toEqual([made[2].id, made[5].id]);
    expect(await ids('status=inactive')).toEqual([made[5].id]);
    expect(await ids('status=active&type=location')).toEqual([
      systemLocationId(T.tenantId),
      made[0].id,
      made[1].id,
      made[3].id,
      made[4].id,
    ]);
    expect(await count('')).toBe(7);
    expect(await count('q=monterrey')).toBe(3);
    expect(await count('type=zone')).toBe(2);
    expect(await count('status=active')).toBe(6);
    expect(await count('status=inactive&q=guadalajara')).toBe(1);
  });

  test('bad query values → 400; limit above 100 → 400; an unresolvable count → 400 bad-request/not-found', async () => {
    err(await T.api.get('/locations?limit=101'), 400, 'bad-request');
    err(await T.api.get('/locations?limit=0'), 400, 'bad-request');
    err(await T.api.get('/locations?page=0'), 400, 'bad-request');
    err(await T.api.get('/locations?type=warehouse'), 400, 'bad-request');
    err(await T.api.get('/locations?status=closed'), 400, 'bad-request');
    err(await T.api.get('/locations?sort=name'), 400, 'bad-request');
    expect((await T.api.get('/locations?limit=100')).status).toBe(200);
    const badType = await T.api.get('/locations/count?type=warehouse');
    err(badType, 400, 'bad-request/not-found');
    expect(badType.body.field).toBe('type');
    err(await T.api.get('/locations/count?status=closed'), 400, 'bad-request/not-found');
  });
});

describe('hostile query and path values → 400 bad-request, never a database error', () => {
  test('a NUL byte in q on the list, the count and the place search, and in the postal-code path', async () => {
    for (const path of [
      '/locations?q=a%00b',
      '/locations/count?q=%00',
      '/locations/places/search?q=quer%00etaro',
      '/locations/places/postal-code/76%0000',
      '/locations/places/postal-code/%00',
    ]) {
      const res = await A.api.get(path);
      err(res, 400, 'bad-request');
      expect({ path, message: res.body.message }).toEqual({ path, message: expect.stringContaining('NUL') });
    }
  });

  test('page or limit beyond any finite number on every list', async () => {
    for (const [path, query] of [
      ['/locations', { page: '1e309' }],
      ['/locations', { limit: '1e309' }],
      ['/locations', { page: '-1e309' }],
      ['/locations/places/search', { q: 'x', limit: '1e309' }],
      ['/locations/places/postal-code/76000', { limit: '1e309' }],
    ] as const) {
      const res = await A.api.get(path, { query });
      err(res, 400, 'bad-request');
      const field = 'page' in query ? 'page' : 'limit';
      expect({ path, query, field: res.body.field }).toEqual({ path, query, field });
    }
  });
});

describe('PUT /locations/{id}', () => {
  test('partial update: only the fields sent change; address parts merge, null clears', async () => {
    const loc = await create({
      code: 'C1',
      phone: '555',
      address: { street: 'Uno 1', city: 'León', postalCode: '37000', country: 'MX' },
    });
    const res = await A.api.put(`/locations/${loc.id}`, {
      name: 'Renamed',
      address: { city: 'Irapuato', postalCode: null },
      phone: null,
      status: 'inactive',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: loc.id,
      name: 'Renamed',
      type: 'location',
      code: 'C1',
      phone: null,
      status: 'inactive',
      address: { street: 'Uno 1', city: 'Irapuato', country: 'MX' },
      createdAt: loc.createdAt,
    });
    expect(res.body.address).not.toHaveProperty('postalCode');
    expect(res.body.updatedAt >= loc.updatedAt).toBe(true);
    expect((await A.api.get(`/locations/${loc.id}`)).body).toEqual(res.body);
    expect((await A.api.put(`/locations/${loc.id}`, { type: 'zone' })).body.type).toBe('zone');
  });

  test('the system location accepts name and address changes', async () => {
    const sysId = systemLocationId(A.tenantId);
    const res = await A.api.put(`/locations/${sysId}`, { name: 'Head office', address: { city: 'Puebla' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: sysId, name: 'Head office', isSystem: true, address: { city: 'Puebla' } });
  });

  test.each([
    ['blank id', '/locations/%20', { name: 'x' }, 400, 'bad-request/missing-id'],
    ['no id', '/locations', { name: 'x' }, 400, 'bad-request/missing-id'],
    ['no id, trailing slash', '/locations/', { name: 'x' }, 400, 'bad-request/missing-id'],
    ['unknown id', '/locations/loc_nope', { name: 'x' }, 404, 'bad-request/not-found'],
  ])('%s: PUT %s', async (_n, path, body, status, code) => {
    const before = await storedLocations(A);
    err(await A.api.put(path, body), status, code);
    expect(await storedLocations(A)).toEqual(before);
  });

  test.each([
    ['blank name', { name: ' ' }, 'bad-request/missing-name', 'name'],
    ['null name', { name: null }, 'bad-request/missing-name', 'name'],
    ['null type', { type: null }, 'bad-request/missing-type', 'type'],
    ['invalid type', { type: 'shelf' }, 'bad-request/invalid-type', 'type'],
    ['unknown field', { colour: 'red' }, 'bad-request', 'colour'],
    ['server field', { isSystem: true }, 'bad-request', 'isSystem'],
    ['id sent', { id: 'loc_x' }, 'bad-request', 'id'],
    ['bad country', { address: { country: 'ZZ' } }, 'bad-request', 'address.country'],
    ['empty body', {}, 'bad-request', '(body)'],
  ])('invalid update: %s → 400, nothing written', async (_n, body, code, field) => {
    const loc = await create();
    const before = await storedLocations(A);
    const res = await A.api.put(`/locations/${loc.id}`, body);
    err(res, 400, code);
    expect(res.body.field).toBe(field);
    expect(await storedLocations(A)).toEqual(before);
  });

  test('the system location stays active and of type location', async () => {
    const sysId = systemLocationId(A.tenantId);
    const before = await storedLocations(A);
    err(await A.api.put(`/locations/${sysId}`, { status: 'inactive' }), 400, 'bad-request/system-location');
    err(await A.api.put(`/locations/${sysId}`, { type: 'zone' }), 400, 'bad-request/system-location');
    expect(await storedLocations(A)).toEqual(before);
  });
});

describe('the default location: always exactly one', () => {
  let T: Tenant;
  let sysId: string;
  beforeAll(async () => {
    T = await tenant('locations defaults');
    sysId = systemLocationId(T.tenantId);
  });

  test("can't-create / can't-update: the default cannot be inactive; nothing is written", async () => {
    const before = await storedLocations(T);
    const refused = await T.api.post('/locations', {
      name: `${P} inactive default`,
      type: 'location',
      status: 'inactive',
      isDefault: true,
    });
    err(refused, 400, "bad-request/can't-create");
    expect(refused.body.field).toBe('status');
    expect(await storedLocations(T)).toEqual(before);
    await expectOneDefault(T, sysId);

    const x = await create({}, T);
    // made default and inactive in one PUT
    err(
      await T.api.put(`/locations/${x.id}`, { status: 'inactive', isDefault: true }),
      400,
      "bad-request/can't-update",
    );
    await expectOneDefault(T, sysId);
    expect((await T.api.get(`/locations/${x.id}`)).body.status).toBe('active');
    // the current default made inactive
    expect((await T.api.post(`/locations/${x.id}/set-default`)).status).toBe(200);
    const res = await T.api.put(`/locations/${x.id}`, { status: 'inactive', name: 'renamed' });
    err(res, 400, "bad-request/can't-update");
    expect(res.body.message).toContain('set-default');
    expect((await T.api.get(`/locations/${x.id}`)).body).toMatchObject({
      status: 'active',
      isDefault: true,
      name: x.name,
    });
    // handing the default back in the same PUT is fine
    const ok = await T.api.put(`/locations/${x.id}`, { status: 'inactive', isDefault: false });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'inactive', isDefault: false });
    await expectOneDefault(T, sysId);
  });

  test('set-default moves the default; PUT isDefault false hands it back to the system location', async () => {
    const x = await create({}, T);
    const y = await create({}, T);
    await expectOneDefault(T, sysId);
    const set = await T.api.post(`/locations/${x.id}/set-default`);
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ id: x.id, isDefault: true });
    await expectOneDefault(T, x.id);
    expect((await T.api.post(`/locations/${y.id}/set-default`)).status).toBe(200);
    await expectOneDefault(T, y.id);
    expect((await T.api.post(`/locations/${y.id}/set-default`)).status).toBe(200); // again: no change
    await expectOneDefault(T, y.id);
    // PUT isDefault false on a location that is not the default changes nothing
    expect((await T.api.put(`/locations/${x.id}`, { isDefault: false })).body.isDefault).toBe(false);
    await expectOneDefault(T, y.id);
    expect((await T.api.put(`/locations/${x.id}`, { isDefault: true })).body.isDefault).toBe(true);
    await expectOneDefault(T, x.id);
    const cleared = await T.api.put(`/locations/${x.id}`, { isDefault: false });
    expect(cleared.body.isDefault).toBe(false);
    await expectOneDefault(T, sysId);
    expect((await T.api.post(`/locations/${sysId}/set-default`)).status).toBe(200);
    await expectOneDefault(T, sysId);
  });

  test('the system location cannot lose isDefault (400 bad-request/system-location), nothing written', async () => {
    const x = await create({}, T);
    await T.api.post(`/locations/${sysId}/set-default`);
    const before = await storedLocations(T);
    err(await T.api.put(`/locations/${sysId}`, { isDefault: false }), 400, 'bad-request/system-location');
    err(await T.api.put(`/locations/${sysId}`, { isDefault: false, name: 'x' }), 400, 'bad-request/system-location');
    expect(await storedLocations(T)).toEqual(before);
    // also when another location is the default
    await T.api.post(`/locations/${x.id}/set-default`);
    err(await T.api.put(`/locations/${sysId}`, { isDefault: false }), 400, 'bad-request/system-location');
    await expectOneDefault(T, x.id);
  });

  test('created with isDefault true: it is the only default', async () => {
    const d = await create({ isDefault: true }, T);
    expect(d.isDefault).toBe(true);
    await expectOneDefault(T, d.id);
  });

  test('deleting the default location makes the system location the default', async () => {
    const d = await create({ isDefault: true }, T);
    await expectOneDefault(T, d.id);
    expect((await T.api.delete(`/locations/${d.id}`)).status).toBe(200);
    await expectOneDefault(T, sysId);
  });

  test('set-default of an unknown or deleted location → 404 bad-request/not-found, default unchanged', async () => {
    const x = await create({ isDefault: true }, T);
    const gone = await create({}, T);
    await T.api.delete(`/locations/${gone.id}`);
    err(await T.api.post(`/locations/${gone.id}/set-default`), 404, 'bad-request/not-found');
    err(await T.api.post('/locations/loc_nope/set-default'), 404, 'bad-request/not-found');
    err(await T.api.post('/locations/%20/set-default'), 404, 'bad-request/not-found');
    await expectOneDefault(T, x.id);
  });

  test('concurrent set-defaults (and a delete) leave exactly one default', async () => {
    const many = await Promise.all(Array.from({ length: 6 }, () => create({}, T)));
    const results = await Promise.all([
      ...many.map((l) => T.api.post(`/locations/${l.id}/set-default`)),
      T.api.delete(`/locations/${many[0].id}`),
    ]);
    for (const r of results.slice(1)) expect(r.status).toBe(200);
    expect([200, 404]).toContain(results[0].status);
    const defaults = (await allOf(T)).filter((l) => l.isDefault);
    expect(defaults).toHaveLength(1);
    await expectOneDefault(T, defaults[0].id);
    expect(defaults[0].id).not.toBe(many[0].id);
  });
});

describe('DELETE /locations/{id}', () => {
  test('200 {success, message}; then 404 everywhere; its zones go with it', async () => {
    const loc = await create();
    expect((await A.api.post(`/locations/${loc.id}/zones`, { code: 'A1', name: 'Aisle 1', type: 'zone' })).status).toBe(
      201,
    );
    const res = await A.api.delete(`/locations/${loc.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: expect.stringContaining(loc.id) });
    err(await A.api.get(`/locations/${loc.id}`), 404, 'not-found');
    err(await A.api.delete(`/locations/${loc.id}`), 404, 'bad-request/not-found');
    err(await A.api.get(`/locations/${loc.id}/zones`), 404, 'bad-request/not-found');
    expect((await storedZones(A)).filter((z) => z.locationId === loc.id)).toEqual([]);
  });

  test('the system location cannot be deleted; an unknown id is 404 bad-request/not-found', async () => {
    const sysId = systemLocationId(A.tenantId);
    await A.api.get('/locations');
    const before = await storedLocations(A);
    err(await A.api.delete(`/locations/${sysId}`), 400, 'bad-request/system-location');
    err(await A.api.delete('/locations/loc_nope'), 404, 'bad-request/not-found');
    expect(await storedLocations(A)).toEqual(before);
    expect((await A.api.get(`/locations/${sysId}`)).status).toBe(200);
  });

  test("a location that still holds stock → 400 bad-request/can't-delete naming the stock; at zero it can go", async () => {
    const loc = await create();
    const levels = deps.db.collection('stock_levels');
    const id = (sku: string) => `${A.tenantId}:${loc.id}:${sku}`;
    await levels.insertMany([
      { _id: id(`${P}-HELD`) as never, tenantId: A.tenantId, sku: `${P}-HELD`, locationId: loc.id, onHand: 3 },
      { _id: id(`${P}-EMPTY`) as never, tenantId: A.tenantId, sku: `${P}-EMPTY`, locationId: loc.id, onHand: 0 },
    ]);
    // stock of the same location id under another tenant does not count (and vice versa)
    const before = await storedLocations(A);
    const res = await A.api.delete(`/locations/${loc.id}`);
    err(res, 400, "bad-request/can't-delete");
    expect(res.body.message).toContain(`${P}-HELD`);
    expect(res.body.message).toMatch(/stock/);
    expect(await storedLocations(A)).toEqual(before);
    await levels.updateOne({ _id: id(`${P}-HELD`) as never }, { $set: { onHand: 0 } });
    expect((await A.api.delete(`/locations/${loc.id}`)).status).toBe(200);
  });

  test("a location that holds material stock → 400 bad-request/can't-delete; once moved away it can go", async () => {
    const loc = await create();
    const sku = `${P}-FLOUR`;
    const material = await A.api.post('/products/materials', {
      sku,
      title: 'Flour',
      baseUnit: { code: 'kg', name: 'Kilogram' },
    });
    expect(material.status).toBe(201);
    expect((await A.api.post(`/products/materials/${sku}/stock/${loc.id}`, { quantity: 2.5 })).status).toBe(200);
    const res = await A.api.delete(`/locations/${loc.id}`);
    err(res, 400, "bad-request/can't-delete");
    expect(res.body.message).toContain(sku);
    const away = {
      materialSku: sku,
      fromLocationId: loc.id,
      toLocationId: systemLocationId(A.tenantId),
      quantity: 2.5,
    };
    expect((await A.api.post('/products/materials/transfer', away)).status).toBe(200);
    expect((await A.api.delete(`/locations/${loc.id}`)).status).toBe(200);
  });

  test("another tenant's stock at a same-named location id does not block", async () => {
    const loc = await create();
    await deps.db.collection('stock_levels').insertOne({
      _id: `${B.tenantId}:${loc.id}:X` as never,
      tenantId: B.tenantId,
      sku: 'X',
      locationId: loc.id,
      onHand: 9,
    });
    expect((await A.api.delete(`/locations/${loc.id}`)).status).toBe(200);
  });

  test("a location managed by an integration → PUT 400 bad-request/can't-update, nothing changed", async () => {
    const loc = await create();
    await deps.db.collection('locations').updateOne({ _id: loc.id as never }, { $set: { managedBy: 'hdl_test' } });
    const res = await A.api.put(`/locations/${loc.id}`, { name: 'mine now' });
    err(res, 400, "bad-request/can't-update");
    expect(res.body.message).toContain('hdl_test');
    expect((await A.api.get(`/locations/${loc.id}`)).body).toMatchObject({ name: loc.name, managedBy: 'hdl_test' });
  });

  test("a location managed by an integration → 400 bad-request/can't-delete", async () => {
    const loc = await create();
    await deps.db.collection('locations').updateOne({ _id: loc.id as never }, { $set: { managedBy: 'hdl_test' } });
    const res = await A.api.delete(`/locations/${loc.id}`);
    err(res, 400, "bad-request/can't-delete");
    expect(res.body.message).toContain('hdl_test');
    expect((await A.api.get(`/locations/${loc.id}`)).body.managedBy).toBe('hdl_test');
  });
});

describe('place lookups', () => {
  let T: Tenant;
  let centro: any;
  let norte: any;
  beforeAll(async () => {
    T = await tenant('locations places');
    centro = await create(
      {
        name: 'Tienda Centro',
        address: { street: 'Av. Juárez 10', city: 'Querétaro', state: 'QRO', postalCode: '76000', country: 'MX' },
      },
      T,
    );
    norte = await create(
      {
        name: 'Bodega Norte',
        address: { street: 'Calle Zaragoza 5', city: 'Querétaro', state: 'QRO', postalCode: '76100', country: 'MX' },
      },
      T,
    );
    await create({ name: 'Other tenant Querétaro', address: { city: 'Querétaro', postalCode: '76000' } }, B);
  });

  const ids = (res: HttpResult) => res.body.locations.map((l: { id: string }) => l.id);

  test("search: street, city, state and name, any case, every word; only the tenant's", async () => {
    const city = await T.api.get(`/locations/places/search?q=${encodeURIComponent('querétaro')}`);
    expect(city.status).toBe(200);
    expect(Object.keys(city.body).sort()).toEqual(['locations', 'totalCount']);
    expect(city.body.totalCount).toBe(2);
    expect(ids(city)).toEqual([centro.id, norte.id]);
    expect(Object.keys(city.body.locations[0]).sort()).toEqual(LOCATION_KEYS);
    expect(ids(await T.api.get('/locations/places/search?q=zaragoza'))).toEqual([norte.id]);
    expect(ids(await T.api.get('/locations/places/search?q=qro%20centro'))).toEqual([centro.id]);
    expect(ids(await T.api.get('/locations/places/search?q=AV.%20JU'))).toEqual([centro.id]);
    expect((await T.api.get('/locations/places/search?q=Monterrey')).body).toEqual({
      locations: [],
      totalCount: 0,
    });
    expect((await T.api.get('/locations/places/search?q=quer%C3%A9taro&limit=1')).body.totalCount).toBe(2);
  });

  test('search without q → 400 bad-request/missing-param', async () => {
    for (const path of [
      '/locations/places/search',
      '/locations/places/search?q=',
      '/locations/places/search?q=%20%20',
    ]) {
      const res = await T.api.get(path);
      err(res, 400, 'bad-request/missing-param');
      expect(res.body.field).toBe('q');
    }
  });

  test('postal code: exact match only; none → 404 bad-request/not-found', async () => {
    const hit = await T.api.get('/locations/places/postal-code/76000');
    expect(hit.status).toBe(200);
    expect(hit.body.totalCount).toBe(1);
    expect(ids(hit)).toEqual([centro.id]);
    expect(ids(await T.api.get('/locations/places/postal-code/76100'))).toEqual([norte.id]);
    err(await T.api.get('/locations/places/postal-code/7600'), 404, 'bad-request/not-found');
    err(await T.api.get('/locations/places/postal-code/76'), 404, 'bad-request/not-found');
    err(await T.api.get('/locations/places/postal-code/.*'), 404, 'bad-request/not-found');
    err(await T.api.get('/locations/places/postal-code/%20'), 400, 'bad-request/missing-param');
  });
});

describe('zones', () => {
  test('create, list by code, delete; codes are case-insensitive and per location', async () => {
    const loc = await create();
    const other = await create();
    const made = await A.api.post(`/locations/${loc.id}/zones`, { code: 'b-2', name: 'Cold room', type: 'zone' });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({
      locationId: loc.id,
      code: 'B-2',
      name: 'Cold room',
      type: 'zone',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    // the Location header names the zone, which reads back (code in any case)
    expect(made.headers.get('location')).toBe(`/locations/${loc.id}/zones/B-2`);
    const read = await A.api.get(made.headers.get('location')!);
    expect({ status: read.status, body: read.body }).toEqual({ status: 200, body: made.body });
    expect((await A.api.get(`/locations/${loc.id}/zones/b-2`)).body).toEqual(made.body);
    expect((await A.api.post(`/locations/${loc.id}/zones`, { code: 'A1', name: 'Aisle 1', type: 'zone' })).status).toBe(
      201,
    );
    expect(
      (await A.api.post(`/locations/${other.id}/zones`, { code: 'A1', name: 'Aisle 1 elsewhere', type: 'zone' }))
        .status,
    ).toBe(201);
    const dup = await A.api.post(`/locations/${loc.id}/zones`, { code: 'B-2', name: 'Again', type: 'zone' });
    err(dup, 400, 'bad-request/duplicate-code');
    expect(dup.body.field).toBe('code');
    err(
      await A.api.post(`/locations/${loc.id}/zones`, { code: 'a1', name: 'Lower case', type: 'zone' }),
      400,
      'bad-request/duplicate-code',
    );
    const list = await A.api.get(`/locations/${loc.id}/zones`);
    expect(list.status).toBe(200);
    expect(list.body.totalCount).toBe(2);
    expect(list.body.zones.map((z: { code: string; name: string }) => [z.code, z.name])).toEqual([
      ['A1', 'Aisle 1'],
      ['B-2', 'Cold room'],
    ]);
    const del = await A.api.delete(`/locations/${loc.id}/zones/b-2`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true, message: expect.stringContaining('B-2') });
    err(await A.api.delete(`/locations/${loc.id}/zones/B-2`), 404, 'bad-request/not-found');
    err(await A.api.get(`/locations/${loc.id}/zones/B-2`), 404, 'bad-request/not-found');
    err(await A.api.get(`/locations/${other.id}/zones/B-2`), 404, 'bad-request/not-found');
    expect((await A.api.get(`/locations/${loc.id}/zones`)).body.zones.map((z: { code: string }) => z.code)).toEqual([
      'A1',
    ]);
    expect(
      (await A.api.post(`/locations/${loc.id}/zones`, { code: 'B-2', name: 'Reused after delete', type: 'zone' }))
        .status,
    ).toBe(201);
    expect((await A.api.get(`/locations/${other.id}/zones`)).body.zones.map((z: { name: string }) => z.name)).toEqual([
      'Aisle 1 elsewhere',
    ]);
  });

  test.each([
    ['no body', undefined, 'bad-request/missing-code', 'code'],
    ['no code', { name: 'n', type: 'zone' }, 'bad-request/missing-code', 'code'],
    ['blank code', { code: ' ', name: 'n', type: 'zone' }, 'bad-request/missing-code', 'code'],
    ['no name', { code: 'Z1', type: 'zone' }, 'bad-request/missing-name', 'name'],
    ['no type', { code: 'Z1', name: 'n' }, 'bad-request/missing-type', 'type'],
    ['type location', { code: 'Z1', name: 'n', type: 'location' }, 'bad-request/invalid-type', 'type'],
    ['type shelf', { code: 'Z1', name: 'n', type: 'shelf' }, 'bad-request/invalid-type', 'type'],
    ['code with a slash', { code: 'A/1', name: 'n', type: 'zone' }, 'bad-request', 'code'],
    ['unknown field', { code: 'Z1', name: 'n', type: 'zone', capacity: 3 }, 'bad-request', 'capacity'],
  ])('invalid zone: %s → 400, nothing stored', async (_n, body, code, field) => {
    const loc = await create();
    const res = await A.api.post(`/locations/${loc.id}/zones`, body);
    err(res, 400, code);
    expect(res.body.field).toBe(field);
    expect(await storedZones(A).then((zs) => zs.filter((z) => z.locationId === loc.id))).toEqual([]);
  });

  test('an unknown location → 404 bad-request/not-found on every zone route, nothing stored', async () => {
    const before = await storedZones(A);
    err(
      await A.api.post('/locations/loc_nope/zones', { code: 'Z1', name: 'n', type: 'zone' }),
      404,
      'bad-request/not-found',
    );
    err(await A.api.get('/locations/loc_nope/zones'), 404, 'bad-request/not-found');
    err(await A.api.get('/locations/loc_nope/zones/Z1'), 404, 'bad-request/not-found');
    err(await A.api.delete('/locations/loc_nope/zones/Z1'), 404, 'bad-request/not-found');
    expect(await storedZones(A)).toEqual(before);
  });

  test('10 concurrent creates of one code → exactly one 201, the others 400 bad-request/duplicate-code', async () => {
    const loc = await create();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        A.api.post(`/locations/${loc.id}/zones`, { code: 'RACE', name: `try ${i}`, type: 'zone' }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 201)) err(r, 400, 'bad-request/duplicate-code');
    const zones = (await A.api.get(`/locations/${loc.id}/zones`)).body.zones;
    expect(zones).toHaveLength(1);
    expect(zones[0].name).toBe(results.find((r) => r.status === 201)!.body.name);
  });
});

describe('tenant isolation', () => {
  test("another tenant's location is 404 on every route, and nothing of it changes", async () => {
    const loc = await create({ address: { city: 'Mérida', postalCode: '97000' } });
    expect((await A.api.post(`/locations/${loc.id}/zones`, { code: 'Z1', name: 'z', type: 'zone' })).status).toBe(201);
    const beforeLocations = await storedLocations(A);
    const beforeZones = await storedZones(A);
    err(await B.api.get(`/locations/${loc.id}`), 404, 'not-found');
    err(await B.api.put(`/locations/${loc.id}`, { name: 'stolen' }), 404, 'bad-request/not-found');
    err(await B.api.put(`/locations/${loc.id}`, { isDefault: true }), 404, 'bad-request/not-found');
    err(await B.api.post(`/locations/${loc.id}/set-default`), 404, 'bad-request/not-found');
    err(await B.api.delete(`/locations/${loc.id}`), 404, 'bad-request/not-found');
    err(await B.api.get(`/locations/${loc.id}/zones`), 404, 'bad-request/not-found');
    err(await B.api.get(`/locations/${loc.id}/zones/Z1`), 404, 'bad-request/not-found');
    err(
      await B.api.post(`/locations/${loc.id}/zones`, { code: 'Z2', name: 'z', type: 'zone' }),
      404,
      'bad-request/not-found',
    );
    err(await B.api.delete(`/locations/${loc.id}/zones/Z1`), 404, 'bad-request/not-found');
    err(await B.api.get('/locations/places/postal-code/97000'), 404, 'bad-request/not-found');
    expect((await B.api.get('/locations/places/search?q=M%C3%A9rida')).body).toEqual({
      locations: [],
      totalCount: 0,
    });
    // A's system location, addressed by B
    const sysA = systemLocationId(A.tenantId);
    err(await B.api.get(`/locations/${sysA}`), 404, 'not-found');
    err(await B.api.put(`/locations/${sysA}`, { isDefault: false }), 404, 'bad-request/not-found');
    err(await B.api.delete(`/locations/${sysA}`), 404, 'bad-request/not-found');
    err(await B.api.post(`/locations/${sysA}/set-default`), 404, 'bad-request/not-found');
    const listB = await allOf(B);
    expect(listB.map((l) => l.id)).not.toContain(loc.id);
    expect(listB.map((l) => l.id)).not.toContain(sysA);
    expect(await storedLocations(A)).toEqual(beforeLocations);
    expect(await storedZones(A)).toEqual(beforeZones);
  });
});

describe('auth', () => {
  const routes: [string, (id: string) => string, unknown, string][] = [
    ['POST', () => '/locations', { name: 'x', type: 'location' }, 'locations:create'],
    ['GET', () => '/locations', undefined, 'locations:read'],
    ['GET', () => '/locations/count', undefined, 'locations:read'],
    ['GET', () => '/locations/places/search?q=x', undefined, 'locations:read'],
    ['GET', () => '/locations/places/postal-code/76000', undefined, 'locations:read'],
    ['GET', (id) => `/locations/${id}`, undefined, 'locations:read'],
    ['PUT', (id) => `/locations/${id}`, { name: 'x' }, 'locations:update'],
    ['PUT', () => '/locations', { name: 'x' }, 'locations:update'],
    ['DELETE', (id) => `/locations/${id}`, undefined, 'locations:delete'],
    ['POST', (id) => `/locations/${id}/set-default`, undefined, 'locations:update'],
    ['POST', (id) => `/locations/${id}/zones`, { code: 'Q1', name: 'x', type: 'zone' }, 'locations:create'],
    ['GET', (id) => `/locations/${id}/zones`, undefined, 'locations:read'],
    ['GET', (id) => `/locations/${id}/zones/Q1`, undefined, 'locations:read'],
    ['DELETE', (id) => `/locations/${id}/zones/Q1`, undefined, 'locations:delete'],
  ];

  test('no key or an unknown key → 401 bad-request/missing-tenant on every route', async () => {
    const loc = await create();
    for (const [method, path, body] of routes) {
      const res = await anonymous.request(method, path(loc.id), { body });
      err(res, 401, 'bad-request/missing-tenant');
      err(
        await anonymous.as('bok_thisKeyWasNeverIssuedToAnyoneAtAll_123').request(method, path(loc.id), { body }),
        401,
        'bad-request/missing-tenant',
      );
    }
  });

  test('a key lacking the scope → 403 naming it, and nothing written', async () => {
    const loc = await create();
    const before = await storedLocations(A);
    const zonesBefore = await storedZones(A);
    for (const [method, path, body, scope] of routes) {
      const others = ['locations:read', 'locations:create', 'locations:update', 'locations:delete'].filter(
        (s) => s !== scope,
      );
      const lacking = await deps.tenancy.issueKey(A.tenantId, others as never);
      const res = await A.api.as(lacking.key).request(method, path(loc.id), { body });
      err(res, 403, 'auth:permission_denied');
      expect(res.body.message).toContain(scope);
    }
    expect(await storedLocations(A)).toEqual(before);
    expect(await storedZones(A)).toEqual(zonesBefore);
  });

  test('each route answers with its own scope alone', async () => {
    for (const [method, path, body, scope] of routes) {
      if (path('') === '/locations' && method === 'PUT') continue; // always 400 missing-id
      const loc = await create({ address: { postalCode: '76000' } });
      if (path('') === '/locations//zones/Q1')
        await A.api.post(`/locations/${loc.id}/zones`, { code: 'Q1', name: 'q', type: 'zone' });
      const only = await deps.tenancy.issueKey(A.tenantId, [scope] as never);
      const res = await A.api.as(only.key).request(method, path(loc.id), { body });
      expect({ method, path: path(':id'), status: res.status }).toEqual({
        method,
        path: path(':id'),
        status: method === 'POST' && body ? 201 : 200,
      });
    }
  });
});

test('every route is in /openapi.json with a summary and its scopes', async () => {
  const doc = (await anonymous.get('/openapi.json')).body;
  const expected: [string, string, string][] = [
    ['/locations', 'post', 'locations:create'],
    ['/locations', 'get', 'locations:read'],
    ['/locations', 'put', 'locations:update'],
    ['/locations/count', 'get', 'locations:read'],
    ['/locations/places/search', 'get', 'locations:read'],
    ['/locations/places/postal-code/{postalCode}', 'get', 'locations:read'],
    ['/locations/{id}', 'get', 'locations:read'],
    ['/locations/{id}', 'put', 'locations:update'],
    ['/locations/{id}', 'delete', 'locations:delete'],
    ['/locations/{id}/set-default', 'post', 'locations:update'],
    ['/locations/{id}/zones', 'post', 'locations:create'],
    ['/locations/{id}/zones', 'get', 'locations:read'],
    ['/locations/{id}/zones/{code}', 'get', 'locations:read'],
    ['/locations/{id}/zones/{code}', 'delete', 'locations:delete'],
  ];
  for (const [path, method, scope] of expected) {
    const op = doc.paths[path]?.[method];
    expect({ path, method, summary: typeof op?.summary, scopes: op?.['x-scopes'] }).toEqual({
      path,
      method,
      summary: 'string',
      scopes: [scope],
    });
    expect(Object.keys(op.responses).length).toBeGreaterThan(1);
  }
  expect(doc.paths['/locations'].post.requestBody.content['application/json'].schema.properties).toHaveProperty(
    'address',
  );
});

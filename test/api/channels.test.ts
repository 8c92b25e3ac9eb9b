import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ObjectId } from 'mongodb';
import { ApiClient, type HttpResult, type RequestOptions } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps, testConfig, testStack } from '../helpers/stack';
import { Channels, parseChannelId, SECRET_MAX_LENGTH } from '../../shared/channels/channels';
import { TenantDb } from '../../shared/db/tenant-db';
import { decryptSecret } from '../../shared/secrets/crypto';

/** Channels through HTTP on the real API process: CRUD, canonical types, the encrypted signing secret, 400s, 404s, isolation, auth. */
const { dataDir } = testStack();
const secretsKey = testConfig().secretsKey;
let deps: TestDeps;
type Tenant = { tenantId: string; key: string };
let A: Tenant;
let B: Tenant;
let n = 0;
const P = `C${Date.now().toString(36).toUpperCase()}`;

/** Every signing secret this file sends, and every response text it gets: none may contain one. */
const secrets: string[] = [];
const responses: string[] = [];
const newSecret = () => {
  const s = `whsec_${randomBytes(16).toString('hex')}`;
  secrets.push(s);
  return s;
};

/** The suite's client, keeping every response text for the check that none contains a secret. */
class RecordingClient extends ApiClient {
  override as(key: string | null): RecordingClient {
    return new RecordingClient(key, this.base);
  }

  override async request(method: string, path: string, opts: RequestOptions = {}): Promise<HttpResult> {
    const res = await super.request(method, path, opts);
    responses.push(res.text);
    return res;
  }
}
/** Tenant A's client (every channel scope), and tenant B's. */
let api: RecordingClient;
let apiB: RecordingClient;

beforeAll(async () => {
  deps = await TestDeps.open();
  A = await deps.tenantWithKey(['channels:read', 'channels:update'], 'channels A');
  B = await deps.tenantWithKey(['channels:read', 'channels:update'], 'channels B');
  api = new RecordingClient(A.key);
  apiB = api.as(B.key);
});
afterAll(() => deps.close());
const err = (res: HttpResult, status: number, code: string) => expectError(res, status, code, 'other');

const channelBody = (o: Record<string, unknown> = {}) => ({
  name: `${P} channel ${++n}`,
  type: 'shopify',
  settings: { endpointUrl: 'https://shop.example.com/api' },
  ...o,
});

async function create(o: Record<string, unknown> = {}, client: ApiClient = api) {
  const res = await client.post('/channels', channelBody(o));
  expect(res.status).toBe(201);
  return res.body;
}

const stored = (id: string) => deps.db.collection('channels').findOne({ _id: new ObjectId(id) });
const storedOf = (t: Tenant) =>
  deps.db.collection('channels').find({ tenantId: t.tenantId }).sort({ _id: 1 }).toArray();

describe('create and read', () => {
  test('201 with the presented channel; the secret is stored only encrypted and decrypts to what was sent', async () => {
    const secret = newSecret();
    const res = await api.post('/channels', {
      name: `  ${P} Mercado Libre MX  `,
      type: 'mercado-libre',
      settings: {
        endpointUrl: 'https://api.mercadolibre.example/items',
        siteId: 'MLM',
        rateLimitPerSecond: 10,
        timeoutMs: 15000,
        concurrency: 4,
      },
      secret,
    });
    expect(res.status).toBe(201);
    const c = res.body;
    expect(Object.keys(c).sort()).toEqual([
      'createdAt',
      'hasSecret',
      'id',
      'name',
      'settings',
      'status',
      'type',
      'updatedAt',
    ]);
    expect(c).toMatchObject({
      name: `${P} Mercado Libre MX`,
      type: 'mercadolibre',
      status: 'active',
      settings: {
        endpointUrl: 'https://api.mercadolibre.example/items',
        siteId: 'MLM',
        rateLimitPerSecond: 10,
        timeoutMs: 15000,
        concurrency: 4,
      },
      hasSecret: true,
    });
    expect(c.id).toMatch(/^[0-9a-f]{24}$/);
    expect(res.headers.get('location')).toBe(`/channels/${c.id}`);
    expect(new Date(c.createdAt).toISOString()).toBe(c.createdAt);
    expect(c.updatedAt).toBe(c.createdAt);

    const read = await api.get(`/channels/${c.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(c);

    const doc = await stored(c.id);
    expect(doc).toMatchObject({ tenantId: A.tenantId, type: 'mercadolibre', status: 'active' });
    expect(Object.keys(doc!.secret).sort()).toEqual(['alg', 'data', 'iv', 'tag']);
    expect(doc!.secret.alg).toBe('aes-256-gcm');
    expect(JSON.stringify(doc)).not.toContain(secret);
    expect(decryptSecret(doc!.secret, secretsKey)).toBe(secret);
  });

  test('the module contract: Channels.get (own tenant only, malformed id null) and signingSecret', async () => {
    const secret = newSecret();
    const c = await create({ secret });
    const none = await create();
    const own = new Channels(new TenantDb(deps.db, A.tenantId), secretsKey);
    const other = new Channels(new TenantDb(deps.db, B.tenantId), secretsKey);
    const doc = await own.get(c.id);
    expect(doc?._id.toHexString()).toBe(c.id);
    expect(own.signingSecret(doc!)).toBe(secret);
    expect(own.signingSecret((await own.get(none.id))!)).toBeNull();
    expect(await other.get(c.id)).toBeNull();
    expect(await own.get('not-an-id')).toBeNull();
    expect(await own.get(new ObjectId().toHexString())).toBeNull();
    expect(parseChannelId(c.id)?.toHexString()).toBe(c.id);
    expect(parseChannelId(c.id.slice(1))).toBeNull();
    expect(parseChannelId(`${c.id.slice(1)}g`)).toBeNull();
    // a wrong key cannot read it
    expect(() => new Channels(new TenantDb(deps.db, A.tenantId), `${secretsKey}x`).signingSecret(doc!)).toThrow();
  });

  test('defaults: status active, no secret (hasSecret false, stored null), only the settings sent', async () => {
    const c = await create({ secret: undefined });
    expect(c).toMatchObject({
      status: 'active',
      hasSecret: false,
      settings: { endpointUrl: 'https://shop.example.com/api' },
    });
    expect(Object.keys(c.settings)).toEqual(['endpointUrl']);
    expect((await stored(c.id))!.secret).toBeNull();
    const inactive = await create({
      status: 'disconnected',
      secret: null,
      settings: { endpointUrl: 'http://127.0.0.1:8080/hook' },
    });
    expect(inactive).toMatchObject({
      status: 'disconnected',
      hasSecret: false,
      settings: { endpointUrl: 'http://127.0.0.1:8080/hook' },
    });
  });

  test('every spelling of an aliased type is stored and answered as the canonical type', async () => {
    const cases: [string, string][] = [
      ['mercado-libre', 'mercadolibre'],
      ['mercadolibre', 'mercadolibre'],
      ['MeLi', 'mercadolibre'],
      ['t1-comercios', 't1'],
      ['claroshop', 't1'],
      ['woo-commerce', 'woocommerce'],
      ['TikTok-Shop', 'tiktokshop'],
      ['point-of-sale', 'pos'],
    ];
    for (const [spelling, canonical] of cases) {
      const c = await create({ type: spelling });
      expect({ spelling, type: c.type }).toEqual({ spelling, type: canonical });
      expect((await stored(c.id))!.type).toBe(canonical);
    }
  });
});

describe('list', () => {
  let t: RecordingClient;
  const made: any[] = [];
  beforeAll(async () => {
    t = api.as((await deps.tenantWithKey(['channels:read', 'channels:update'], 'channels list')).key);
    for (const [type, status] of [
      ['mercadolibre', 'active'],
      ['mercado-libre', 'inactive'],
      ['shopify', 'active'],
      ['amazon', 'disconnected'],
      ['meli', 'active'],
    ]) {
      made.push(await create({ type, status }, t));
    }
  });

  test('newest first, {channels, totalCount, page, limit}, default limit 20, paged from 1', async () => {
    const all = await t.get('/channels');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ totalCount: 5, page: 1, limit: 20 });
    expect(all.body.channels.map((c: any) => c.id)).toEqual(made.map((c) => c.id).reverse());
    expect(all.body.channels[0]).toEqual(made[4]);
    const p2 = await t.get('/channels?page=2&limit=2');
    expect(p2.body).toMatchObject({ totalCount: 5, page: 2, limit: 2 });
    expect(p2.body.channels.map((c: any) => c.id)).toEqual([made[2].id, made[1].id]);
    const past = await t.get('/channels?page=9&limit=2');
    expect(past.body).toMatchObject({ channels: [], totalCount: 5 });
  });

  test('type filter takes any spelling and matches the canonical type; status filter', async () => {
    const ids = async (q: string) => {
      const res = await t.get(`/channels?${q}`);
      expect(res.status).toBe(200);
      return { ids: res.body.channels.map((c: any) => c.id).sort(), total: res.body.totalCount };
    };
    const ml = [made[0].id, made[1].id, made[4].id].sort();
    expect(await ids('type=mercado-libre')).toEqual({ ids: ml, total: 3 });
    expect(await ids('type=mercadolibre')).toEqual({ ids: ml, total: 3 });
    expect(await ids('type=MELI')).toEqual({ ids: ml, total: 3 });
    expect(await ids('type=mercadolibre&status=active')).toEqual({ ids: [made[0].id, made[4].id].sort(), total: 2 });
    expect(await ids('status=disconnected')).toEqual({ ids: [made[3].id], total: 1 });
    expect(await ids('type=walmart')).toEqual({ ids: [], total: 0 });
  });

  test('bad queries are 400 validation-error naming the parameter', async () => {
    const bad = await t.get('/channels?type=myspace');
    err(bad, 400, 'validation-error');
    expect(bad.body.field).toBe('type');
    expect(bad.body.message).toContain('mercadolibre');
    expect(bad.body.message).toContain('mercado-libre');
    for (const [q, field] of [
      ['limit=101', 'limit'],
      ['limit=0', 'limit'],
      ['page=0', 'page'],
      ['page=x', 'page'],
      ['status=paused', 'status'],
      ['sort=name', 'sort'],
    ]) {
      const res = await t.get(`/channels?${q}`);
      err(res, 400, 'validation-error');
      expect({ q, field: res.body.field }).toEqual({ q, field });
    }
  });

  test('page or limit beyond any finite number → 400 validation-error naming it', async () => {
    for (const [q, field] of [
      ['page=1e309', 'page'],
      ['limit=1e309', 'limit'],
      ['page=-1e309', 'page'],
      ['type=%00', 'type'],
    ]) {
      const res = await t.get(`/channels?${q}`);
      err(res, 400, 'validation-error');
      expect({ q, field: res.body.field }).toEqual({ q, field });
    }
  });
});

describe('update', () => {
  test('only the fields sent change; settings member by member; null removes an optional member', async () => {
    const secret = newSecret();
    const c = await create({
      settings: { endpointUrl: 'https://a.example/x', siteId: 'MX', rateLimitPerSecond: 5, timeoutMs: 1000 },
      secret,
    });
    await new Promise((r) => setTimeout(r, 5));
    const renamed = await api.put(`/channels/${c.id}`, { name: 'Renamed' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...c, name: 'Renamed', updatedAt: renamed.body.updatedAt });
    expect(renamed.body.updatedAt > c.updatedAt).toBe(true);

    const settings = await api.put(`/channels/${c.id}`, {
      settings: { timeoutMs: 30000, siteId: null, concurrency: 8 },
      status: 'inactive',
    });
    expect(settings.status).toBe(200);
    expect(settings.body).toMatchObject({ name: 'Renamed', status: 'inactive', hasSecret: true });
    expect(settings.body.settings).toEqual({
      endpointUrl: 'https://a.example/x',
      rateLimitPerSecond: 5,
      timeoutMs: 30000,
      concurrency: 8,
    });
    expect((await stored(c.id))!.settings).toEqual({
      endpointUrl: 'https://a.example/x',
      rateLimitPerSecond: 5,
      timeoutMs: 30000,
      concurrency: 8,
    });

    const moved = await api.put(`/channels/${c.id}`, {
      type: 'T1-Comercios',
      settings: { endpointUrl: 'http://b.example:8080/y' },
    });
    expect(moved.body).toMatchObject({
      type: 't1',
      settings: { endpointUrl: 'http://b.example:8080/y', concurrency: 8 },
    });
    expect(await api.get(`/channels/${c.id}`).then((r) => r.body)).toEqual(moved.body);
    // the secret was never touched by these updates
    expect(decryptSecret((await stored(c.id))!.secret, secretsKey)).toBe(secret);
  });

  test('a new secret replaces the old one; secret null removes it; a secret can be added later', async () => {
    const first = newSecret();
    const c = await create({ secret: first });
    const before = (await stored(c.id))!.secret;

    const second = newSecret();
    const replaced = await api.put(`/channels/${c.id}`, { secret: second });
    expect(replaced.status).toBe(200);
    expect(replaced.body.hasSecret).toBe(true);
    const after = (await stored(c.id))!.secret;
    expect(after.iv).not.toBe(before.iv);
    expect(decryptSecret(after, secretsKey)).toBe(second);
    expect(JSON.stringify(await stored(c.id))).not.toContain(second);

    const removed = await api.put(`/channels/${c.id}`, { secret: null });
    expect(removed.body.hasSecret).toBe(false);
    expect((await stored(c.id))!.secret).toBeNull();
    const ch = new Channels(new TenantDb(deps.db, A.tenantId), secretsKey);
    expect(ch.signingSecret((await ch.get(c.id))!)).toBeNull();

    const third = newSecret();
    const added = await api.put(`/channels/${c.id}`, { secret: third });
    expect(added.body.hasSecret).toBe(true);
    expect(ch.signingSecret((await ch.get(c.id))!)).toBe(third);
  });

  test('invalid updates are 400 validation-error naming the field, and change nothing', async () => {
    const c = await create({ secret: newSecret(), settings: { endpointUrl: 'https://keep.example', siteId: 'MLM' } });
    const before = await stored(c.id);
    const cases: [unknown, string][] = [
      [{}, '(body)'],
      [{ name: '' }, 'name'],
      [{ name: '   ' }, 'name'],
      [{ type: 'friendster' }, 'type'],
      [{ status: 'paused' }, 'status'],
      [{ settings: { endpointUrl: null } }, 'settings.endpointUrl'],
      [{ settings: { endpointUrl: 'ftp://files.example/x' } }, 'settings.endpointUrl'],
      [{ settings: {} }, 'settings'],
      [{ settings: { colour: 'red' } }, 'settings.colour'],
      [{ settings: { concurrency: 0 } }, 'settings.concurrency'],
      [{ secret: 'short-secret' }, 'secret'],
      [{ secret: 1234567890123456 }, 'secret'],
      [{ name: 'ok', tenantId: B.tenantId }, 'tenantId'],
      [{ name: 'ok', hasSecret: false }, 'hasSecret'],
      [[{ name: 'x' }], '(body)'],
    ];
    for (const [body, field] of cases) {
      const res = await api.put(`/channels/${c.id}`, body);
      err(res, 400, 'validation-error');
      expect({ body, field: res.body.field }).toEqual({ body, field });
    }
    expect(await stored(c.id)).toEqual(before);
    err(await api.put(`/channels/${c.id}`), 400, 'validation-error');
  });
});

describe('delete', () => {
  test('200 {success, message}; then the channel is gone: 404 on every route', async () => {
    const c = await create({ secret: newSecret() });
    const res = await api.delete(`/channels/${c.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: expect.stringContaining(c.id) });
    expect(await stored(c.id)).toBeNull();
    err(await api.get(`/channels/${c.id}`), 404, 'not-found');
    err(await api.put(`/channels/${c.id}`, { name: 'back' }), 404, 'not-found');
    err(await api.delete(`/channels/${c.id}`), 404, 'not-found');
    expect(await stored(c.id)).toBeNull();
  });
});

describe('400 on create: nothing is stored', () => {
  test.each([
    ['missing name', (b: any) => delete b.name, 'name'],
    ['blank name', (b: any) => (b.name = '   '), 'name'],
    ['name too long', (b: any) => (b.name = 'x'.repeat(201)), 'name'],
    ['missing type', (b: any) => delete b.type, 'type'],
    ['unknown type', (b: any) => (b.type = 'myspace'), 'type'],
    ['type not a string', (b: any) => (b.type = 7), 'type'],
    ['bad status', (b: any) => (b.status = 'paused'), 'status'],
    ['missing settings', (b: any) => delete b.settings, 'settings'],
    ['missing endpointUrl', (b: any) => (b.settings = { siteId: 'MLM' }), 'settings.endpointUrl'],
    ['endpointUrl not a URL', (b: any) => (b.settings = { endpointUrl: 'not a url' }), 'settings.endpointUrl'],
    ['endpointUrl ftp', (b: any) => (b.settings = { endpointUrl: 'ftp://files.example/x' }), 'settings.endpointUrl'],
    ['endpointUrl without a host', (b: any) => (b.settings = { endpointUrl: 'https://' }), 'settings.endpointUrl'],
    ['endpointUrl relative', (b: any) => (b.settings = { endpointUrl: '/api/items' }), 'settings.endpointUrl'],
    [
      'endpointUrl with credentials',
      (b: any) => (b.settings = { endpointUrl: 'https://user:pw@shop.example/api' }),
      'settings.endpointUrl',
    ],
    ['rateLimitPerSecond 0', (b: any) => (b.settings.rateLimitPerSecond = 0), 'settings.rateLimitPerSecond'],
    ['rateLimitPerSecond 1001', (b: any) => (b.settings.rateLimitPerSecond = 1001), 'settings.rateLimitPerSecond'],
    ['timeoutMs 99', (b: any) => (b.settings.timeoutMs = 99), 'settings.timeoutMs'],
    ['timeoutMs 120001', (b: any) => (b.settings.timeoutMs = 120001), 'settings.timeoutMs'],
    ['concurrency 33', (b: any) => (b.settings.concurrency = 33), 'settings.concurrency'],
    ['concurrency 1.5', (b: any) => (b.settings.concurrency = 1.5), 'settings.concurrency'],
    ['short secret', (b: any) => (b.secret = 'x'.repeat(15)), 'secret'],
    ['long secret', (b: any) => (b.secret = 'x'.repeat(513)), 'secret'],
    ['secret not a string', (b: any) => (b.secret = { value: 'abcdefghijklmnopqrstuvwxyz' }), 'secret'],
    ['unknown field', (b: any) => (b.colour = 'red'), 'colour'],
    ['unknown settings field', (b: any) => (b.settings.apiKey = 'k'), 'settings.apiKey'],
    ['id sent', (b: any) => (b.id = new ObjectId().toHexString()), 'id'],
  ])('%s', async (_label, mutate, field) => {
    const before = (await storedOf(A)).length;
    const body = channelBody({ settings: { endpointUrl: 'https://shop.example.com/api' } });
    mutate(body);
    const res = await api.post('/channels', body);
    err(res, 400, 'validation-error');
    expect(res.body.field).toBe(field);
    expect(res.body.fieldErrors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect(res.body.message).toContain(field);
    expect((await storedOf(A)).length).toBe(before);
  });

  test('an unknown type names the field and lists the accepted spellings; a missing one lists them too', async () => {
    const res = await api.post('/channels', channelBody({ type: 'myspace' }));
    err(res, 400, 'validation-error');
    expect(res.body.field).toBe('type');
    for (const s of [
      'mercadolibre',
      'mercado-libre',
      't1',
      't1-comercios',
      'amazon',
      'walmart',
      'shopify',
      'woocommerce',
      'custom',
    ])
      expect(res.body.message).toContain(s);
    const body = channelBody();
    delete (body as any).type;
    const missing = await api.post('/channels', body);
    expect(missing.body.fieldErrors).toEqual([{ field: 'type', message: expect.stringContaining('mercado-libre') }]);
  });

  test('a secret sent with an invalid body is not stored and not echoed; every error is listed', async () => {
    const secret = newSecret();
    const before = (await storedOf(A)).length;
    const res = await api.post('/channels', {
      name: '',
      type: 'nope',
      settings: { endpointUrl: 'gopher://x' },
      secret,
      extra: 1,
    });
    err(res, 400, 'validation-error');
    expect(res.body.fieldErrors.map((f: any) => f.field).sort()).toEqual([
      'extra',
      'name',
      'settings.endpointUrl',
      'type',
    ]);
    expect((await storedOf(A)).length).toBe(before);
    const short = `${secret.slice(0, 10)}`;
    const r2 = await api.post('/channels', channelBody({ secret: short }));
    err(r2, 400, 'validation-error');
    expect(r2.text).not.toContain(short);
  });

  test('a body that is not a JSON object, or none: 400', async () => {
    err(await api.post('/channels', [channelBody()]), 400, 'validation-error');
    err(await api.post('/channels', 'text'), 400, 'validation-error');
    err(await api.post('/channels'), 400, 'validation-error');
  });
});

describe('404', () => {
  test('absent and malformed ids on GET, PUT and DELETE', async () => {
    for (const id of [
      new ObjectId().toHexString(),
      'abc',
      'zzzzzzzzzzzzzzzzzzzzzzzz',
      `${new ObjectId().toHexString()}0`,
    ]) {
      err(await api.get(`/channels/${id}`), 404, 'not-found');
      err(await api.put(`/channels/${id}`, { name: 'x' }), 404, 'not-found');
      err(await api.delete(`/channels/${id}`), 404, 'not-found');
    }
  });
});

describe('tenant isolation', () => {
  test("another tenant's channel is 404 on every route, unchanged, and absent from its list", async () => {
    const secret = newSecret();
    const c = await create({ secret });
    const before = await stored(c.id);
    err(await apiB.get(`/channels/${c.id}`), 404, 'not-found');
    err(await apiB.put(`/channels/${c.id}`, { name: 'stolen', secret: newSecret() }), 404, 'not-found');
    err(await apiB.put(`/channels/${c.id}`, { secret: null }), 404, 'not-found');
    err(await apiB.delete(`/channels/${c.id}`), 404, 'not-found');
    expect(await stored(c.id)).toEqual(before);
    const list = await apiB.get('/channels?limit=100');
    expect(list.body.channels.map((x: any) => x.id)).not.toContain(c.id);
    const own = await api.get(`/channels/${c.id}`);
    expect(own.status).toBe(200);
  });
});

describe('authentication and scopes', () => {
  test('401 without or with a bad key on every route; nothing written', async () => {
    const c = await create();
    const before = (await storedOf(A)).length;
    for (const key of [null, 'bok_not-a-real-key']) {
      const anon = api.as(key);
      err(await anon.post('/channels', channelBody()), 401, 'auth:invalid_token');
      err(await anon.get('/channels'), 401, 'auth:invalid_token');
      err(await anon.get(`/channels/${c.id}`), 401, 'auth:invalid_token');
      err(await anon.put(`/channels/${c.id}`, { name: 'x' }), 401, 'auth:invalid_token');
      err(await anon.delete(`/channels/${c.id}`), 401, 'auth:invalid_token');
    }
    expect((await storedOf(A)).length).toBe(before);
    expect((await stored(c.id))!.name).toBe(c.name);
  });

  test('403 naming the scope: channels:read cannot write, channels:update alone cannot read', async () => {
    const c = await create();
    const before = (await storedOf(A)).length;
    const readOnly = api.as((await deps.tenancy.issueKey(A.tenantId, ['channels:read'])).key);
    const writeOnly = api.as((await deps.tenancy.issueKey(A.tenantId, ['channels:update'])).key);
    const other = api.as((await deps.tenancy.issueKey(A.tenantId, ['products:read', 'orders:update'])).key);
    for (const [method, path, body] of [
      ['POST', '/channels', channelBody()],
      ['PUT', `/channels/${c.id}`, { name: 'x' }],
      ['DELETE', `/channels/${c.id}`, undefined],
    ] as const) {
      const res = await readOnly.request(method, path, { body });
      err(res, 403, 'auth:permission_denied');
      expect(res.body.message).toContain('channels:update');
      err(await other.request(method, path, { body }), 403, 'auth:permission_denied');
    }
    for (const path of ['/channels', `/channels/${c.id}`]) {
      const res = await writeOnly.get(path);
      err(res, 403, 'auth:permission_denied');
      expect(res.body.message).toContain('channels:read');
      expect((await readOnly.get(path)).status).toBe(200);
    }
    expect((await storedOf(A)).length).toBe(before);
    expect((await stored(c.id))!.name).toBe(c.name);
  });

  test('the routes are served under /v1 too', async () => {
    const c = await create();
    const res = await api.get(`/v1/channels/${c.id}`);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(c.id);
  });
});

describe('the secret never leaves', () => {
  // traffic of its own, so that each check below has secrets to look for when it runs alone:
  // every route, with a secret in the body of what is accepted and of what is refused
  beforeAll(async () => {
    const readOnly = api.as((await deps.tenancy.issueKey(A.tenantId, ['channels:read'])).key);
    for (let i = 0; i < 12; i++) {
      const c = await create({ secret: newSecret() });
      await api.get(`/channels/${c.id}`);
      await api.get('/channels?limit=5');
      await api.put(`/channels/${c.id}`, { name: `${P} rotated ${i}`, secret: newSecret() });
      await api.put(`/channels/${c.id}`, { name: '   ', secret: newSecret() }); // refused: blank name
      await api.post('/channels', channelBody({ type: 'nope', secret: newSecret() })); // refused: type
      await api.post('/channels', channelBody({ secret: `${newSecret()}${'x'.repeat(SECRET_MAX_LENGTH)}` })); // refused: too long
      await apiB.put(`/channels/${c.id}`, { secret: newSecret() }); // another tenant's: 404
      await api.as(null).post('/channels', channelBody({ secret: newSecret() })); // 401
      await readOnly.put(`/channels/${c.id}`, { secret: newSecret() }); // 403
      if (i % 2) await api.delete(`/channels/${c.id}`);
    }
  });

  test('no response body of this file contained any signing secret sent', () => {
    expect(secrets.length).toBeGreaterThanOrEqual(10);
    expect(responses.length).toBeGreaterThan(100);
    for (const s of secrets) for (const text of responses) expect(text.includes(s)).toBe(false);
  });

  test('the stored documents hold only the encrypted form', async () => {
    const all = JSON.stringify(
      await deps.db
        .collection('channels')
        .find({ tenantId: { $in: [A.tenantId, B.tenantId] } })
        .toArray(),
    );
    for (const s of secrets) expect(all.includes(s)).toBe(false);
  });

  test("no line of the API's log contains a secret", async () => {
    await new Promise((r) => setTimeout(r, 300)); // let the log stream flush
    const log = readFileSync(`${dataDir}/logs/api.log`, 'utf8');
    expect(log).toContain('/channels');
    for (const s of secrets) expect(log.includes(s)).toBe(false);
  });
});

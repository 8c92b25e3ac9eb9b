import { MongoClient } from 'mongodb';
import { AuthCache, FRESH_MS, announceAuthChange } from '../../shared/auth/auth-cache';
import { Tenancy, type Principal } from '../../shared/auth/tenancy';
import { http, TestDeps } from '../helpers/stack';

/**
 * The API remembers the credentials it admitted (shared/auth/auth-cache.ts). These tests hold
 * it to the guarantee it must keep: once a revocation or suspension made elsewhere (the admin
 * CLI, another API process) has returned, nothing it took away is admitted.
 */
let deps: TestDeps;
let app: { url: string; close: () => Promise<void> };

beforeAll(async () => {
  // a database of its own: another file's revocation would move the epoch under these tests
  deps = await TestDeps.open({ database: 'auth_cache_test' });
  app = await deps.serveApp();
});

afterAll(async () => {
  await app.close();
  await deps.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const path = '/orders/none-such';

describe('Tenancy with a cache', () => {
  let api: Tenancy;
  beforeEach(() => {
    api = new Tenancy(deps.db, { cache: true });
  });
  afterEach(() => api.close());

  test('remembers an admitted key, and forgets it when a change is announced', async () => {
    const t = await deps.tenantWithKey(['orders:read']);
    await api.cache!.confirm();
    expect(await api.authenticate(t.key)).toMatchObject({ tenantId: t.tenantId, keyId: t.keyId });
    // the key's record goes away behind the cache's back: still admitted from memory
    await deps.db.collection('api_keys').deleteOne({ _id: t.keyId as never });
    await api.cache!.confirm();
    expect(await api.authenticate(t.key)).toMatchObject({ keyId: t.keyId });
    await announceAuthChange(deps.db);
    expect(await api.authenticate(t.key)).toBe('invalid');
  });

  test('never remembers a refusal', async () => {
    const t = await deps.tenantWithKey(['orders:read']);
    await deps.db.collection('tenants').updateOne({ _id: t.tenantId as never }, { $set: { status: 'suspended' } });
    await deps.db.collection('api_keys').updateOne({ _id: t.keyId as never }, { $unset: { tenantSuspended: '' } });
    await api.cache!.confirm();
    expect(await api.authenticate(t.key)).toBe('suspended');
    await deps.db.collection('tenants').updateOne({ _id: t.tenantId as never }, { $set: { status: 'active' } });
    await api.cache!.confirm();
    expect(await api.authenticate(t.key)).toMatchObject({ keyId: t.keyId });
  });

  test('an access token is refused from memory once it expires', async () => {
    const t = await deps.tenantWithKey(['orders:read']);
    const principal = (await deps.tenancy.authenticate(t.key)) as Principal;
    const tokens = await deps.tenancy.issueTokens(principal, { accessSeconds: 1, refreshSeconds: 60 });
    await api.cache!.confirm();
    expect(await api.authenticate(tokens.accessToken)).toMatchObject({ via: 'token' });
    await deps.db.collection('auth_tokens').deleteMany({ keyId: t.keyId }); // from memory from now on
    await api.cache!.confirm();
    expect(await api.authenticate(tokens.accessToken)).toMatchObject({ via: 'token' });
    await sleep(1100);
    await api.cache!.confirm();
    expect(await api.authenticate(tokens.accessToken)).toBe('invalid');
  });

  test("an access token of a revoked key is refused, also one minted after revokeKey deleted the key's tokens", async () => {
    const t = await deps.tenantWithKey(['orders:read']);
    const principal = (await deps.tenancy.authenticate(t.key)) as Principal;
    await deps.tenancy.revokeKey(t.keyId);
    // what a POST /auth/token admitted from a cache just before the revocation returned can insert
    const late = await deps.tenancy.issueTokens(principal, { accessSeconds: 60, refreshSeconds: 60 });
    expect(await api.authenticate(late.accessToken)).toBe('invalid');
    expect(await deps.tenancy.refresh(late.refreshToken, { accessSeconds: 60, refreshSeconds: 60 })).toBe('invalid');
  });

  test('a resumption and a suspension at once never leave a suspended tenant with admitting keys', async () => {
    const t = await deps.tenantWithKey(['orders:read']);
    for (let round = 0; round < 8; round++) {
      await Promise.all([
        deps.tenancy.setTenantStatus(t.tenantId, 'active'),
        deps.tenancy.setTenantStatus(t.tenantId, 'suspended'),
      ]);
      const { status } = (await deps.db.collection('tenants').findOne({ _id: t.tenantId as never }))!;
      const keys = await deps.db.collection('api_keys').find({ tenantId: t.tenantId }).toArray();
      // refusing while active is what an unfinished change may leave (re-running it completes it)
      if (status !== 'active') expect(keys.map((k) => k.tenantSuspended)).toEqual(keys.map(() => true));
      await deps.tenancy.setTenantStatus(t.tenantId, 'suspended');
    }
  });
});

describe('AuthCache', () => {
  test('a lookup that began before the cache forgot everything is not remembered', async () => {
    const cache = new AuthCache<string>(deps.db);
    try {
      await cache.confirm();
      const before = cache.generation;
      cache.set(before, 'kept', 'v');
      expect(cache.get('kept')).toBe('v');
      // a change lands while a lookup of 'late' is in flight (the epoch without the wait)
      await deps.db
        .collection('auth_state')
        .updateOne({ _id: 'epoch' as never }, { $inc: { value: 1 } }, { upsert: true });
      await cache.confirm();
      expect(cache.generation).toBeGreaterThan(before);
      expect(cache.get('kept')).toBeUndefined();
      cache.set(before, 'late', 'stale');
      expect(cache.get('late')).toBeUndefined();
      cache.set(cache.generation, 'late', 'fresh');
      expect(cache.get('late')).toBe('fresh');
    } finally {
      cache.close();
    }
  });

  test('nothing is used before the epoch was read, nor once it cannot be read for FRESH_MS', async () => {
    const client = await MongoClient.connect(deps.config.mongodbUri);
    const cache = new AuthCache<string>(client.db(deps.db.databaseName));
    try {
      cache.set(cache.generation, 'early', 'v');
      expect(cache.get('early')).toBeUndefined(); // no read of the epoch yet
      await cache.confirm();
      cache.set(cache.generation, 'k', 'v');
      expect(cache.get('k')).toBe('v');
      await client.close(); // the database is gone: reads of the epoch fail from now on
      await cache.confirm().catch(() => undefined);
      await sleep(FRESH_MS + 50);
      expect(cache.get('k')).toBeUndefined();
    } finally {
      cache.close();
      await client.close();
    }
  });
});

describe('through the API, with changes made from outside it', () => {
  /**
   * Requests with each credential, one after another per credential, from a second before
   * `change` until half a second after it returned and at least 8 were answered since (a loaded
   * machine answers fewer in half a second): which were answered before it began, and which were
   * sent after it returned.
   */
  async function underLoad(credentials: string[], change: () => Promise<unknown>) {
    const seen: { sentAt: number; doneAt: number; status: number; credential: string }[] = [];
    let stop = false;
    const client = async (credential: string) => {
      while (!stop) {
        const sentAt = performance.now();
        const res = await http(app.url, 'GET', path, { key: credential });
        seen.push({ sentAt, doneAt: performance.now(), status: res.status, credential });
      }
    };
    const clients = Promise.all(credentials.map(client));
    await sleep(1000);
    const changing = performance.now();
    await change();
    const changed = performance.now();
    await sleep(500);
    for (const until = changed + 20_000; performance.now() < until; await sleep(50))
      if (seen.filter((s) => s.sentAt > changed).length >= 8) break;
    stop = true;
    await clients;
    return { before: seen.filter((s) => s.doneAt < changing), after: seen.filter((s) => s.sentAt > changed) };
  }

  test('a revoked key is refused by the first request after the revocation returns, under load', async () => {
    const t = await deps.tenantWithKey(['orders:read']);
    const token = (await http(app.url, 'POST', '/auth/token', { key: t.key })).body.accessToken as string;
    const { before, after } = await underLoad([t.key, t.key, token, token], () => deps.tenancy.revokeKey(t.keyId));
    expect(before.length).toBeGreaterThan(3);
    expect(before.every((s) => s.status === 404)).toBe(true); // admitted: the order does not exist
    expect(after.length).toBeGreaterThan(4);
    expect(after.map((s) => s.status)).toEqual(after.map(() => 401));
    expect(new Set(after.map((s) => s.credential))).toEqual(new Set([t.key, token]));
  });

  test('a suspended tenant is refused by the first request after the suspension returns, under load', async () => {
    const t = await deps.tenantWithKey(['orders:read']);
    const { before, after } = await underLoad([t.key, t.key, t.key], () =>
      deps.tenancy.setTenantStatus(t.tenantId, 'suspended'),
    );
    expect(before.length).toBeGreaterThan(3);
    expect(before.every((s) => s.status === 404)).toBe(true);
    expect(after.length).toBeGreaterThan(4);
    expect(after.map((s) => s.status)).toEqual(after.map(() => 403));
  });
});

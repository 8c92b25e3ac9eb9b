import { createHash } from 'node:crypto';
import type { Db } from 'mongodb';
import { newId, newSecret } from '../ids';
import { systemCollection } from '../db/tenant-db';
import { apiKeys, authTokens, tenants, type ApiKeyRecord, type TenantRecord } from './collections';
import { AuthCache, announceAuthChange } from './auth-cache';
import type { Scope } from './scopes';

/**
 * Tenants, API keys and tokens. Used by the admin CLI, the auth middleware and the dev start-up.
 * Keys and tokens are random 256-bit secrets, so a plain SHA-256 is a sound way to store them
 * (a slow password hash buys nothing against a secret that cannot be guessed).
 */

export const KEY_PREFIX = 'bok';
export const ACCESS_PREFIX = 'boat';
export const REFRESH_PREFIX = 'bort';

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export interface Principal {
  tenantId: string;
  keyId: string;
  scopes: ReadonlySet<Scope>;
  via: 'key' | 'token';
}

export type AuthFailure = 'invalid' | 'suspended';

export interface PublicKey {
  keyId: string;
  tenantId: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  createdAt: string;
  revokedAt: string | null;
}

/** The time zone of a tenant that names none (every tenant stored before the setting existed). */
export const DEFAULT_TIME_ZONE = 'UTC';

/**
 * An IANA time zone name as the runtime's time zone data spells it (`america/mexico_city` is
 * `America/Mexico_City`, a link such as `US/Eastern` its zone), or null for a name it does not know.
 */
export function canonicalTimeZone(name: string): string | null {
  if (!name.trim()) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name.trim() }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** The time zone a tenant's time-of-day rules are read in: its setting, else UTC. */
export function timeZoneOf(tenant: Pick<TenantRecord, 'settings'> | null | undefined): string {
  return tenant?.settings.timeZone ?? DEFAULT_TIME_ZONE;
}

function publicKey(k: ApiKeyRecord): PublicKey {
  return {
    keyId: k._id,
    tenantId: k.tenantId,
    name: k.name,
    prefix: k.prefix,
    scopes: k.scopes,
    createdAt: k.createdAt.toISOString(),
    revokedAt: k.revokedAt ? k.revokedAt.toISOString() : null,
  };
}

export class Tenancy {
  /** Public for tests, which confirm the epoch (AuthCache.confirm) instead of sleeping. */
  readonly cache?: AuthCache<Principal>;

  /** `cache`: remember admitted credentials (the API process; see auth-cache.ts). */
  constructor(
    private readonly db: Db,
    options: { cache?: boolean } = {},
  ) {
    if (options.cache) this.cache = new AuthCache(db);
  }

  /** Stops the cache's polling (the API at shutdown, tests). */
  close(): void {
    this.cache?.close();
  }

  private get tenants() {
    return systemCollection(this.db, tenants);
  }
  private get keys() {
    return systemCollection(this.db, apiKeys);
  }
  private get tokens() {
    return systemCollection(this.db, authTokens);
  }

  /** `settings.timeZone`: an IANA name (default UTC), stored as canonicalTimeZone spells it; an unknown one throws a RangeError. */
  async createTenant(name: string, settings: Partial<TenantRecord['settings']> = {}): Promise<TenantRecord> {
    const timeZone = canonicalTimeZone(settings.timeZone ?? DEFAULT_TIME_ZONE);
    if (!timeZone)
      throw new RangeError(
        `Unknown time zone: ${JSON.stringify(settings.timeZone)} (an IANA name such as America/Mexico_City)`,
      );
    const now = new Date();
    const tenant: TenantRecord = {
      _id: newId('ten'),
      name,
      status: 'active',
      settings: {
        taxRate: settings.taxRate ?? 0,
        timeZone,
        ...(settings.aiDailyTokenBudget !== undefined ? { aiDailyTokenBudget: settings.aiDailyTokenBudget } : {}),
      },
      createdAt: now,
      updatedAt: now,
    };
    await this.tenants.insertOne(tenant);
    return tenant;
  }

  getTenant(tenantId: string): Promise<TenantRecord | null> {
    return this.tenants.findOne({ _id: tenantId });
  }

  listTenants(): Promise<TenantRecord[]> {
    return this.tenants.find({}).sort({ createdAt: 1 }).toArray();
  }

  /**
   * Suspends or resumes a tenant, on its record and on each of its keys (what authentication
   * reads). Without transactions the writes are ordered so that an interruption leaves keys
   * refusing, never admitting: suspending flags the keys before the tenant and once more after
   * (a key issued meanwhile, see issueKey); resuming clears them only after the tenant, then
   * reads the tenant again and flags the keys back if a suspension overtook it. Running it again
   * completes an interrupted change. A suspension returns once no API process admits the
   * tenant's keys from its cache.
   */
  /** Sets the tenant's AI token budget per day (null: back to the configured default). */
  async setAiDailyTokenBudget(tenantId: string, tokens: number | null): Promise<TenantRecord | null> {
    return this.tenants.findOneAndUpdate(
      { _id: tenantId },
      tokens === null
        ? { $unset: { 'settings.aiDailyTokenBudget': '' }, $set: { updatedAt: new Date() } }
        : { $set: { 'settings.aiDailyTokenBudget': tokens, updatedAt: new Date() } },
      { returnDocument: 'after' },
    );
  }

  async setTenantStatus(tenantId: string, status: TenantRecord['status']): Promise<TenantRecord | null> {
    const suspended = status !== 'active';
    const flagKeys = (value: boolean) => this.keys.updateMany({ tenantId }, { $set: { tenantSuspended: value } });
    if (suspended) await flagKeys(true);
    const tenant = await this.tenants.findOneAndUpdate(
      { _id: tenantId },
      { $set: { status, updatedAt: new Date() } },
      { returnDocument: 'after' },
    );
    if (!tenant) return null;
    await flagKeys(suspended);
    // a suspension running meanwhile may have flagged the keys before this resumption cleared them
    if (!suspended && (await this.getTenant(tenantId))?.status !== 'active') await flagKeys(true);
    if (suspended) await announceAuthChange(this.db);
    return tenant;
  }

  /** Issues a key; the returned `key` is the only time the secret exists outside the caller's hands. */
  async issueKey(tenantId: string, scopes: Scope[], name = 'default'): Promise<PublicKey & { key: string }> {
    const tenant = await this.getTenant(tenantId);
    if (!tenant) throw new Error(`No tenant ${tenantId}`);
    const key = newSecret(KEY_PREFIX);
    const record: ApiKeyRecord = {
      _id: newId('key'),
      tenantId,
      name,
      hash: hashSecret(key),
      prefix: key.slice(0, KEY_PREFIX.length + 7),
      scopes: [...new Set(scopes)],
      createdAt: new Date(),
      revokedAt: null,
      tenantSuspended: tenant.status !== 'active',
    };
    await this.keys.insertOne(record);
    // A suspension or resumption running meanwhile may have flagged the tenant's keys before this
    // one existed: read the tenant again. Either that read sees the new status, or the change
    // had not reached the tenant yet and flags the keys again afterwards, this one included.
    const current = await this.getTenant(tenantId);
    const suspended = current?.status !== 'active';
    if (suspended !== record.tenantSuspended)
      await this.keys.updateOne({ _id: record._id }, { $set: { tenantSuspended: suspended } });
    return { ...publicKey(record), key };
  }

  async listKeys(tenantId: string): Promise<PublicKey[]> {
    const rows = await this.keys.find({ tenantId }).sort({ createdAt: 1 }).toArray();
    return rows.map(publicKey);
  }

  /** Revokes a key and every token minted from it; returns once no API process admits them. Idempotent. */
  async revokeKey(keyId: string): Promise<PublicKey | null> {
    // Guarded so a second revoke keeps the first revocation time.
    await this.keys.updateOne({ _id: keyId, revokedAt: null }, { $set: { revokedAt: new Date() } });
    const key = await this.keys.findOne({ _id: keyId });
    if (!key) return null;
    await this.tokens.deleteMany({ keyId });
    await announceAuthChange(this.db);
    return publicKey(key);
  }

  /** Resolves a bearer credential (an API key or an access token) to its principal. */
  async authenticate(credential: string): Promise<Principal | AuthFailure> {
    const hash = hashSecret(credential);
    const cached = this.cache?.get(hash);
    if (cached) return cached;
    const generation = this.cache?.generation ?? 0;
    const result = await this.lookUp(credential, hash);
    // shared by every request that presents this credential from now on: frozen
    if (typeof result !== 'string')
      this.cache?.set(generation, hash, Object.freeze(result.principal), result.expiresAt);
    return typeof result === 'string' ? result : result.principal;
  }

  private async lookUp(
    credential: string,
    hash: string,
  ): Promise<{ principal: Principal; expiresAt?: Date } | AuthFailure> {
    // primary reads: what a revocation wrote before it returned must be seen (auth-cache.ts)
    const fresh = { readPreference: 'primary' } as const;
    let key: ApiKeyRecord | null = null;
    let principal: Principal | null = null;
    let expiresAt: Date | undefined;
    if (credential.startsWith(`${KEY_PREFIX}_`)) {
      key = await this.keys.findOne({ hash }, fresh);
      if (key) principal = { tenantId: key.tenantId, keyId: key._id, scopes: new Set(key.scopes), via: 'key' };
    } else if (credential.startsWith(`${ACCESS_PREFIX}_`)) {
      const token = await this.tokens.findOne({ _id: hash, kind: 'access' }, fresh);
      if (token && token.expiresAt > new Date()) {
        // the key too: a token minted while its key was being revoked outlives revokeKey's delete
        key = await this.keys.findOne({ _id: token.keyId }, fresh);
        principal = { tenantId: token.tenantId, keyId: token.keyId, scopes: new Set(token.scopes), via: 'token' };
        expiresAt = token.expiresAt;
      }
    }
    if (!principal || !key || key.revokedAt || key.tenantId !== principal.tenantId) return 'invalid';
    // the key says whether its tenant is suspended (setTenantStatus): no read of the tenant
    if (key.tenantSuspended === true) return 'suspended';
    if (key.tenantSuspended === undefined) {
      const tenant = await this.tenants.findOne({ _id: principal.tenantId }, fresh);
      if (!tenant) return 'invalid';
      if (tenant.status !== 'active') return 'suspended';
    }
    return { principal, expiresAt };
  }

  /** Mints an access token and a refresh token with the principal's tenant and scopes. */
  async issueTokens(p: Principal, ttl: { accessSeconds: number; refreshSeconds: number }) {
    const now = new Date();
    const accessToken = newSecret(ACCESS_PREFIX);
    const refreshToken = newSecret(REFRESH_PREFIX);
    const base = { tenantId: p.tenantId, keyId: p.keyId, scopes: [...p.scopes], createdAt: now };
    await this.tokens.insertMany([
      {
        ...base,
        _id: hashSecret(accessToken),
        kind: 'access',
        expiresAt: new Date(now.getTime() + ttl.accessSeconds * 1000),
      },
      {
        ...base,
        _id: hashSecret(refreshToken),
        kind: 'refresh',
        expiresAt: new Date(now.getTime() + ttl.refreshSeconds * 1000),
      },
    ]);
    return {
      tokenType: 'Bearer' as const,
      accessToken,
      expiresIn: ttl.accessSeconds,
      refreshToken,
      refreshExpiresIn: ttl.refreshSeconds,
      tenantId: p.tenantId,
      scopes: [...p.scopes],
    };
  }

  /**
   * Trades a refresh token for a new pair. Refresh tokens are single-use: the delete is the guard,
   * so two concurrent refreshes with one token cannot both succeed.
   */
  async refresh(refreshToken: string, ttl: { accessSeconds: number; refreshSeconds: number }) {
    if (!refreshToken.startsWith(`${REFRESH_PREFIX}_`)) return 'invalid' as const;
    const id = hashSecret(refreshToken);
    // judged before it is spent: a refresh refused while the tenant is suspended leaves the token
    // usable once the tenant is resumed (as its access tokens are); the delete below spends it once
    const token = await this.tokens.findOne({ _id: id, kind: 'refresh' });
    if (!token || token.expiresAt <= new Date()) return 'invalid' as const;
    const key = await this.keys.findOne({ _id: token.keyId });
    if (!key || key.revokedAt) return 'invalid' as const;
    const tenant = await this.getTenant(token.tenantId);
    if (!tenant) return 'invalid' as const;
    if (tenant.status !== 'active') return 'suspended' as const;
    if (!(await this.tokens.findOneAndDelete({ _id: id, kind: 'refresh' }))) return 'invalid' as const;
    return this.issueTokens(
      { tenantId: token.tenantId, keyId: token.keyId, scopes: new Set(token.scopes), via: 'token' },
      ttl,
    );
  }

  /** Removes expired tokens; run periodically by the API process. */
  async sweepExpiredTokens(now = new Date()): Promise<number> {
    const res = await this.tokens.deleteMany({ expiresAt: { $lte: now } });
    return res.deletedCount;
  }
}

import { defineCollection } from '../db/collection';
import type { Scope } from './scopes';

export interface TenantSettings {
  taxRate: number;
  /**
   * The tenant's IANA time zone (`America/Mexico_City`), in which time-of-day rules such as a
   * modifier configuration's availableHours and availableDays are read. Tenants stored before the
   * field existed lack it: for them it is UTC (see timeZoneOf).
   */
  timeZone?: string;
  /** Tokens the tenant's AI transforms may use per day (its own time zone's day); absent: the configured default. */
  aiDailyTokenBudget?: number;
}

export interface TenantRecord {
  _id: string;
  name: string;
  status: 'active' | 'suspended';
  settings: TenantSettings;
  createdAt: Date;
  updatedAt: Date;
}

export interface ApiKeyRecord {
  _id: string; // key id, `key_…`
  tenantId: string;
  name: string;
  /** SHA-256 of the key; the key itself is shown once and never stored. */
  hash: string;
  /** First characters of the key, so an operator can tell keys apart in a listing. */
  prefix: string;
  scopes: Scope[];
  createdAt: Date;
  revokedAt: Date | null;
  /**
   * The tenant's suspension, copied onto each of its keys so that authenticating a key is one
   * read (Tenancy.setTenantStatus keeps it). Keys stored before the field existed lack it; for
   * them the tenant is read.
   */
  tenantSuspended?: boolean;
}

/** Access and refresh tokens minted from a key by POST /auth/token. */
export interface AuthTokenRecord {
  _id: string; // SHA-256 of the token
  kind: 'access' | 'refresh';
  tenantId: string;
  keyId: string;
  scopes: Scope[];
  expiresAt: Date;
  createdAt: Date;
}

export const tenants = defineCollection<TenantRecord>({ name: 'tenants', scope: 'system', indexes: [] });

export const apiKeys = defineCollection<ApiKeyRecord>({
  name: 'api_keys',
  scope: 'system',
  indexes: [{ key: { hash: 1 }, options: { unique: true } }, { key: { tenantId: 1, createdAt: 1 } }],
});

// Expiry is checked on read and swept by cleanup (no TTL indexes: FerretDB has none).
export const authTokens = defineCollection<AuthTokenRecord>({
  name: 'auth_tokens',
  scope: 'system',
  indexes: [{ key: { keyId: 1 } }, { key: { expiresAt: 1 } }],
});

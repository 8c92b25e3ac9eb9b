import { ObjectId, type Filter, type UpdateFilter } from 'mongodb';
import { pageWindow } from '../paging';
import { defineCollection } from '../db/collection';
import type { TenantDb } from '../db/tenant-db';
import { decryptSecret, encryptSecret, type EncryptedSecret } from '../secrets/crypto';
import { resolveChannelType } from './channel-types';

/**
 * The tenant's sales channels: a type (canonical id from channel-types.ts), a name, a status, the
 * connector's settings and the HMAC signing secret used to sign what we send to the channel.
 * The secret is stored only encrypted (shared/secrets/crypto.ts) and leaves this module only
 * through `signingSecret`, for the code that signs requests; `presentChannel` says only whether
 * one is set.
 */
export const CHANNEL_STATUSES = ['active', 'inactive', 'disconnected'] as const;
export type ChannelStatus = (typeof CHANNEL_STATUSES)[number];

export interface ChannelSettings {
  endpointUrl: string;
  siteId?: string;
  rateLimitPerSecond?: number;
  timeoutMs?: number;
  concurrency?: number;
}

/** The optional settings, their bounds (inclusive, integers) where numeric. */
export const SETTING_BOUNDS = {
  rateLimitPerSecond: { minimum: 1, maximum: 1000 },
  timeoutMs: { minimum: 100, maximum: 120_000 },
  concurrency: { minimum: 1, maximum: 32 },
} as const;
export const OPTIONAL_SETTINGS = ['siteId', 'rateLimitPerSecond', 'timeoutMs', 'concurrency'] as const;
export type OptionalSetting = (typeof OPTIONAL_SETTINGS)[number];

/** Length bounds of a signing secret, in characters. */
export const SECRET_MIN_LENGTH = 16;
export const SECRET_MAX_LENGTH = 512;

export interface ChannelDoc {
  _id: ObjectId;
  tenantId: string;
  name: string;
  /** The canonical type id (channel-types.ts), whatever spelling the client sent. */
  type: string;
  status: ChannelStatus;
  settings: ChannelSettings;
  /** The signing secret, encrypted under SECRETS_KEY; null when none is set. */
  secret: EncryptedSecret | null;
  createdAt: Date;
  updatedAt: Date;
}

export const channels = defineCollection<ChannelDoc>({
  name: 'channels',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, createdAt: -1 } }, { key: { tenantId: 1, type: 1, status: 1 } }],
});

/** A channel id is a 24-hex ObjectId; anything else is no channel. */
export function parseChannelId(id: string): ObjectId | null {
  return typeof id === 'string' && /^[0-9a-f]{24}$/i.test(id) ? new ObjectId(id) : null;
}

export interface ChannelInput {
  name: string;
  /** Any spelling the registry accepts; stored canonical. */
  type: string;
  status?: ChannelStatus;
  settings: ChannelSettings;
  /** The plain signing secret; null or absent: none. */
  secret?: string | null;
}

/** A partial update: only the members given change. In settings, null removes an optional member; `secret: null` removes the secret. */
export interface ChannelPatch {
  name?: string;
  type?: string;
  status?: ChannelStatus;
  settings?: { endpointUrl?: string } & { [K in OptionalSetting]?: ChannelSettings[K] | null };
  secret?: string | null;
}

export interface ChannelListQuery {
  page: number;
  limit: number;
  /** Any spelling. */
  type?: string;
  status?: ChannelStatus;
}

function canonicalType(spelling: string): string {
  const t = resolveChannelType(spelling);
  if (!t) throw new Error(`Unknown channel type ${JSON.stringify(spelling)}`);
  return t.id;
}

/** Only the known settings members, in a fixed order: nothing else stored is ever answered or used. */
function cleanSettings(s: Partial<ChannelSettings> | null | undefined): ChannelSettings {
  const out: ChannelSettings = { endpointUrl: typeof s?.endpointUrl === 'string' ? s.endpointUrl : '' };
  if (typeof s?.siteId === 'string') out.siteId = s.siteId;
  for (const k of ['rateLimitPerSecond', 'timeoutMs', 'concurrency'] as const)
    if (typeof s?.[k] === 'number') out[k] = s[k];
  return out;
}

export class Channels {
  constructor(
    private readonly tenantDb: TenantDb,
    private readonly secretsKey: string,
  ) {}

  private get col() {
    return this.tenantDb.collection(channels);
  }

  /** The tenant's channel; null for a malformed id, an absent one or another tenant's (a primary-key read). */
  async get(id: string): Promise<ChannelDoc | null> {
    const _id = parseChannelId(id);
    if (!_id) return null;
    return this.col.findOne({ _id });
  }

  /** The decrypted signing secret, or null when the channel has none. Throws when the stored secret does not decrypt. */
  signingSecret(channel: ChannelDoc): string | null {
    return channel.secret ? decryptSecret(channel.secret, this.secretsKey) : null;
  }

  /** `id`: derived from the request's Idempotency-Key, so a retry finds the channel it made (insertOnce). */
  async create(input: ChannelInput, id = new ObjectId()): Promise<ChannelDoc> {
    const now = new Date();
    const doc: Omit<ChannelDoc, 'tenantId'> = {
      _id: id,
      name: input.name,
      type: canonicalType(input.type),
      status: input.status ?? 'active',
      settings: cleanSettings(input.settings),
      secret: typeof input.secret === 'string' ? encryptSecret(input.secret, this.secretsKey) : null,
      createdAt: now,
      updatedAt: now,
    };
    return (await this.col.insertOnce(doc)) ?? { ...doc, tenantId: this.tenantDb.tenantId };
  }

  /** Newest first; the type filter takes any spelling (an unknown one matches nothing). */
  async list(q: ChannelListQuery): Promise<{ docs: ChannelDoc[]; total: number }> {
    const filter: Filter<ChannelDoc> = {};
    if (q.type !== undefined) {
      const type = resolveChannelType(q.type);
      if (!type) return { docs: [], total: 0 };
      filter.type = type.id;
    }
    if (q.status !== undefined) filter.status = q.status;
    const [docs, total] = await Promise.all([
      this.col.find(filter, { sort: { createdAt: -1, _id: -1 }, ...pageWindow(q) }).toArray(),
      this.col.countDocuments(filter),
    ]);
    return { docs: docs as ChannelDoc[], total };
  }

  /**
   * Applies a partial update (settings member by member, each one atomically) and answers the
   * channel as it is after it; null when it is not the tenant's.
   */
  async update(id: string, patch: ChannelPatch): Promise<ChannelDoc | null> {
    const _id = parseChannelId(id);
    if (!_id) return null;
    const $set: Record<string, unknown> = { updatedAt: new Date() };
    const $unset: Record<string, ''> = {};
    if (patch.name !== undefined) $set.name = patch.name;
    if (patch.type !== undefined) $set.type = canonicalType(patch.type);
    if (patch.status !== undefined) $set.status = patch.status;
    if (patch.settings) {
      if (patch.settings.endpointUrl !== undefined) $set['settings.endpointUrl'] = patch.settings.endpointUrl;
      for (const k of OPTIONAL_SETTINGS) {
        const v = patch.settings[k];
        if (v === null) $unset[`settings.${k}`] = '';
        else if (v !== undefined) $set[`settings.${k}`] = v;
      }
    }
    if (patch.secret === null) $set.secret = null;
    else if (typeof patch.secret === 'string') $set.secret = encryptSecret(patch.secret, this.secretsKey);
    const update = (Object.keys($unset).length ? { $set, $unset } : { $set }) as UpdateFilter<ChannelDoc>;
    if (!(await this.col.updateById(_id, update))) return null;
    return this.col.findOne({ _id });
  }

  /** Deletes the channel; answers what was deleted, or null when it is not the tenant's. */
  async delete(id: string): Promise<ChannelDoc | null> {
    const doc = await this.get(id);
    if (!doc) return null;
    return (await this.col.deleteById(doc._id)) ? doc : null;
  }
}

/** The channel as the API answers it: never the secret, only whether one is set. */
export function presentChannel(c: ChannelDoc): Record<string, unknown> {
  return {
    id: c._id.toHexString(),
    name: c.name,
    type: resolveChannelType(c.type)?.id ?? c.type,
    status: c.status,
    settings: cleanSettings(c.settings),
    hasSecret: c.secret != null,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

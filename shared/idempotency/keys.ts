import { createHash, randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { tenants } from '../auth/collections';
import { decryptSecret, encryptSecret } from '../secrets/crypto';
import { defineCollection } from '../db/collection';
import { isDuplicateKeyError } from '../db/duplicate-key';
import { systemCollection, TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';

/**
 * Idempotency-Key for creating requests: the first successful answer (status, body, Location) is
 * kept per tenant and key for 24 hours and answered again to a retry of the same request; the
 * same key on a different request is a 409; a retry arriving while the first still runs waits for
 * it (so two concurrent requests run once). A refusal or a failure is not kept: nothing was
 * written, so the retry is judged afresh. A request whose process died mid-way leaves a claim
 * that expires after LEASE_MS, after which a retry runs it.
 */
export const KEY_TTL_MS = 24 * 3600_000;
/** How long a running request holds its key before a retry may take it over (a process that died). */
const LEASE_MS = 60_000;
/** How long a retry waits for the first request to end before answering 409. */
const WAIT_MS = 30_000;
const POLL_MS = 100;
export const MAX_KEY_LENGTH = 255;

export interface KeptResponse {
  status: number;
  /**
   * The body as sent, JSON text (kept as text: a body's own keys may be ones the database refuses),
   * encrypted when `sealed` (see sealResponse).
   */
  json: string;
  location: string | null;
  sealed?: boolean;
}

/**
 * A kept answer is encrypted under SECRETS_KEY: answers hold what must not lie in the database
 * in clear (a webhook endpoint's signing secret, a customer's personal data after a redaction).
 */
export function sealResponse(response: KeptResponse, secretsKey: string): KeptResponse {
  return { ...response, json: JSON.stringify(encryptSecret(response.json, secretsKey)), sealed: true };
}

export function openResponse(response: KeptResponse, secretsKey: string): KeptResponse {
  return response.sealed
    ? { ...response, json: decryptSecret(JSON.parse(response.json), secretsKey), sealed: false }
    : response;
}

export interface IdempotencyRecord {
  _id: string; // `<tenantId>:<key>`
  tenantId: string;
  key: string;
  /** What the request was: method, path and body, hashed. */
  fingerprint: string;
  state: 'running' | 'done';
  /**
   * Names the request's run, the same for a retry that takes over a run that died: the ids of the
   * records it creates derive from it (KeyedRun), so the retry finds them instead of making twins.
   */
  runId?: string;
  response: KeptResponse | null;
  leaseUntil: Date;
  createdAt: Date;
  expiresAt: Date;
}

export const idempotencyKeys = defineCollection<IdempotencyRecord>({
  name: 'idempotency_keys',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, expiresAt: 1 } }],
});

/** 409 for a key sent again with another request (exported for use cases that recognise their own retries). */
export function reused(): AppError {
  return new AppError(
    409,
    'idempotency-key-reused',
    'This Idempotency-Key was used with a different request (method, path or body); use a new key for a new request',
    { field: 'Idempotency-Key' },
  );
}

/** Stable JSON: the same body with its members in another order is the same request. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

export function fingerprintOf(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${canonical(body)}`)
    .digest('hex');
}

/**
 * A run under a key: `runId` and `startedAt` are the first run's when this one takes over a run
 * that died, so the records it creates get the same ids (createdId, createdObjectId).
 */
export interface KeyedRun {
  runId: string;
  startedAt: Date;
}

export type Claim = ({ kind: 'run' } & KeyedRun) | { kind: 'replay'; response: KeptResponse };

export class IdempotencyKeys {
  constructor(private readonly tenantDb: TenantDb) {}

  private get col() {
    return this.tenantDb.collection(idempotencyKeys);
  }

  private id(key: string): string {
    return `${this.tenantDb.tenantId}:${key}`;
  }

  /** Takes the key for a request, or answers the kept response of its first run (waiting for a running one). */
  async claim(key: string, fingerprint: string): Promise<Claim> {
    const _id = this.id(key);
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const now = new Date();
      const fresh = {
        key,
        fingerprint,
        state: 'running' as const,
        runId: randomBytes(12).toString('hex'),
        response: null,
        leaseUntil: new Date(now.getTime() + LEASE_MS),
        createdAt: now,
        expiresAt: new Date(now.getTime() + KEY_TTL_MS),
      };
      try {
        await this.col.insertOne({ _id, ...fresh });
        return { kind: 'run', runId: fresh.runId, startedAt: fresh.createdAt };
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
      }
      const held = await this.col.findOne({ _id });
      if (!held) continue; // released meanwhile
      if (held.expiresAt <= now) {
        // a day old: the key is free again, for a new request
        if (await this.takeOver(held, fresh)) return { kind: 'run', runId: fresh.runId, startedAt: fresh.createdAt };
        continue;
      }
      if (held.fingerprint !== fingerprint) throw reused();
      if (held.state === 'done' && held.response) return { kind: 'replay', response: held.response };
      if (held.leaseUntil <= now) {
        // its request died mid-way without an answer: this retry runs it, as the same run
        const same = { ...fresh, runId: held.runId ?? fresh.runId, createdAt: held.createdAt };
        if (await this.takeOver(held, same)) return { kind: 'run', runId: same.runId, startedAt: same.createdAt };
        continue;
      }
      if (Date.now() > deadline)
        throw new AppError(
          409,
          'idempotency-key-in-progress',
          'A request with this Idempotency-Key is still running; retry shortly',
          {
            field: 'Idempotency-Key',
          },
        );
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  private async takeOver(
    held: IdempotencyRecord,
    fresh: Omit<IdempotencyRecord, '_id' | 'tenantId'>,
  ): Promise<boolean> {
    const res = await this.col.updateOne(
      { _id: held._id, state: held.state, leaseUntil: held.leaseUntil },
      { $set: fresh },
    );
    return res.modifiedCount === 1;
  }

  /** Keeps the answer of the run that holds the key. */
  async keep(key: string, fingerprint: string, response: KeptResponse): Promise<void> {
    await this.col.updateOne(
      { _id: this.id(key), fingerprint, state: 'running' },
      { $set: { state: 'done', response } },
    );
  }

  /**
   * Binds the key to a request whose use case answers a retry itself (a job found again by its
   * key): another request under the key is 409 idempotency-key-reused. `made` when this call made
   * the binding (undo it with unbind if the request does not succeed); `since`, when the binding
   * was made: a key bound again after its 24 hours is another binding, for another job.
   */
  async bind(key: string, fingerprint: string): Promise<{ made: boolean; since: Date }> {
    const _id = this.id(key);
    for (;;) {
      const now = new Date();
      const bound = {
        key,
        fingerprint,
        state: 'done' as const,
        response: null,
        leaseUntil: now,
        createdAt: now,
        expiresAt: new Date(now.getTime() + KEY_TTL_MS),
      };
      try {
        await this.col.insertOne({ _id, ...bound });
        return { made: true, since: now };
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
      }
      const held = await this.col.findOne({ _id });
      if (!held) continue; // released meanwhile
      if (held.expiresAt <= now) {
        if (await this.takeOver(held, bound)) return { made: true, since: now };
        continue;
      }
      if (held.fingerprint !== fingerprint) throw reused();
      return { made: false, since: held.createdAt };
    }
  }

  /** Frees the key of a run that did not succeed: the retry runs again. */
  async release(key: string, fingerprint: string): Promise<void> {
    await this.col.deleteOne({ _id: this.id(key), fingerprint, state: 'running' });
  }

  /** Frees a binding this request made (bind) when the request did not succeed. */
  async unbind(key: string, fingerprint: string): Promise<void> {
    await this.col.deleteOne({ _id: this.id(key), fingerprint, response: null, state: 'done' });
  }
}

/** Deletes, in every tenant, the keys past their 24 hours (a claim checks expiry on read; this reclaims space). */
export async function dropExpiredKeys(db: Db, now = new Date()): Promise<number> {
  let deleted = 0;
  for await (const tenant of systemCollection(db, tenants).find({}, { projection: { _id: 1 } })) {
    const res = await new TenantDb(db, tenant._id).collection(idempotencyKeys).deleteMany({ expiresAt: { $lt: now } });
    deleted += res.deletedCount;
  }
  return deleted;
}

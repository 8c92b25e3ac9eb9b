import type { Db } from 'mongodb';
import { defineCollection } from '../db/collection';
import { systemCollection } from '../db/tenant-db';

/**
 * The API's memory of credentials it has admitted, so that a request costs no database read for
 * its key; without it authentication is half of the database work of a read by id.
 *
 * The guarantee is the one without a cache: once a revocation or suspension has returned, no
 * request is admitted by what it took away, in any API process. It is kept like this:
 *
 * - Every change that takes access away (Tenancy.revokeKey, a suspension) increments an epoch
 *   stored in `auth_state`, then waits CHANGE_WAIT_MS before returning.
 * - Each API process reads the epoch every POLL_MS while requests come in. When it changed, the
 *   process forgets every credential. An entry is used only while the last read of the epoch
 *   that found it unchanged was sent less than FRESH_MS ago (< CHANGE_WAIT_MS): any read sent
 *   after the increment sees it, so by the time the change returns, an entry is either forgotten
 *   or no longer used. A slow database only makes the process read keys again, never admit.
 * - A lookup that started before the process forgot everything may finish after: what it read
 *   may predate the change, so it is not remembered (the generation counter).
 *
 * Access tokens are remembered with their expiry and refused once past it. Only admissions are
 * remembered, never refusals. A change made straight in the database, without the epoch, is seen
 * within MAX_AGE_MS. Every read here and in Tenancy.lookUp goes to the primary: a secondary could
 * answer from before the change.
 */

export const POLL_MS = 100;
export const FRESH_MS = 500;
export const CHANGE_WAIT_MS = 600;
export const MAX_AGE_MS = 60_000;
const MAX_ENTRIES = 10_000;
/** The poller stops after this long without a lookup (an idle API reads nothing). */
const IDLE_MS = 5_000;
/** A read of the epoch slower than this is given up on (it could never make entries usable). */
const READ_TIMEOUT_MS = FRESH_MS;

interface AuthStateRecord {
  _id: 'epoch';
  value: number;
}

export const authState = defineCollection<AuthStateRecord>({ name: 'auth_state', scope: 'system', indexes: [] });

/** Called after a change that takes access away; returns once no API process admits by it. */
export async function announceAuthChange(db: Db): Promise<void> {
  await systemCollection(db, authState).updateOne({ _id: 'epoch' }, { $inc: { value: 1 } }, { upsert: true });
  await new Promise((resolve) => setTimeout(resolve, CHANGE_WAIT_MS));
}

interface Entry<T> {
  value: T;
  storedAt: number;
  /** An access token's expiry (ms since the epoch), checked at every use. */
  expiresAt?: number;
}

export class AuthCache<T> {
  private entries = new Map<string, Entry<T>>();
  private epoch: number | undefined;
  /** Increments whenever the entries are forgotten; a lookup stores only within one generation. */
  private generationCount = 0;
  /** performance.now() when the latest read of the epoch that found it unchanged was sent. */
  private freshAt = -Infinity;
  /** When the read of the epoch last applied was sent (a slower, older read is ignored). */
  private appliedSent = -Infinity;
  private lastUse = 0;
  private polling = false;
  private closed = false;

  constructor(private readonly db: Db) {}

  get generation(): number {
    return this.generationCount;
  }

  get(hash: string): T | undefined {
    const now = performance.now();
    this.lastUse = now;
    this.startPolling();
    if (now - this.freshAt >= FRESH_MS) return undefined;
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (now - entry.storedAt >= MAX_AGE_MS || (entry.expiresAt !== undefined && entry.expiresAt <= Date.now())) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.value;
  }

  /** Remembers an admission read from the database during `generation`. */
  set(generation: number, hash: string, value: T, expiresAt?: Date): void {
    if (generation !== this.generationCount || this.closed) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(hash, { value, storedAt: performance.now(), expiresAt: expiresAt?.getTime() });
  }

  close(): void {
    this.closed = true;
    this.forget();
  }

  private forget(): void {
    this.entries.clear();
    this.generationCount++;
  }

  private startPolling(): void {
    if (this.polling || this.closed) return;
    this.polling = true;
    void this.poll();
  }

  /** Reads the epoch now (the poller does it every POLL_MS; tests call it instead of sleeping). */
  async confirm(): Promise<void> {
    const sent = performance.now();
    const read = systemCollection(this.db, authState).findOne({ _id: 'epoch' }, { readPreference: 'primary' });
    read.catch(() => undefined); // a read given up on may fail later, unheard
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), READ_TIMEOUT_MS).unref());
    const state = await Promise.race([read, timeout]);
    if (state === 'timeout' || sent < this.appliedSent) return; // too slow, or overtaken by a later read
    this.appliedSent = sent;
    const value = state?.value ?? 0;
    if (value !== this.epoch) {
      this.forget();
      this.epoch = value;
    }
    this.freshAt = sent;
  }

  private async poll(): Promise<void> {
    while (!this.closed && performance.now() - this.lastUse < IDLE_MS) {
      // a failed or slow read leaves freshAt to age: lookups then read the database
      await this.confirm().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS).unref());
    }
    this.polling = false;
  }
}

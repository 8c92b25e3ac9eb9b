import { createHash } from 'node:crypto';
import { isDuplicateKeyError } from '../db/duplicate-key';
import type { TenantDb } from '../db/tenant-db';
import { fanOut } from './fan-out';
import { webhookEndpoints, webhookOutbox, type EventPayload, type OutboxEntryDoc } from './collections';

/**
 * Recording events with the changes that cause them. Two ways, by who makes the change:
 *
 * - `recordAround` for a change the API makes once (a request that may die half-way): the outbox
 *   entry is written `pending` before the change and made `ready` with the resource as the change
 *   left it; if the process dies in between, the relay (relay.ts) finds the pending entry and
 *   looks at the resource: there (or, for a deletion, gone), the event is delivered with the
 *   resource as it is then; otherwise the change never happened and the entry is dropped. So no
 *   change is ever unannounced; at worst a change that did not land announces the current state.
 * - `recordEvent` for a change made by an activity or another step retried until it succeeds:
 *   it is recorded `ready` after the change, keyed by the change, so a retry records nothing new.
 *
 * An event's id (its `webhook-id`) is derived from the tenant and the change's key, so every
 * path that records one change records one event.
 */

export interface EventData {
  id: string;
  sequence: number;
  resource: unknown;
}

export interface RecordedEvent extends EventData {
  type: string;
  /** Unique per change within the tenant (e.g. `order:<id>:<audit event id>`). */
  key: string;
  /** Only this endpoint gets it (test events). */
  endpointId?: string;
  /** When the change happened; now when absent. */
  at?: Date;
}

export interface AroundChange {
  type: string;
  key: string;
  /** The resource the relay looks at after a crash (resources.ts names the kinds). */
  kind: string;
  id: string;
  /**
   * The sequence the change brings the resource to. Without it the relay takes a resource that is
   * there for a change that happened, and announces a change that never landed under the id its
   * retry (the same key) then gets: the retry's own event is lost as a repeat.
   */
  sequence?: number;
  /** A deletion: the change happened if the resource is gone, and `before` is what is announced. */
  deletion?: { before: unknown; sequence: number };
}

export function eventIdOf(tenantId: string, key: string): string {
  return `msg_${createHash('sha256').update(`${tenantId}\u0000${key}`).digest('hex').slice(0, 26)}`;
}

// ---- which tenants have endpoints ---------------------------------------------------------------

/** A tenant with no endpoint records nothing: a few ms saved on every write of most tenants. */
const HAS_ENDPOINTS_TTL_MS = 2_000;
const hasEndpointsCache = new Map<string, { value: boolean; until: number }>();

async function hasEndpoints(tenantDb: TenantDb): Promise<boolean> {
  const cacheKey = `${tenantDb.databaseName}/${tenantDb.tenantId}`;
  const hit = hasEndpointsCache.get(cacheKey);
  if (hit && hit.until > Date.now()) return hit.value;
  const value = !!(await tenantDb.collection(webhookEndpoints).findOne({}, { projection: { _id: 1 } }));
  hasEndpointsCache.set(cacheKey, { value, until: Date.now() + HAS_ENDPOINTS_TTL_MS });
  return value;
}

/** An endpoint was created in this process: its tenant's next change is recorded at once. */
export function endpointsChanged(tenantDb: TenantDb): void {
  hasEndpointsCache.delete(`${tenantDb.databaseName}/${tenantDb.tenantId}`);
}

// ---- recording ------------------------------------------------------------------------------------

function payloadOf(type: string, data: EventData, at: Date): EventPayload {
  return { type, timestamp: at.toISOString(), data: { id: data.id, sequence: data.sequence, resource: data.resource } };
}

/** Fans out now, in the background; the relay does it if this process dies first. */
function fanOutSoon(tenantDb: TenantDb, eventId: string): void {
  void fanOut(tenantDb, eventId).catch(() => undefined);
}

/** Records an event of a change already made durably by a retried step (see above). Answers the event id. */
export async function recordEvent(tenantDb: TenantDb, event: RecordedEvent): Promise<string | null> {
  if (!event.endpointId && !(await hasEndpoints(tenantDb))) return null;
  const _id = eventIdOf(tenantDb.tenantId, event.key);
  const entry: Omit<OutboxEntryDoc, 'tenantId'> = {
    _id,
    state: 'ready',
    type: event.type,
    payload: payloadOf(event.type, event, event.at ?? new Date()),
    ...(event.endpointId ? { endpointId: event.endpointId } : {}),
    createdAt: new Date(),
  };
  try {
    await tenantDb.collection(webhookOutbox).insertOne(entry);
  } catch (err) {
    // recorded before (a retried step): fanned out already or about to be
    if (!isDuplicateKeyError(err)) throw err;
    return _id;
  }
  fanOutSoon(tenantDb, _id);
  return _id;
}

/** Makes a change the API makes once, with its event (see above). `after` says what the change left. */
export async function recordAround<T>(
  tenantDb: TenantDb,
  change: AroundChange,
  run: () => Promise<T>,
  after: (result: T) => EventData,
): Promise<T> {
  if (!(await hasEndpoints(tenantDb))) return run();
  const outbox = tenantDb.collection(webhookOutbox);
  const _id = eventIdOf(tenantDb.tenantId, change.key);
  const pending: Omit<OutboxEntryDoc, 'tenantId'> = {
    _id,
    state: 'pending',
    type: change.type,
    resource: {
      kind: change.kind,
      id: change.id,
      expect: change.deletion ? 'absent' : 'present',
      ...(change.sequence !== undefined ? { sequence: change.sequence } : {}),
      ...(change.deletion ? { before: change.deletion.before, sequence: change.deletion.sequence } : {}),
    },
    createdAt: new Date(),
  };
  let ours = true;
  try {
    await outbox.insertOne(pending);
  } catch (err) {
    // the entry of an earlier attempt at this same change (a request that died, retried with its
    // key): this one goes on as that attempt, and leaves the entry to the relay if it fails
    if (!isDuplicateKeyError(err)) throw err;
    ours = false;
  }
  let result: T;
  try {
    result = await run();
  } catch (err) {
    // refused or failed: nothing changed (or the relay decides from the resource)
    if (ours) await outbox.deleteOne({ _id, state: 'pending' }).catch(() => undefined);
    throw err;
  }
  // an upsert: if this request outlived the relay's lease and the relay dropped the entry, it comes back
  await outbox.updateOne(
    { _id },
    {
      $set: { state: 'ready', type: change.type, payload: payloadOf(change.type, after(result), new Date()) },
      $unset: { resource: '' },
      $setOnInsert: { createdAt: new Date() },
    },
    { upsert: true },
  );
  fanOutSoon(tenantDb, _id);
  return result;
}

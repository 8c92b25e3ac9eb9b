import type { Db } from 'mongodb';
import { TenantDb } from '../db/tenant-db';
import { webhookOutbox, type OutboxEntryDoc } from './collections';
import { fanOut } from './fan-out';
import { RESOURCE_LOADERS } from './resources';

/** A ready entry this old was left by a process that died before fanning it out. */
const READY_GRACE_MS = 2_000;
/** A pending entry this old belongs to a request that died (requests end well within it). */
const PENDING_LEASE_MS = 30_000;
const BATCH = 500;

/**
 * Finishes what killed processes left in the outbox (collections.ts): fans out ready entries, and
 * resolves pending ones against their resource: the change happened if the resource is there and
 * has reached the change's sequence, when the entry names one (or, for a deletion, is gone), and
 * the event then carries the resource as it is now; otherwise the entry is dropped. Runs in the API
 * and the worker every few seconds; running it twice at once is safe, as every step of a fan-out
 * is. It reads the outbox across tenants directly (not through a TenantDb): entries live seconds,
 * so the scan stays small whatever the number of tenants.
 */
export async function relayOutbox(db: Db, now = Date.now()): Promise<number> {
  const raw = db.collection<OutboxEntryDoc>(webhookOutbox.name);
  const left = await raw
    .find({ createdAt: { $lt: new Date(now - READY_GRACE_MS) } }, { sort: { createdAt: 1 }, limit: BATCH })
    .toArray();
  let moved = 0;
  for (const entry of left) {
    const tenantDb = new TenantDb(db, entry.tenantId);
    if (entry.state === 'pending') {
      if (entry.createdAt.getTime() > now - PENDING_LEASE_MS) continue;
      if (!(await resolvePending(tenantDb, entry))) continue;
    }
    await fanOut(tenantDb, entry._id);
    moved++;
  }
  return moved;
}

/** Decides a pending entry from its resource; true when it became ready. */
async function resolvePending(tenantDb: TenantDb, entry: OutboxEntryDoc): Promise<boolean> {
  const outbox = tenantDb.collection(webhookOutbox);
  const ref = entry.resource;
  const load = ref && RESOURCE_LOADERS[ref.kind];
  if (!ref || !load) {
    await outbox.deleteById(entry._id);
    return false;
  }
  const now = await load(tenantDb, ref.id);
  // a resource that is there but short of the change's sequence was not changed: announced, the
  // stand-in would take the id of the change's retry (the same key), whose event is then dropped
  const happened =
    ref.expect === 'present'
      ? now !== null && (ref.sequence === undefined || now.sequence >= ref.sequence)
      : now === null;
  if (!happened) {
    await outbox.deleteById(entry._id);
    return false;
  }
  const data =
    ref.expect === 'present' ? now! : { id: ref.id, sequence: ref.sequence ?? 0, resource: ref.before ?? null };
  await outbox.updateOne(
    { _id: entry._id, state: 'pending' },
    {
      $set: {
        state: 'ready',
        payload: { type: entry.type, timestamp: entry.createdAt.toISOString(), data },
      },
      $unset: { resource: '' },
    },
  );
  return true;
}

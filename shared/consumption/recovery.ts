import type { Db } from 'mongodb';
import { tenants } from '../auth/collections';
import { systemCollection, TenantDb } from '../db/tenant-db';
import { materialConsumptions } from './collections';
import { ConsumptionEngine } from './engine';

/** A consumption left undecided this long has lost its driver (a request takes seconds). */
export const STALE_AFTER_MS = 60_000;

/**
 * Finishes, in every tenant, the consumptions whose driver died half-way (a killed API process
 * between two materials): pending ones are driven to their decision, failing or returning ones
 * finish putting stock back. Every step is keyed, so a consumption a live request is still
 * driving ends the same. Answers how many it finished. Run periodically by the API process.
 */
export async function finishStaleConsumptions(
  db: Db,
  staleAfterMs = STALE_AFTER_MS,
  now = new Date(),
): Promise<number> {
  const cutoff = new Date(now.getTime() - staleAfterMs);
  let finished = 0;
  for await (const tenant of systemCollection(db, tenants).find({}, { projection: { _id: 1 } })) {
    const tenantDb = new TenantDb(db, tenant._id);
    const stale = await tenantDb
      .collection(materialConsumptions)
      .find({ status: { $in: ['pending', 'failing', 'returning'] }, updatedAt: { $lt: cutoff } }, { limit: 100 })
      .toArray();
    const engine = new ConsumptionEngine(tenantDb, 'system:consumption-recovery');
    for (const doc of stale) {
      await engine.finish(doc);
      finished++;
    }
  }
  return finished;
}

import type { Db } from 'mongodb';
import { tenants } from '../auth/collections';
import { systemCollection, TenantDb } from '../db/tenant-db';
import { editPages, editPatches } from './collections';
import { PREVIEW_TTL_MS } from './runs';

/**
 * Deletes, in every tenant, the plans of previews past their lifetime (an apply checks the
 * preview's age on read, so this only reclaims space). Answers how many plans it deleted. Run
 * periodically by the API process.
 */
export async function dropExpiredPreviews(db: Db, now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - PREVIEW_TTL_MS);
  let deleted = 0;
  for await (const tenant of systemCollection(db, tenants).find({}, { projection: { _id: 1 } })) {
    const tenantDb = new TenantDb(db, tenant._id);
    const res = await tenantDb.collection(editPatches).deleteMany({ createdAt: { $lt: cutoff } });
    deleted += res.deletedCount;
    // and the pages they were planned in (an apply's own go when it ends; a killed one's go here)
    await tenantDb.collection(editPages).deleteMany({ createdAt: { $lt: cutoff } });
  }
  return deleted;
}

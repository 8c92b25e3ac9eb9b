import type { Db } from 'mongodb';
import { tenants } from '../auth/collections';
import { systemCollection, TenantDb } from '../db/tenant-db';
import { webhookDeliveries, webhookEvents } from './collections';

/** How long events and their deliveries are kept: what resend and recover can reach back to. */
export const WEBHOOK_RETENTION_DAYS = 30;

/** Drops events and deliveries past the retention; run by the API's periodic sweep. */
export async function dropOldWebhookRecords(db: Db, now = new Date()): Promise<number> {
  const before = new Date(now.getTime() - WEBHOOK_RETENTION_DAYS * 24 * 3600e3);
  let dropped = 0;
  for await (const tenant of systemCollection(db, tenants).find({}, { projection: { _id: 1 } })) {
    const tenantDb = new TenantDb(db, tenant._id);
    dropped += (await tenantDb.collection(webhookDeliveries).deleteMany({ createdAt: { $lt: before } })).deletedCount;
    dropped += (await tenantDb.collection(webhookEvents).deleteMany({ createdAt: { $lt: before } })).deletedCount;
  }
  return dropped;
}

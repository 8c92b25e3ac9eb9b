import { ObjectId } from 'mongodb';
import type { TenantDb } from '../db/tenant-db';
import { customers } from './collections';

/** Whether an order may name a customer: it must be one of the tenant's, and not redacted. */
export type CustomerLinkState = 'ok' | 'missing' | 'redacted';

/** A primary-key read of the customer an order names (another tenant's is missing). */
export async function customerLinkState(tenantDb: TenantDb, customerId: string): Promise<CustomerLinkState> {
  if (!/^[0-9a-f]{24}$/i.test(customerId)) return 'missing';
  const doc = await tenantDb.collection(customers).findOne({ _id: new ObjectId(customerId) });
  if (!doc) return 'missing';
  return doc.redactedAt ? 'redacted' : 'ok';
}

/** The refusal's words for a customer an order cannot name. */
export function linkRefusal(customerId: string, state: Exclude<CustomerLinkState, 'ok'>): string {
  return state === 'missing'
    ? `customerId ${customerId} is not a customer of the tenant`
    : `customerId ${customerId} names a redacted customer; a redacted customer takes no new orders`;
}

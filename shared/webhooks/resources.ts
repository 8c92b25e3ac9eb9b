import { ObjectId } from 'mongodb';
import type { TenantDb } from '../db/tenant-db';
import { customers } from '../customers/collections';
import { adjustmentEvent, adjustments } from '../inventory/adjustments';
import { transferEvent, transfers } from '../inventory/transfers';
import { presentCustomer } from '../customers/present';
import { orderComments, orders } from '../orders/collections';
import { presentOrder } from '../orders/present';
import { products } from '../products/collections';
import { presentProduct } from '../products/present';
import type { EventData } from './events';

/**
 * The resources whose changes the API announces with recordAround, as the relay reads them after
 * a crash: the resource as it is now and its sequence number, or null when it does not exist.
 * A kind's sequence is the same number its producer announces (an order's audit length, a
 * customer's or product's version), so a receiver orders recovered and live events alike.
 */
type Loader = (tenantDb: TenantDb, id: string) => Promise<EventData | null>;

const objectId = (id: string): ObjectId | null => (ObjectId.isValid(id) && id.length === 24 ? new ObjectId(id) : null);

export const RESOURCE_LOADERS: Record<string, Loader> = {
  order: async (tenantDb, id) => {
    const _id = objectId(id);
    const doc = _id ? await tenantDb.collection(orders).findOne({ _id }) : null;
    return doc ? { id, sequence: doc.audit.length, resource: presentOrder(doc) } : null;
  },
  'order-comment': async (tenantDb, id) => {
    const _id = objectId(id);
    const doc = _id ? await tenantDb.collection(orderComments).findOne({ _id }) : null;
    return doc
      ? {
          id,
          sequence: 1,
          resource: { id, orderId: doc.orderId, comment: doc.comment, actor: doc.actor, timestamp: doc.timestamp },
        }
      : null;
  },
  customer: async (tenantDb, id) => {
    const _id = objectId(id);
    const doc = _id ? await tenantDb.collection(customers).findOne({ _id }) : null;
    return doc ? { id, sequence: doc.version, resource: presentCustomer(doc) } : null;
  },
  product: async (tenantDb, id) => {
    const _id = objectId(id);
    const doc = _id ? await tenantDb.collection(products).findOne({ _id }) : null;
    return doc ? { id, sequence: doc.version, resource: presentProduct(doc) } : null;
  },
  transfer: async (tenantDb, id) => {
    const doc = await tenantDb.collection(transfers).findOne({ _id: id });
    return doc ? transferEvent(doc) : null;
  },
  adjustment: async (tenantDb, id) => {
    const doc = await tenantDb.collection(adjustments).findOne({ _id: id });
    return doc ? adjustmentEvent(doc) : null;
  },
};

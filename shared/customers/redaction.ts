import { ObjectId } from 'mongodb';
import { AppError } from '../errors/catalog';
import type { TenantDb } from '../db/tenant-db';
import { orders, type OrderDoc, type OrderEvent } from '../orders/collections';
import { orderEvent, orderEventKey } from '../orders/service';
import { webhookEvents, webhookOutbox } from '../webhooks/collections';
import { recordAround } from '../webhooks/events';

/** What a redacted customer, and the customer of each of its orders, is called. */
export const REDACTED_NAME = 'Redacted customer';
/** What replaces every other personal value of an order (customerInfo members, address parts). */
export const REDACTED_VALUE = '[redacted]';

/** The customer members a redaction removes (name is replaced by REDACTED_NAME, addresses emptied). */
export const REDACTED_MEMBERS = ['email', 'emailKey', 'phone', 'taxId', 'notes'] as const;

type OrderCustomerFields = Pick<OrderDoc, 'customerInfo' | 'shippingAddress'>;

/**
 * An order's customer fields with the personal data replaced: customerInfo keeps its members,
 * each a placeholder (the name REDACTED_NAME); the shipping address keeps its country (tax
 * reporting needs it), every other part a placeholder. Totals, items and history are not here:
 * they stay as they are.
 */
export function redactedOrderFields(order: OrderCustomerFields): OrderCustomerFields {
  const info = order.customerInfo && typeof order.customerInfo === 'object' ? order.customerInfo : { name: '' };
  const customerInfo = {
    ...Object.fromEntries(Object.keys(info).map((k) => [k, REDACTED_VALUE])),
    name: REDACTED_NAME,
  };
  const out: OrderCustomerFields = { customerInfo };
  if (order.shippingAddress && typeof order.shippingAddress === 'object') {
    out.shippingAddress = Object.fromEntries(
      Object.entries(order.shippingAddress).map(([k, v]) => [k, k === 'country' ? v : REDACTED_VALUE]),
    );
  }
  return out;
}

/** Whether an order's customer fields are already redacted (a repeated redaction leaves it alone). */
export function isRedactedOrder(order: OrderCustomerFields): boolean {
  return JSON.stringify(redactedOrderFields(order)) === JSON.stringify(pick(order));
}

function pick(order: OrderCustomerFields): OrderCustomerFields {
  return {
    customerInfo: order.customerInfo,
    ...(order.shippingAddress && typeof order.shippingAddress === 'object'
      ? { shippingAddress: order.shippingAddress }
      : {}),
  };
}

/**
 * Redacts the customer fields of every order of `customerId` not yet redacted. Each order is one
 * atomic update that replaces customerInfo and shippingAddress whole (so a member added since it
 * was read goes too) and records the change in the order's audit trail. Safe to run again: it
 * finishes what an interrupted run left. Answers how many orders it changed.
 */
export async function redactOrdersOf(tenantDb: TenantDb, customerId: string, actor: string): Promise<number> {
  const col = tenantDb.collection(orders);
  const cursor = col.find(
    { customerId },
    { projection: { _id: 1, customerInfo: 1, shippingAddress: 1, redaction: 1 } },
  );
  let changed = 0;
  for await (const order of cursor) {
    if (await redactOrder(tenantDb, order as OrderDoc, customerId, actor)) changed++;
  }
  return changed;
}

/** The order was gone, or its redaction mark changed, when its redaction was written: nothing changed. */
class OrderChanged extends Error {}

const REDACT_ATTEMPTS = 5;

/**
 * Redacts one order's customer fields (read as `order`), announced as order.updated; false when
 * this customer's redaction already did. Fields that only look redacted (an order redacted for
 * an earlier customer, then relinked to this one) are written again: the write marks the order,
 * and a customer-field edit checked before it is refused by that mark (Orders.write).
 */
export async function redactOrder(
  tenantDb: TenantDb,
  read: Pick<OrderDoc, '_id' | 'customerInfo' | 'shippingAddress' | 'redaction'>,
  customerId: string,
  actor: string,
): Promise<boolean> {
  let order: typeof read | null = read;
  for (let attempt = 0; attempt < REDACT_ATTEMPTS && order; attempt++) {
    if (order.redaction?.customerId === customerId && isRedactedOrder(order)) return false;
    const now = new Date();
    const event: OrderEvent = {
      id: new ObjectId().toHexString(),
      type: 'customer_updated',
      actor,
      timestamp: now,
      details: { redacted: true, customerId },
    };
    const id = order._id.toHexString();
    // written over the redaction mark read: two redactions at once (a repeat of one) write once
    const unchanged = order.redaction ? { 'redaction.at': order.redaction.at } : { redaction: { $exists: false } };
    const fields = redactedOrderFields(order);
    try {
      await recordAround(
        tenantDb,
        { type: 'order.updated', key: orderEventKey(id, event.id), kind: 'order', id },
        async () => {
          const doc = await tenantDb.collection(orders).findOneAndUpdate(
            { _id: read._id, ...unchanged } as never,
            {
              $set: { ...fields, redaction: { customerId, at: now }, updatedAt: now },
              $push: { audit: event },
            } as never,
            { returnDocument: 'after' },
          );
          if (!doc) throw new OrderChanged();
          return doc;
        },
        (doc) => orderEvent(doc, event.id),
      );
      return true;
    } catch (err) {
      if (!(err instanceof OrderChanged)) throw err;
    }
    // gone, or redacted meanwhile: decide again on what it is now
    order = await tenantDb
      .collection(orders)
      .findOne({ _id: read._id }, { projection: { customerInfo: 1, shippingAddress: 1, redaction: 1 } });
  }
  if (order) throw new AppError(409, 'conflict', `Order ${read._id.toHexString()} keeps changing; redact again`);
  return false;
}

/**
 * The events kept for resend and recover (30 days, docs/webhooks.md) carry the customer's data
 * as it was when each was recorded: the customer's own events and its orders'. A redaction
 * scrubs them as it did the records (an event not yet fanned out too, in the outbox), so no
 * resend, recover or late delivery hands the data out again. Each event keeps its id, type and
 * sequence; only the personal values in its resource change. Safe to run again.
 */
export async function redactKeptEvents(tenantDb: TenantDb, customerId: string): Promise<void> {
  const orderIds = (
    await tenantDb
      .collection(orders)
      .find({ customerId } as never, { projection: { _id: 1 } })
      .toArray()
  ).map((o) => o._id.toHexString());
  const scrub = (type: string, resource: unknown): unknown => {
    if (!resource || typeof resource !== 'object') return resource;
    const r = resource as Record<string, unknown>;
    if (type.startsWith('customer.'))
      return { ...r, name: REDACTED_NAME, email: null, phone: null, taxId: null, notes: null, addresses: [] };
    if (type.startsWith('order.') && r.customerInfo) return { ...r, ...redactedOrderFields(r as OrderCustomerFields) };
    return resource;
  };
  const ids = [customerId, ...orderIds];
  // the outbox first: an entry fanned out after this keeps the scrubbed payload
  for (const col of [tenantDb.collection(webhookOutbox), tenantDb.collection(webhookEvents)]) {
    const found = col.find({ 'payload.data.id': { $in: ids } } as never, { projection: { type: 1, payload: 1 } });
    for await (const e of found) {
      const resource = e.payload?.data.resource;
      const scrubbed = scrub(e.type, resource);
      if (JSON.stringify(scrubbed) !== JSON.stringify(resource))
        await col.updateOne({ _id: e._id } as never, { $set: { 'payload.data.resource': scrubbed } } as never);
    }
  }
}

import { ObjectId } from 'mongodb';
import type { CustomerDoc } from './collections';
import type { CustomerExport } from './service';

/** A customer as the API answers it: every member always there (null or empty when not set). */
export function presentCustomer(c: CustomerDoc) {
  return {
    id: c._id.toHexString(),
    name: c.name,
    email: c.email ?? null,
    phone: c.phone ?? null,
    addresses: Array.isArray(c.addresses) ? c.addresses : [],
    taxId: c.taxId ?? null,
    tags: Array.isArray(c.tags) ? c.tags : [],
    notes: c.notes ?? null,
    redactedAt: c.redactedAt ? c.redactedAt.toISOString() : null,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

/** A stored value as JSON: ObjectIds as their hex, dates as ISO text, everything else as it is. */
export function storedJson(value: unknown): unknown {
  if (value instanceof ObjectId) return value.toHexString();
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(storedJson);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, storedJson(v)]));
  return value;
}

/**
 * The data export: everything stored about the customer (the document, internal members such as
 * the e-mail key and version included) and each order referencing it in full (audit trail, stock
 * effects and comments included). Only the tenant id, which is ours, is left out.
 */
export function presentExport(e: CustomerExport) {
  const { _id, tenantId: _t, ...customer } = e.customer;
  return {
    customer: { id: _id.toHexString(), ...(storedJson(customer) as Record<string, unknown>) },
    orders: e.orders.map(({ tenantId: _o, comments, ...order }) => ({
      ...(storedJson(order) as Record<string, unknown>),
      comments: comments.map(({ tenantId: _c, ...c }) => storedJson(c)),
    })),
  };
}

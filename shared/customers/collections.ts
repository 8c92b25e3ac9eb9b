import type { ObjectId } from 'mongodb';
import { defineCollection } from '../db/collection';

/** A postal address of a customer: the parts an order's shippingAddress has, so one copies into the other. */
export interface CustomerAddress {
  /** The customer's own name for it ("home", "office"). */
  label?: string;
  street: string;
  city: string;
  state?: string;
  zipCode: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
}

export interface CustomerDoc {
  _id: ObjectId;
  tenantId: string;
  name: string;
  /** As the client sent it; uniqueness is decided on `emailKey` through the claim in `customer_emails`. */
  email?: string;
  /** The e-mail lower-cased: the key of its claim, and what search and export see. */
  emailKey?: string;
  phone?: string;
  addresses: CustomerAddress[];
  taxId?: string;
  tags: string[];
  notes?: string;
  /** Set once by POST /customers/{id}/redact: the personal data is gone and the customer can no longer change. */
  redactedAt?: Date;
  /** Raised by every write: updates are guarded by the version they read, so none is silently lost. */
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export const customers = defineCollection<CustomerDoc>({
  name: 'customers',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, createdAt: -1 } }, { key: { tenantId: 1, tags: 1 } }],
});

/**
 * One document per e-mail a customer of the tenant holds. Its `_id` is `<tenantId>:<e-mail lower
 * cased>`, so the primary key decides between concurrent writers without a transaction, and
 * without a unique index over an optional field (FerretDB has no partial or sparse indexes).
 * A customer's e-mail is claimed here before the customer is written, and released when the
 * e-mail changes, is cleared or redacted, or the customer is deleted.
 */
export interface EmailClaim {
  /** `<tenantId>:<emailKey>` (see emailClaimId). */
  _id: string;
  tenantId: string;
  emailKey: string;
  /** The holder's id (24 hex). */
  customerId: string;
  createdAt: Date;
}

export const customerEmails = defineCollection<EmailClaim>({
  name: 'customer_emails',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, customerId: 1 } }],
});

/** The key an e-mail is unique by: the whole address, lower-cased. */
export function emailKeyOf(email: string): string {
  return email.trim().toLowerCase();
}

export function emailClaimId(tenantId: string, emailKey: string): string {
  return `${tenantId}:${emailKey}`;
}

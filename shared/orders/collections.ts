import type { ObjectId } from 'mongodb';
import { defineCollection } from '../db/collection';
import type { OrderState } from './lifecycle';

export interface OrderItem {
  sku: string;
  name: string;
  quantity: number;
  price: number;
  taxable: boolean;
  lineTotal: number;
}

/** An audit event, written in the same atomic update as the change it records, so it exists exactly once. */
export interface OrderEvent {
  id: string;
  type: 'created' | 'updated' | 'customer_updated' | 'status_changed';
  actor: string;
  timestamp: Date;
  details: Record<string, unknown>;
}

export interface OrderDoc {
  _id: ObjectId;
  tenantId: string;
  externalId: string;
  orderStatus: OrderState;
  customerInfo: { name: string; [more: string]: unknown };
  shippingAddress?: { street?: string; city?: string; state?: string; zipCode?: string; country?: string };
  notes?: string;
  items: OrderItem[];
  currency: string;
  subtotal: number;
  tax: number;
  taxRate: number;
  total: number;
  audit: OrderEvent[];
  createdAt: Date;
  updatedAt: Date;
}

export const orders = defineCollection<OrderDoc>({
  name: 'orders',
  scope: 'tenant',
  indexes: [
    { key: { tenantId: 1, externalId: 1 }, options: { unique: true } },
    { key: { tenantId: 1, createdAt: -1 } },
    { key: { tenantId: 1, orderStatus: 1, createdAt: -1 } },
  ],
});

/** Comments: append-only, never edited or deleted. A retried comment with the same Idempotency-Key is one comment. */
export interface OrderComment {
  _id: ObjectId;
  tenantId: string;
  orderId: string;
  comment: string;
  actor: string;
  idempotencyKey: string;
  timestamp: Date;
}

export const orderComments = defineCollection<OrderComment>({
  name: 'order_comments',
  scope: 'tenant',
  indexes: [
    { key: { tenantId: 1, orderId: 1, timestamp: 1 } },
    { key: { tenantId: 1, orderId: 1, idempotencyKey: 1 }, options: { unique: true } },
  ],
});

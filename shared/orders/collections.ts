import type { ObjectId } from 'mongodb';
import { defineCollection } from '../db/collection';
import type { OrderState } from './lifecycle';

/** A modifier chosen with a line, as it was validated and priced when the order was created. */
export interface OrderItemModifier {
  groupId: string;
  groupName: string;
  modifierId: string;
  modifierName: string;
  quantity: number;
  priceAdjustment: number;
  /** Materials it consumes per unit of the line (× quantity already applied by the selection). */
  inventoryConsumption: { sku: string; quantity: number; unit: string }[];
}

export interface OrderItem {
  sku: string;
  name: string;
  quantity: number;
  price: number;
  taxable: boolean;
  lineTotal: number;
  selectedModifiers?: OrderItemModifier[];
}

/** A stock sale of one order line (a product or variant SKU) at the order's location. */
export interface SaleLine {
  sku: string;
  quantity: number;
  /** The product sells when out of stock: its balance may go below zero. */
  allowNegative: boolean;
  /** The ledger key of the sale; its return is keyed `return:<key>`. */
  key: string;
}

/** What accepting the order did to stock, so that cancelling it can put back exactly that. */
export interface OrderStockEffects {
  /** The accept workflow run that applied them (keys derive from it). */
  runId: string;
  locationId: string;
  sales: SaleLine[];
  /** The materials consumption (BOMs on sale, selected modifiers), if any. */
  consumptionId: string | null;
}

/** An audit event, written in the same atomic update as the change it records, so it exists exactly once. */
export interface OrderEvent {
  id: string;
  type: 'created' | 'updated' | 'customer_updated' | 'status_changed' | 'stock_changed';
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
  /** Where the order's stock is taken (the tenant's default location when absent). */
  locationId?: string;
  /** The tenant's customer the order is for (24 hex), checked to exist when it is set; GET /customers/{id}/orders lists by it. */
  customerId?: string;
  items: OrderItem[];
  currency: string;
  subtotal: number;
  tax: number;
  taxRate: number;
  total: number;
  audit: OrderEvent[];
  /** Set with the move to accepted; absent on orders accepted before orders moved stock. */
  stock?: OrderStockEffects;
  /**
   * Set by the move to cancelled of an order that took stock, cleared once it is returned: until
   * then the order holds its stock's location against a delete (the return would land nowhere).
   */
  stockReturnPending?: boolean;
  /**
   * The last redaction of its customer fields: whose, and when (each redaction sets a new `at`,
   * which a write of customer fields checked before it is guarded by). Not shown.
   */
  redaction?: { customerId: string; at: Date };
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
    { key: { tenantId: 1, customerId: 1, createdAt: -1 } },
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

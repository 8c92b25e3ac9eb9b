import { defineCollection } from '../db/collection';

/**
 * The balance of one SKU at one location. It changes only through the ledger (ledger.ts): one
 * atomic, guarded update per movement, which also notes the movement's id in `recent`, so the
 * same movement can never be applied twice and stock never goes below zero.
 */
export interface StockLevel {
  _id: string; // `<tenantId>:<locationId>:<SKU>`
  tenantId: string;
  sku: string;
  locationId: string;
  onHand: number;
  /** How many movements it has taken (absent on balances older than it): the sequence of its stock.changed events. */
  seq?: number;
  /**
   * The latest movements applied here (at least the last 50), each as `~<its key>` (whole movement
   * ids on balances written before): a retried movement finds itself.
   */
  recent: string[];
  updatedAt: Date;
}

/** One entry of the append-only stock ledger. */
export interface StockMovement {
  _id: string; // `<tenantId>:<idempotencyKey>`
  tenantId: string;
  idempotencyKey: string;
  sku: string;
  locationId: string;
  delta: number;
  reason: string;
  reference: { type: string; id: string } | null;
  actor: string;
  /** pending until its balance update held (or was refused); then applied or rejected, never changed again. */
  status: 'pending' | 'applied' | 'rejected';
  /**
   * A set's movement (a count, a manual edit): the balance its delta was computed from. It applies
   * only on that balance; planned again on a newer one while pending (Ledger.set).
   */
  expect?: number;
  balanceAfter: number | null;
  createdAt: Date;
  /** The key of the movement that took this one back (it landed at a location being deleted). */
  undoneBy?: string;
}

export const stockLevels = defineCollection<StockLevel>({
  name: 'stock_levels',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, sku: 1 } }, { key: { tenantId: 1, locationId: 1 } }],
});

export const stockMovements = defineCollection<StockMovement>({
  name: 'stock_movements',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, sku: 1, createdAt: -1 } }, { key: { tenantId: 1, createdAt: -1 } }],
});

export function levelId(tenantId: string, locationId: string, sku: string): string {
  return `${tenantId}:${locationId}:${sku}`;
}

import { defineCollection } from '../db/collection';
import type { EventData } from '../webhooks/events';
import type { TransferAction, TransferLine, TransferStatus } from './transfer-rules';

/**
 * The record of a stock transfer between two locations. The workflow `<tenantId>/<transferId>`
 * owns its state (transfer-rules.ts); this record mirrors it for listing and keeps the history,
 * refused attempts included.
 */
export interface TransferEvent {
  action: 'create' | TransferAction;
  outcome: 'applied' | 'refused';
  /** The state the transfer was in when the action came. */
  state: TransferStatus;
  actor: string;
  at: Date;
  reason?: string;
}

export interface TransferDoc {
  _id: string; // trf_…
  tenantId: string;
  originId: string;
  destinationId: string;
  productsList: TransferLine[];
  notes: string | null;
  status: TransferStatus;
  workflowId: string;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
  approvedAt: Date | null;
  receivedAt: Date | null;
  cancelledAt: Date | null;
  cancelReason: string | null;
  /**
   * The Idempotency-Key each applied action came with: a retry with it answers the transfer (the
   * action's Update id names the history as the first attempt found it, so it cannot).
   */
  receiveKey: string | null;
  approveKey?: string | null;
  cancelKey?: string | null;
  history: TransferEvent[];
}

export const transfers = defineCollection<TransferDoc>({
  name: 'inventory_transfers',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, createdAt: -1 } }, { key: { tenantId: 1, status: 1, createdAt: -1 } }],
});

export function presentTransfer(t: TransferDoc) {
  return {
    id: t._id,
    originId: t.originId,
    destinationId: t.destinationId,
    productsList: t.productsList,
    notes: t.notes,
    status: t.status,
    workflowId: t.workflowId,
    createdBy: t.createdBy,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    approvedAt: t.approvedAt,
    receivedAt: t.receivedAt,
    cancelledAt: t.cancelledAt,
    cancelReason: t.cancelReason,
    history: t.history,
  };
}

/**
 * A transfer's webhook event: the transfer as GET /inventory/transfers/{id} presents it, and as
 * sequence the length of its history (every change, refused attempts too, adds an entry).
 */
export function transferEvent(t: TransferDoc): EventData {
  return { id: t._id, sequence: t.history.length, resource: presentTransfer(t) };
}

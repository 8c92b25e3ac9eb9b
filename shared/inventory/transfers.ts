import { defineCollection } from '../db/collection';

/**
 * A stock transfer between two locations. The workflow `<tenantId>/<transferId>` owns its state
 * (pending → approved → received; cancelled from pending or approved); this record mirrors it
 * for listing and keeps the history, refused attempts included.
 */
export type TransferStatus = 'pending' | 'approved' | 'received' | 'cancelled';
export type TransferAction = 'approve' | 'receive' | 'cancel';

/** Which state each action may start from: the Update validators and the API use this one table. */
export const TRANSFER_MOVES: Record<TransferAction, { from: TransferStatus[]; to: TransferStatus }> = {
  approve: { from: ['pending'], to: 'approved' },
  receive: { from: ['approved'], to: 'received' },
  cancel: { from: ['pending', 'approved'], to: 'cancelled' },
};

export interface TransferLine {
  sku: string;
  quantity: number;
}

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
  /** The Idempotency-Key the receive came with: a retry with it answers the transfer as received. */
  receiveKey: string | null;
  history: TransferEvent[];
}

export const transfers = defineCollection<TransferDoc>({
  name: 'inventory_transfers',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, createdAt: -1 } }, { key: { tenantId: 1, status: 1, createdAt: -1 } }],
});

/** The 409 code for an action refused in a state: it names the state. */
export function transferStateCode(state: TransferStatus | 'receiving'): string {
  return `conflict/transfer-${state}`;
}

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

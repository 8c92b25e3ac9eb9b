/**
 * A transfer's state machine, pure (the workflow's Update validators run it): pending → approved
 * → received; cancelled from pending or approved.
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

/** The 409 code for an action refused in a state: it names the state. */
export function transferStateCode(state: TransferStatus | 'receiving'): string {
  return `conflict/transfer-${state}`;
}

/** The most units one line may move: a typo's extra zeros are refused, not moved. */
export const MAX_TRANSFER_QUANTITY = 1_000_000;

/** The most lines one transfer may have: its record is one document and its receive one activity, both bounded. */
export const MAX_TRANSFER_LINES = 500;

import { defineQuery, defineUpdate } from '@temporalio/workflow';
import { defineWorkflow } from '../temporal/define-workflow';
import type { TransferLine, TransferStatus } from './transfer-rules';

export interface TransferInput {
  tenantId: string;
  transferId: string;
  originId: string;
  destinationId: string;
  productsList: TransferLine[];
}

export interface TransferActionArgs {
  actor: string;
  reason?: string;
  /** The request's Idempotency-Key, kept on the record for a retried receive. */
  idempotencyKey?: string;
}

/** 'receiving' is the moment stock moves: every other action waits its outcome by being refused. */
export type TransferLiveState = TransferStatus | 'receiving';

/** One transfer's life, `<tenantId>/<transferId>`; it ends once the transfer is received or cancelled. */
export const transfer = defineWorkflow<TransferInput, TransferStatus>('transferWorkflow');

// Updates, not signals: the caller needs the refusal (a validator's 409) or the outcome.
export const approveTransfer = defineUpdate<{ status: TransferStatus }, [TransferActionArgs]>('approve');
export const receiveTransfer = defineUpdate<{ status: TransferStatus }, [TransferActionArgs]>('receive');
export const cancelTransfer = defineUpdate<{ status: TransferStatus }, [TransferActionArgs]>('cancel');
export const transferState = defineQuery<TransferLiveState>('state');

/** The Update of each action, for callers that hold the action as data. */
export const transferUpdates = { approve: approveTransfer, receive: receiveTransfer, cancel: cancelTransfer } as const;

import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  patched,
  proxyActivities,
  setHandler,
  type RetryPolicy,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import {
  approveTransfer,
  cancelTransfer,
  receiveTransfer,
  transferState,
  type TransferActionArgs,
  type TransferInput,
  type TransferLiveState,
} from '../../shared/inventory/messages';
import {
  TRANSFER_MOVES,
  transferStateCode,
  type TransferAction,
  type TransferStatus,
} from '../../shared/inventory/transfer-rules';

const RECORDS_IN_ORDER = 'transfer-records-in-order';

const retry: RetryPolicy = { initialInterval: '1 second', maximumInterval: '20 seconds' };
// a refusal (insufficient stock) comes back as a non-retryable failure (activities/index.ts)
const acts = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry });
// a transfer may have hundreds of lines: the move heartbeats each one, so a dead worker's move is
// handed to another within seconds, however long the whole move may take
const move = proxyActivities<Activities>({ startToCloseTimeout: '10 minutes', heartbeatTimeout: '10 seconds', retry });

/**
 * One transfer's life. approve / receive / cancel are Updates: the validator refuses a move the
 * state does not allow (the caller gets it at once and nothing is written to history), and the
 * handler checks again before it changes anything, so of concurrent receives only one moves stock.
 * The workflow ends once the transfer is received or cancelled.
 */
export async function transferWorkflow(input: TransferInput): Promise<TransferStatus> {
  let state: TransferLiveState = 'pending';
  let receiveAttempt = 0;
  const ref = { tenantId: input.tenantId, transferId: input.transferId };
  // The record is written in the order the state moved: an approve and a cancel taken at once
  // each wrote it from its own activity, and the approve's landing last left a cancelled
  // transfer recorded approved. Executions started before this keep writing at once (replay).
  const inOrder = patched(RECORDS_IN_ORDER);
  let recorded: Promise<unknown> = Promise.resolve();
  const record = (args: Parameters<Activities['recordTransfer']>[0]) => {
    if (!inOrder) return acts.recordTransfer(args);
    const write = recorded.then(() => acts.recordTransfer(args));
    recorded = write.catch(() => undefined);
    return write;
  };

  const allowed = (action: TransferAction) => {
    if (!(TRANSFER_MOVES[action].from as TransferLiveState[]).includes(state)) {
      throw ApplicationFailure.nonRetryable(
        `A ${state} transfer cannot be ${action === 'approve' ? 'approved' : action === 'receive' ? 'received' : 'cancelled'}`,
        transferStateCode(state),
        { state },
      );
    }
  };
  const event = (action: TransferAction, from: TransferLiveState, args: TransferActionArgs) => ({
    action,
    outcome: 'applied' as const,
    state: from as TransferStatus,
    actor: args.actor,
    at: new Date(),
    ...(args.reason ? { reason: args.reason } : {}),
  });

  setHandler(transferState, () => state);
  setHandler(
    approveTransfer,
    async (args) => {
      allowed('approve');
      state = 'approved';
      const e = event('approve', 'pending', args);
      await record({
        ...ref,
        set: { status: 'approved', approvedAt: e.at, approveKey: args.idempotencyKey ?? null },
        event: e,
      });
      return { status: 'approved' as const };
    },
    { validator: (_args: TransferActionArgs) => allowed('approve') },
  );
  setHandler(
    receiveTransfer,
    async (args) => {
      allowed('receive');
      state = 'receiving';
      receiveAttempt++;
      try {
        await move.moveTransferStock({
          ...ref,
          attempt: receiveAttempt,
          originId: input.originId,
          destinationId: input.destinationId,
          productsList: input.productsList,
          actor: args.actor,
        });
      } catch (err) {
        state = 'approved';
        throw err;
      }
      state = 'received';
      const e = event('receive', 'approved', args);
      await record({
        ...ref,
        set: { status: 'received', receivedAt: e.at, receiveKey: args.idempotencyKey ?? null },
        event: e,
      });
      return { status: 'received' as const };
    },
    { validator: (_args: TransferActionArgs) => allowed('receive') },
  );
  setHandler(
    cancelTransfer,
    async (args) => {
      allowed('cancel');
      const from = state;
      state = 'cancelled';
      const e = event('cancel', from, args);
      await record({
        ...ref,
        set: {
          status: 'cancelled',
          cancelledAt: e.at,
          cancelReason: args.reason ?? null,
          cancelKey: args.idempotencyKey ?? null,
        },
        event: e,
      });
      return { status: 'cancelled' as const };
    },
    { validator: (_args: TransferActionArgs) => allowed('cancel') },
  );

  await condition(() => state === 'received' || state === 'cancelled');
  await condition(allHandlersFinished);
  return state as TransferStatus;
}

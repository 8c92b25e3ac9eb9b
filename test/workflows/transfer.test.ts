import { WorkflowUpdateStage, type WorkflowHandle } from '@temporalio/client';
import {
  approveTransfer,
  cancelTransfer,
  receiveTransfer,
  transfer,
  transferState,
} from '../../shared/inventory/messages';
import { startWorkflow } from '../../shared/temporal/workflows';
import { openWorkflowEnv, testContext, type WorkflowEnv } from './support/env';
import { refusalOf, scenario, TENANT, transferInput } from './support/scenarios';

/**
 * A transfer's life as Updates: the validators refuse a move the state does not allow (the
 * caller gets `conflict/transfer-<state>` and the history keeps nothing of it), the handlers
 * record each accepted move, and the state query follows.
 */
let wf: WorkflowEnv;
beforeAll(async () => {
  wf = await openWorkflowEnv({ name: 'transfer' });
});
afterAll(() => wf?.close());

const transferIdOf = (workflowId: string) => workflowId.slice(`${TENANT}/`.length);
const args = (extra: object = {}) => ({ args: [{ actor: 'key_test', ...extra }] as [{ actor: string }] });

const recorded = (id: string) =>
  wf.world
    .callsOf(id)
    .filter((c) => c.activity === 'recordTransfer')
    .map((c) => (c.input as { set: { status: string }; event: { action: string } }).event.action);

/** The ids of the updates the history holds, accepted or completed. */
async function updatesInHistory(handle: WorkflowHandle): Promise<string[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events.flatMap((e) =>
    e.workflowExecutionUpdateAcceptedEventAttributes
      ? [`accepted ${e.workflowExecutionUpdateAcceptedEventAttributes.protocolInstanceId}`]
      : e.workflowExecutionUpdateCompletedEventAttributes
        ? [`completed ${e.workflowExecutionUpdateCompletedEventAttributes.meta?.updateId}`]
        : [],
  );
}

async function started(name: string) {
  const id = testContext(wf).id(name);
  const handle = await startWorkflow(wf.client, transfer, transferInput(id), {
    taskQueue: wf.taskQueue,
    workflowId: `${TENANT}/${id}`,
  });
  return { id, handle };
}

test('approve then receive: stock moves once, each move is recorded, the workflow ends received', async () => {
  const run = await scenario(transfer, 'received').run(testContext(wf));
  const id = transferIdOf(run.workflowId);
  expect(run.result).toBe('received');
  // receive before approve, and approve twice, were refused by the validators
  expect(run.refusals).toEqual(['conflict/transfer-pending', 'conflict/transfer-approved']);
  expect(recorded(id)).toEqual(['approve', 'receive']);
  expect(wf.world.stepsOf(id)).toEqual(['recordTransfer', 'moveTransferStock', 'recordTransfer']);
  expect(wf.world.callsOf(id)[1].input).toMatchObject({
    attempt: 1,
    originId: 'loc-origin',
    destinationId: 'loc-destination',
  });
  const receive = wf.world.callsOf(id)[2].input as { set: Record<string, unknown> };
  expect(receive.set).toMatchObject({ status: 'received', receiveKey: 'idem-1' });
  // the refused updates (receive-1, approve-2) left nothing in the history
  expect(await updatesInHistory(run.handle)).toEqual([
    'accepted approve-1',
    'completed approve-1',
    'accepted receive-2',
    'completed receive-2',
  ]);
});

test('refused updates: approve twice, receive before approve, nothing recorded for them', async () => {
  const { id, handle } = await started('trf-refusals');
  expect(await refusalOf(handle.executeUpdate(receiveTransfer, args()))).toBe('conflict/transfer-pending');
  expect(await handle.executeUpdate(approveTransfer, args())).toEqual({ status: 'approved' });
  expect(await handle.query(transferState)).toBe('approved');
  expect(await refusalOf(handle.executeUpdate(approveTransfer, args()))).toBe('conflict/transfer-approved');
  expect(recorded(id)).toEqual(['approve']);
  expect((await updatesInHistory(handle)).filter((u) => u.startsWith('accepted'))).toHaveLength(1);
  await handle.executeUpdate(cancelTransfer, args());
  expect(await handle.result()).toBe('cancelled');
});

test('while stock moves the state is receiving, and cancel or approve are refused as such', async () => {
  const { id, handle } = await started('trf-receiving');
  const move = wf.world.gate(id, 'moveTransferStock');
  await handle.executeUpdate(approveTransfer, args());
  const receiving = await handle.startUpdate(receiveTransfer, {
    ...args(),
    waitForStage: WorkflowUpdateStage.ACCEPTED,
  });
  await move.reached;
  expect(await handle.query(transferState)).toBe('receiving');
  expect(await refusalOf(handle.executeUpdate(cancelTransfer, args()))).toBe('conflict/transfer-receiving');
  expect(await refusalOf(handle.executeUpdate(approveTransfer, args()))).toBe('conflict/transfer-receiving');
  move.release();
  expect(await receiving.result()).toEqual({ status: 'received' });
  expect(await handle.result()).toBe('received');
  expect(recorded(id)).toEqual(['approve', 'receive']);
});

test('cancel after receive: the workflow has ended, and the update cannot reach it', async () => {
  const { id, handle } = await started('trf-cancel-after-receive');
  await handle.executeUpdate(approveTransfer, args());
  await handle.executeUpdate(receiveTransfer, args());
  expect(await handle.result()).toBe('received');
  // the API answers such a request from the transfer record (conflict/transfer-received)
  await expect(handle.executeUpdate(cancelTransfer, args())).rejects.toThrow('workflow execution already completed');
  expect(recorded(id)).toEqual(['approve', 'receive']);
});

test('a receive the origin cannot cover fails, the transfer stays approved, and a later receive moves the stock', async () => {
  const run = await scenario(transfer, 'receive-short-then-received').run(testContext(wf));
  const id = transferIdOf(run.workflowId);
  expect(run.refusals).toEqual(['insufficient-stock']);
  expect(run.result).toBe('received');
  const attempts = wf.world
    .callsOf(id)
    .filter((c) => c.activity === 'moveTransferStock')
    .map((c) => (c.input as { attempt: number }).attempt);
  expect(attempts).toEqual([1, 2]);
  expect(recorded(id)).toEqual(['approve', 'receive']);
});

test('the state query follows the transfer, and a short receive leaves it approved', async () => {
  const { id, handle } = await started('trf-state');
  wf.world.script(id, { insufficientStockOnAttempt: [1] });
  expect(await handle.query(transferState)).toBe('pending');
  await handle.executeUpdate(approveTransfer, args());
  await expect(handle.executeUpdate(receiveTransfer, args())).rejects.toThrow();
  expect(await handle.query(transferState)).toBe('approved');
  await handle.executeUpdate(cancelTransfer, args({ reason: 'no stock' }));
  expect(await handle.result()).toBe('cancelled');
  const cancel = wf.world.callsOf(id).at(-1)?.input as { set: Record<string, unknown> };
  expect(cancel.set).toMatchObject({ status: 'cancelled', cancelReason: 'no stock' });
});

test.each([
  ['cancelled-pending', ['cancel']],
  ['cancelled-approved', ['approve', 'cancel']],
])('%s: the workflow ends cancelled', async (name, moves) => {
  const run = await scenario(transfer, name).run(testContext(wf));
  expect(run.result).toBe('cancelled');
  expect(recorded(transferIdOf(run.workflowId))).toEqual(moves);
});

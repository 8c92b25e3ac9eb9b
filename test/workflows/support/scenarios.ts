import { WorkflowUpdateFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { WorkflowDef } from '../../../shared/temporal/define-workflow';
import { startWorkflow } from '../../../shared/temporal/workflows';
import { ping } from '../../../shared/system/messages';
import { rollback } from '../../../shared/bulk/messages';
import { csvExport, csvImport, type CsvImportInput } from '../../../shared/csv/messages';
import { cancelPublication, publication, type PublicationInput } from '../../../shared/publication/messages';
import {
  approveTransfer,
  cancelTransfer,
  receiveTransfer,
  transfer,
  type TransferActionArgs,
  type TransferInput,
} from '../../../shared/inventory/messages';
import { orderStock, type OrderStockInput } from '../../../shared/orders/messages';
import { bulkEdit, cancelEdit, type EditWorkflowInput } from '../../../shared/edits/messages';
import { deliverSignal, endpointDeliveries, type EndpointDeliveryInput } from '../../../shared/webhooks/messages';
import type { FakeWorld, ImportFile } from './fake-activities';

/**
 * The runs whose histories are recorded (scripts/record-histories.ts) and replayed
 * (test/workflows/replay.test.ts), one file each: `<workflowType>-<name>.json`. Each drives one
 * workflow to its end through a path worth guarding (signals, updates and their refusals,
 * cancellation, a failed step) over the fake activities, with fixed inputs, so that recording
 * again gives the same commands. The workflow tests run them too and check their outcomes.
 */
export interface ScenarioContext {
  client: Client;
  taskQueue: string;
  world: FakeWorld;
  /** A job, transfer or workflow id: as given when recording, made unique in tests. */
  id(name: string): string;
}

export interface ScenarioRun {
  workflowId: string;
  handle: WorkflowHandle;
  /** The workflow's result, or the error its result() threw. */
  result?: unknown;
  error?: unknown;
  /** The failure types of the updates the workflow refused, in order (transfers). */
  refusals: string[];
}

export interface Scenario {
  workflow: WorkflowDef<any, any>;
  name: string;
  run(ctx: ScenarioContext): Promise<ScenarioRun>;
}

export const TENANT = 'ten_workflow_tests';
const ACTOR = 'key_workflow_tests';

export function historyFileName(s: Scenario): string {
  return `${s.workflow.name}-${s.name}.json`;
}

/** Starts a workflow of `def` on the context's queue under `<tenant>/<id>`, as the API names them. */
function start<I, R>(ctx: ScenarioContext, def: WorkflowDef<I, R>, id: string, input: I) {
  return startWorkflow(ctx.client, def, input, { taskQueue: ctx.taskQueue, workflowId: `${TENANT}/${id}` });
}

async function settle(handle: WorkflowHandle, refusals: string[] = []): Promise<ScenarioRun> {
  try {
    return { workflowId: handle.workflowId, handle, result: await handle.result(), refusals };
  } catch (error) {
    return { workflowId: handle.workflowId, handle, error, refusals };
  }
}

/**
 * The failure type of an update the workflow refused (its validator threw). Anything else is a
 * scenario gone wrong and is thrown.
 */
export async function refusalOf(update: Promise<unknown>): Promise<string> {
  try {
    await update;
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure)
      return err.cause.type ?? 'ApplicationFailure';
    throw err;
  }
  throw new Error('the update was expected to be refused, and was accepted');
}

// ---- inputs

export function importInput(jobId: string, config: Partial<CsvImportInput['config']> = {}): CsvImportInput {
  return {
    tenantId: TENANT,
    jobId,
    s3Key: `uploads/${TENANT}/${jobId}.csv`,
    config: { format: 'native', skipErrorRows: true, createIfNotExists: true, enableSideEffects: false, ...config },
    actor: ACTOR,
    operationId: `op-${jobId}`,
    chunkSize: 2,
  };
}

export function publicationInput(jobId: string, products: number, batchSize = 2): PublicationInput {
  return {
    tenantId: TENANT,
    jobId,
    channelId: 'channel-1',
    productIds: Array.from({ length: products }, (_, i) => `p${i + 1}`),
    options: {
      enableCategorization: true,
      forceRecategorization: false,
      includeInventory: true,
      includeVariants: true,
      forceUpdate: false,
    },
    targetMarketplaces: [],
    batchSize,
    collectResults: true,
  };
}

export function transferInput(transferId: string): TransferInput {
  return {
    tenantId: TENANT,
    transferId,
    originId: 'loc-origin',
    destinationId: 'loc-destination',
    productsList: [
      { sku: 'SKU-1', quantity: 2 },
      { sku: 'SKU-2', quantity: 1 },
    ],
  };
}

/** An update's options; its id is fixed (the client would draw a random one) so that a recording is repeatable. */
const act = (updateId: string, extra: Partial<TransferActionArgs> = {}) => ({
  updateId,
  args: [{ actor: ACTOR, ...extra }] as [TransferActionArgs],
});

// ---- the scenarios

function importScenario(
  name: string,
  file: ImportFile,
  config: Partial<CsvImportInput['config']> = {},
  failAt?: 'stageImport' | 'importChunk',
): Scenario {
  return {
    workflow: csvImport,
    name,
    run: async (ctx) => {
      const jobId = ctx.id(`csvimp-${name}`);
      ctx.world.script(jobId, { importFile: file, ...(failAt ? { failAt } : {}) });
      return settle(await start(ctx, csvImport, jobId, importInput(jobId, config)));
    },
  };
}

export const scenarios: Scenario[] = [
  {
    workflow: ping,
    name: 'completed',
    run: async (ctx) => {
      const jobId = ctx.id('ping-completed');
      return settle(await start(ctx, ping, jobId, { tenantId: TENANT, jobId, message: jobId }));
    },
  },

  {
    workflow: rollback,
    name: 'completed',
    run: async (ctx) => {
      const jobId = ctx.id('rollback-completed');
      const input = { tenantId: TENANT, jobId, operationId: 'op-1', rollbackId: `rb-${jobId}`, actor: ACTOR };
      return settle(await start(ctx, rollback, jobId, input));
    },
  },
  {
    workflow: rollback,
    name: 'step-failed',
    run: async (ctx) => {
      const jobId = ctx.id('rollback-step-failed');
      ctx.world.script(jobId, { failAt: 'rollbackOperation' });
      const input = { tenantId: TENANT, jobId, operationId: 'op-2', rollbackId: `rb-${jobId}`, actor: ACTOR };
      return settle(await start(ctx, rollback, jobId, input));
    },
  },

  {
    workflow: csvExport,
    name: 'completed',
    run: async (ctx) => {
      const jobId = ctx.id('csvexp-completed');
      return settle(
        await start(ctx, csvExport, jobId, { tenantId: TENANT, jobId, format: 'native', selection: 'all' }),
      );
    },
  },
  {
    workflow: csvExport,
    name: 'step-failed',
    run: async (ctx) => {
      const jobId = ctx.id('csvexp-step-failed');
      ctx.world.script(jobId, { failAt: 'exportCsv' });
      return settle(
        await start(ctx, csvExport, jobId, { tenantId: TENANT, jobId, format: 'native', selection: 'all' }),
      );
    },
  },

  // five products in chunks of two, two chunks at a time; one row fails, one updates
  importScenario('rows-skipped', { rows: 5, bad: [3], existing: [1] }),
  // skipErrorRows false: a dry pass over every chunk, then the writing pass
  importScenario('checked-then-written', { rows: 5, existing: [0] }, { skipErrorRows: false }),
  // skipErrorRows false and a bad row: the dry pass refuses the file, nothing is written (one
  // chunk: with two in flight the outcome depends on their order today, see csv-import.test.ts)
  importScenario('refused-by-dry-run', { rows: 2, bad: [1] }, { skipErrorRows: false }),
  importScenario('structural-errors', { rows: 0, structuralErrors: ['the header has no sku column'] }),
  importScenario('stage-failed', { rows: 5 }, {}, 'stageImport'),
  importScenario('chunk-failed', { rows: 5 }, {}, 'importChunk'),

  {
    workflow: publication,
    name: 'completed',
    run: async (ctx) => {
      const jobId = ctx.id('exp-completed');
      ctx.world.script(jobId, { refused: ['p2'], skipped: ['p4'] });
      return settle(await start(ctx, publication, jobId, publicationInput(jobId, 5)));
    },
  },
  {
    workflow: publication,
    name: 'cancel-signal',
    run: async (ctx) => {
      const jobId = ctx.id('exp-cancel-signal');
      const gate = ctx.world.gate(jobId, 'publishBatch', 2);
      const handle = await start(ctx, publication, jobId, publicationInput(jobId, 6));
      await gate.reached;
      await handle.signal(cancelPublication, { reason: 'stopped by the test' });
      return settle(handle);
    },
  },
  {
    workflow: publication,
    name: 'workflow-cancelled',
    run: async (ctx) => {
      const jobId = ctx.id('exp-workflow-cancelled');
      const gate = ctx.world.gate(jobId, 'publishBatch', 2);
      const handle = await start(ctx, publication, jobId, publicationInput(jobId, 6));
      await gate.reached;
      await handle.cancel();
      return settle(handle);
    },
  },
  {
    workflow: publication,
    name: 'batch-failed',
    run: async (ctx) => {
      const jobId = ctx.id('exp-batch-failed');
      ctx.world.script(jobId, { failAt: 'publishBatch' });
      return settle(await start(ctx, publication, jobId, publicationInput(jobId, 4)));
    },
  },

  {
    workflow: transfer,
    name: 'received',
    run: async (ctx) => {
      const id = ctx.id('trf-received');
      const handle = await start(ctx, transfer, id, transferInput(id));
      // refused updates leave nothing in the history; the accepted ones around them must replay
      const refusals = [await refusalOf(handle.executeUpdate(receiveTransfer, act('receive-1')))];
      await handle.executeUpdate(approveTransfer, act('approve-1'));
      refusals.push(await refusalOf(handle.executeUpdate(approveTransfer, act('approve-2'))));
      await handle.executeUpdate(receiveTransfer, act('receive-2', { idempotencyKey: 'idem-1' }));
      return settle(handle, refusals);
    },
  },
  {
    workflow: transfer,
    name: 'cancelled-pending',
    run: async (ctx) => {
      const id = ctx.id('trf-cancelled-pending');
      const handle = await start(ctx, transfer, id, transferInput(id));
      await handle.executeUpdate(cancelTransfer, act('cancel-1', { reason: 'ordered by mistake' }));
      return settle(handle);
    },
  },
  {
    workflow: transfer,
    name: 'cancelled-approved',
    run: async (ctx) => {
      const id = ctx.id('trf-cancelled-approved');
      const handle = await start(ctx, transfer, id, transferInput(id));
      await handle.executeUpdate(approveTransfer, act('approve-3'));
      await handle.executeUpdate(cancelTransfer, act('cancel-2'));
      return settle(handle);
    },
  },
  {
    workflow: transfer,
    name: 'receive-short-then-received',
    run: async (ctx) => {
      const id = ctx.id('trf-receive-short');
      ctx.world.script(id, { insufficientStockOnAttempt: [1] });
      const handle = await start(ctx, transfer, id, transferInput(id));
      await handle.executeUpdate(approveTransfer, act('approve-4'));
      const refusals = [await refusalOfActivity(handle.executeUpdate(receiveTransfer, act('receive-3')))];
      await handle.executeUpdate(receiveTransfer, act('receive-4'));
      return settle(handle, refusals);
    },
  },
  {
    workflow: transfer,
    name: 'refused-while-receiving',
    run: async (ctx) => {
      const id = ctx.id('trf-refused-while-receiving');
      const gate = ctx.world.gate(id, 'moveTransferStock');
      const handle = await start(ctx, transfer, id, transferInput(id));
      await handle.executeUpdate(approveTransfer, act('approve-5'));
      const receiving = handle.executeUpdate(receiveTransfer, act('receive-5'));
      await gate.reached;
      const refusals = [
        await refusalOf(handle.executeUpdate(cancelTransfer, act('cancel-3'))),
        await refusalOf(handle.executeUpdate(approveTransfer, act('approve-6'))),
      ];
      gate.release();
      await receiving;
      return settle(handle, refusals);
    },
  },

  {
    workflow: orderStock,
    name: 'accepted',
    run: async (ctx) => {
      const orderId = ctx.id('ord-accepted');
      return settle(await start(ctx, orderStock, `ordacc_${orderId}`, orderInput(orderId, 'accept')));
    },
  },
  {
    workflow: orderStock,
    name: 'accept-refused-then-returned',
    run: async (ctx) => {
      const orderId = ctx.id('ord-refused');
      ctx.world.script(orderId, { failAt: 'consumeOrderMaterials' });
      return settle(await start(ctx, orderStock, `ordacc_${orderId}`, orderInput(orderId, 'accept')));
    },
  },
  {
    workflow: orderStock,
    name: 'cancelled',
    run: async (ctx) => {
      const orderId = ctx.id('ord-cancelled');
      return settle(await start(ctx, orderStock, `ordcnl_${orderId}`, orderInput(orderId, 'cancel')));
    },
  },

  {
    workflow: bulkEdit,
    name: 'applied',
    run: async (ctx) => {
      const id = ctx.id('flow_applied');
      ctx.world.script(id, { edit: { pages: 3, perPage: 4 } });
      return settle(await start(ctx, bulkEdit, id, editInput(id)));
    },
  },
  {
    workflow: bulkEdit,
    name: 'cancelled',
    run: (ctx) => cancelledEdit(ctx, ctx.id('flow_cancelled'), 5, 'editPage', 2),
  },
  {
    workflow: bulkEdit,
    name: 'cancelled-after-last-page',
    run: (ctx) => cancelledEdit(ctx, ctx.id('flow_cancel_late'), 2, 'finishEdit', 1),
  },
  {
    workflow: bulkEdit,
    name: 'budget-partial',
    run: async (ctx) => {
      const id = ctx.id('aitx_partial');
      ctx.world.script(id, { edit: { pages: 3, perPage: 2, budgetOutAt: 2 } });
      return settle(await start(ctx, bulkEdit, id, editInput(id, 'ai-transform')));
    },
  },
  {
    workflow: bulkEdit,
    name: 'page-failed',
    run: async (ctx) => {
      const id = ctx.id('flow_failed');
      ctx.world.script(id, { edit: { pages: 2, perPage: 2 }, failAt: 'editPage' });
      return settle(await start(ctx, bulkEdit, id, editInput(id)));
    },
  },
  {
    workflow: endpointDeliveries,
    name: 'retried-then-delivered',
    run: async (ctx) => {
      const id = ctx.id('webhooks_we-retried');
      // the first delivery fails twice (once with a Retry-After), the second is delivered at once
      ctx.world.script(`${id}:msg_1`, { attempts: [{ kind: 'retry' }, { kind: 'retry', retryAfterMs: 20 }] });
      return settle(await startDeliveries(ctx, id, [`${id}:msg_1`, `${id}:msg_2`]));
    },
  },
  {
    workflow: endpointDeliveries,
    name: 'out-of-attempts',
    run: async (ctx) => {
      const id = ctx.id('webhooks_we-exhausted');
      ctx.world.script(`${id}:msg_1`, { attempts: Array.from({ length: 10 }, () => ({ kind: 'retry' as const })) });
      return settle(await startDeliveries(ctx, id, [`${id}:msg_1`]));
    },
  },
  {
    workflow: endpointDeliveries,
    name: 'endpoint-stopped',
    run: async (ctx) => {
      const id = ctx.id('webhooks_we-gone');
      ctx.world.script(`${id}:msg_1`, { attempts: [{ kind: 'stopped' }] });
      return settle(await startDeliveries(ctx, id, [`${id}:msg_1`, `${id}:msg_2`]));
    },
  },
  {
    workflow: endpointDeliveries,
    name: 'resent-during-attempt',
    run: async (ctx) => {
      const id = ctx.id('webhooks_we-resent');
      // a resend (round 1) arrives while round 0's attempt is under way, and must still be sent
      const gate = ctx.world.gate(`${id}:msg_1`, 'attemptWebhookDelivery');
      const handle = await startDeliveries(ctx, id, [`${id}:msg_1`]);
      await gate.reached;
      await handle.signal(deliverSignal, [{ deliveryId: `${id}:msg_1`, round: 1 }]);
      gate.release();
      return settle(handle);
    },
  },
];

/** An endpoint's delivery workflow as fan-out starts it: signal-with-start, delays shrunk to milliseconds. */
function startDeliveries(ctx: ScenarioContext, id: string, deliveryIds: string[]) {
  const input: EndpointDeliveryInput = { tenantId: TENANT, endpointId: id, retryScale: 0.00001, idleMs: 200 };
  return ctx.client.workflow.signalWithStart(endpointDeliveries.name, {
    taskQueue: ctx.taskQueue,
    workflowId: `${TENANT}/${id}`,
    args: [input],
    signal: deliverSignal,
    signalArgs: [deliveryIds.map((deliveryId) => ({ deliveryId, round: 0 }))],
  });
}

/** A bulk edit of `pages` pages whose cancel arrives as the `nth` call of `activity` is held. */
async function cancelledEdit(
  ctx: ScenarioContext,
  id: string,
  pages: number,
  activity: 'editPage' | 'finishEdit',
  nth: number,
): Promise<ScenarioRun> {
  ctx.world.script(id, { edit: { pages, perPage: 2 } });
  const gate = ctx.world.gate(id, activity, nth);
  const handle = await start(ctx, bulkEdit, id, editInput(id));
  await gate.reached;
  await handle.signal(cancelEdit);
  gate.release();
  return settle(handle);
}

function editInput(jobId: string, type: EditWorkflowInput['type'] = 'flow'): EditWorkflowInput {
  return { tenantId: TENANT, jobId, type, mode: 'apply', operationId: `bop_${jobId}`, previewId: null };
}

function orderInput(orderId: string, action: OrderStockInput['action']): OrderStockInput {
  return {
    tenantId: TENANT,
    orderId,
    action,
    actor: ACTOR,
    via: action,
    ...(action === 'cancel' ? { reason: 'customer asked' } : {}),
  };
}

/** The failure type of an update that was accepted and then failed in its activity (e.g. insufficient stock). */
async function refusalOfActivity(update: Promise<unknown>): Promise<string> {
  try {
    await update;
  } catch (err) {
    let cause: unknown = err instanceof WorkflowUpdateFailedError ? err.cause : null;
    while (cause && !(cause instanceof ApplicationFailure)) cause = (cause as { cause?: unknown }).cause;
    if (cause instanceof ApplicationFailure) return cause.type ?? 'ApplicationFailure';
    throw err;
  }
  throw new Error('the update was expected to fail, and succeeded');
}

/** The scenario of `workflow` called `name`. */
export function scenario(workflow: WorkflowDef<any, any>, name: string): Scenario {
  const found = scenarios.find((s) => s.workflow === workflow && s.name === name);
  if (!found) throw new Error(`no scenario ${workflow.name}-${name}`);
  return found;
}

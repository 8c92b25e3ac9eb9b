import { CancellationScope, proxyActivities, workflowInfo, type RetryPolicy } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { OrderStockInput } from '../../shared/orders/messages';
import type { MoveOutcome } from '../../shared/orders/stock';

const retry: RetryPolicy = { initialInterval: '1 second', maximumInterval: '20 seconds' };
// a refusal (not pending, not enough stock) comes back as a non-retryable failure (activities/index.ts);
// every step heartbeats (the line loops) or is short, so a killed worker's step moves on within seconds
const acts = proxyActivities<Activities>({ startToCloseTimeout: '5 minutes', heartbeatTimeout: '15 seconds', retry });

/**
 * One stock move of an order. Accept: plan (409 naming every SKU short), take the lines' sales,
 * take the materials, then move the order to accepted with what was taken; if any step refuses,
 * put back what the earlier ones took (keyed, so only what applied) and answer the refusal.
 * Cancel: move the order to cancelled, then put back what its acceptance took. The decision lives
 * here, between steps, so a step retried after a crash never goes forward once the run went back.
 */
export async function orderStockWorkflow(input: OrderStockInput): Promise<MoveOutcome> {
  const { runId } = workflowInfo();
  const step = { tenantId: input.tenantId, orderId: input.orderId, actor: input.actor };
  if (input.action === 'cancel') {
    const { outcome, stock } = await acts.markOrderCancelled({ ...step, runId, via: input.via, reason: input.reason });
    if (stock) {
      await acts.returnOrderStock({ ...step, effects: stock });
      await acts.recordOrderStockReturned({ ...step, runId, effects: stock });
    }
    return outcome;
  }
  const plan = await acts.planOrderStock({ ...step, runId });
  try {
    await acts.applyOrderSales({ ...step, plan });
    await acts.consumeOrderMaterials({ ...step, plan });
    // the reason rides in the activity's input: a payload, not a command, so recorded histories replay
    return await acts.markOrderAccepted({ ...step, plan, runId, via: input.via, reason: input.reason });
  } catch (err) {
    await CancellationScope.nonCancellable(() => acts.returnOrderStock({ ...step, effects: plan }));
    throw err;
  }
}

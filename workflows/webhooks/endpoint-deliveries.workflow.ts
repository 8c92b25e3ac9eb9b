import { condition, continueAsNew, patched, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { retryDelay } from '../../shared/webhooks/delivery-rules';
import {
  deliverSignal,
  queueQuery,
  type EndpointDeliveryInput,
  type QueuedDelivery,
} from '../../shared/webhooks/messages';

// an attempt waits at most the delivery time-out (15 s) plus its bookkeeping; a killed worker's
// attempt is taken up again after 30 s, and the receiver deduplicates by webhook-id
const acts = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/** With nothing to deliver for this long the workflow ends; the next event starts it again. */
const IDLE_MS = 10 * 60_000;
/** Attempts per run before continue-as-new keeps the history short. */
const ATTEMPTS_PER_RUN = 500;
/** Patch: an attempt's outcome no longer ends a round that a resend started during it. */
const ROUND_SUPERSEDED = 'round-superseded-mid-attempt';
/** Patch: a resend that arrives while its round is being marked failed stays queued. */
const ROUND_KEPT_AT_FAIL = 'round-kept-at-fail';
/** Patch: a recover or resend that arrives while a stopped endpoint's deliveries are failed is kept. */
const RESENT_KEPT_AT_STOP = 'resent-kept-at-stop';
/** Patch: a retry whose time has come goes before deliveries that arrived after it was due. */
const DUE_RETRY_FIRST = 'due-retry-first';

/**
 * The delivery to attempt now: of those ready or due by the workflow's clock (Date.now() is the
 * time of the workflow task, recorded in its history, so a replay picks the same), the one due
 * earliest, the first queued on a tie. A retry due at 10:00:01 goes before an event that arrived
 * at 10:00:02; were only `ready` ones taken, new events arriving faster than the endpoint
 * answers would keep a due retry waiting for ever.
 */
function dueFirst(queue: Map<string, QueuedDelivery>): QueuedDelivery | undefined {
  const now = Date.now();
  let next: QueuedDelivery | undefined;
  for (const q of queue.values()) if ((q.ready || q.dueAt <= now) && (!next || q.dueAt < next.dueAt)) next = q;
  return next;
}

/**
 * Delivers one endpoint's events, one attempt at a time, earliest due first. A failed attempt is
 * tried again on the schedule of delivery-rules.ts (or when a 429/503's Retry-After says); a
 * round's last failure marks the delivery failed (POST /webhooks/{id}/recover tries it again);
 * a stopped endpoint (410, five days failing, disabled, deleted) marks everything it holds failed
 * and ends the workflow.
 */
export async function endpointDeliveriesWorkflow(input: EndpointDeliveryInput): Promise<void> {
  const { tenantId, endpointId, retryScale } = input;
  const queue = new Map<string, QueuedDelivery>((input.queue ?? []).map((q) => [q.deliveryId, q]));
  let arrived = 0;
  /** Deliveries given a new round since the current attempt began. */
  const fresh = new Set<string>();
  setHandler(deliverSignal, (items) => {
    for (const item of items) {
      const held = queue.get(item.deliveryId);
      // a resend of a delivery still held starts a new round for it; a repeated signal changes nothing
      if (held && held.round >= item.round) continue;
      queue.set(item.deliveryId, {
        deliveryId: item.deliveryId,
        round: item.round,
        attempt: 0,
        dueAt: Date.now(),
        ready: true,
      });
      arrived++;
      fresh.add(item.deliveryId);
    }
  });
  setHandler(queueQuery, () => [...queue.values()]);

  let attempts = 0;
  for (;;) {
    if (queue.size === 0) {
      await condition(() => queue.size > 0, input.idleMs ?? IDLE_MS);
      if (queue.size === 0) return;
    }
    // before the patch: the first ready one (a delivery arrived, or its timer fired)
    const next = patched(DUE_RETRY_FIRST) ? dueFirst(queue) : [...queue.values()].find((q) => q.ready);
    if (!next) {
      const soonest = [...queue.values()].reduce((a, b) => (b.dueAt < a.dueAt ? b : a));
      const seen = arrived;
      // sleep until it is due, or until a new delivery arrives (ready at once)
      if (!(await condition(() => arrived !== seen, Math.max(1, soonest.dueAt - Date.now()))))
        queue.set(soonest.deliveryId, { ...soonest, ready: true });
      continue;
    }
    // the round goes with the attempt: a resend or recover tells this workflow first, and the
    // attempt raises the delivery to it (shared/webhooks/attempt.ts)
    fresh.clear();
    const outcome = await acts.attemptWebhookDelivery({
      tenantId,
      endpointId,
      deliveryId: next.deliveryId,
      round: next.round,
    });
    attempts++;
    if (outcome.kind === 'stopped') {
      if (!patched(RESENT_KEPT_AT_STOP)) {
        await acts.failWebhookDeliveries({ tenantId, deliveryIds: [...queue.keys()] });
        return;
      }
      // A recover sent once the endpoint is enabled again may reach this run before it ends: the
      // deliveries it names are kept and attempted (their attempt sees the endpoint as it is
      // now), where ending would lose them. Only the rounds held before are failed.
      const stale = [...queue.values()].filter((q) => !fresh.has(q.deliveryId));
      await acts.failWebhookDeliveries({
        tenantId,
        deliveryIds: stale.map((q) => q.deliveryId),
        rounds: Object.fromEntries(stale.map((q) => [q.deliveryId, q.round])),
      });
      for (const q of stale) if (queue.get(q.deliveryId)!.round === q.round) queue.delete(q.deliveryId);
      if (queue.size === 0) return;
      continue;
    }
    // a resend that arrived during the attempt started a new round, ready in the queue: the
    // attempt's outcome belongs to its own round and must not end or delay the new one
    const resent = queue.get(next.deliveryId)!.round !== next.round && patched(ROUND_SUPERSEDED);
    if (resent) {
      // the new round is attempted next
    } else if (outcome.kind === 'done') queue.delete(next.deliveryId);
    else {
      const failed = next.attempt + 1;
      const delay = retryDelay(failed, retryScale, Math.random, outcome.retryAfterMs);
      if (delay === null) {
        // only this round: a resend that started a new one meanwhile is not failed with it
        await acts.failWebhookDeliveries({
          tenantId,
          deliveryIds: [next.deliveryId],
          rounds: { [next.deliveryId]: next.round },
        });
        const resentMeanwhile = queue.get(next.deliveryId)!.round !== next.round && patched(ROUND_KEPT_AT_FAIL);
        if (!resentMeanwhile) queue.delete(next.deliveryId);
      } else queue.set(next.deliveryId, { ...next, attempt: failed, dueAt: Date.now() + delay, ready: false });
    }
    if (attempts >= ATTEMPTS_PER_RUN || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof endpointDeliveriesWorkflow>({ ...input, queue: [...queue.values()] });
    }
  }
}

import type { Db } from 'mongodb';
import type { Config } from '../config';
import { TenantDb, type TenantCollection } from '../db/tenant-db';
import { webhookDeliveries as deliveryMetric } from '../metrics/metrics';
import {
  webhookDeliveries,
  webhookEndpoints,
  webhookEvents,
  type DeliveryAttempt,
  type WebhookDeliveryDoc,
  type WebhookEndpointDoc,
} from './collections';
import { DISABLE_AFTER_MS, parseRetryAfter } from './delivery-rules';
import { activeSecrets } from './endpoints';
import { recordEvent } from './events';
import type { AttemptOutcome } from './messages';
import { presentEndpoint } from './present';
import { send } from './send';
import { signedHeaders } from './signing';
import { callRefusal } from './targets';

/**
 * One attempt to deliver one event to one endpoint, recorded on the delivery whatever it comes to.
 * 2xx delivers; 410 disables the endpoint; any other answer (or none) is a failure, and an
 * endpoint whose attempts have all failed for five days (times the retry scale) is disabled with
 * a `webhook.endpoint_disabled` event. Safe to run again: a delivered delivery is not sent twice
 * by a later attempt, and a repeat after a crash in mid-send is deduplicated by the receiver
 * through the unchanged `webhook-id`.
 */
export async function attemptDelivery(
  db: Db,
  config: Config,
  /** `round`: the round the workflow holds; a resend or recover told the workflow before raising it. */
  input: { tenantId: string; endpointId: string; deliveryId: string; round?: number },
): Promise<AttemptOutcome> {
  const tenantDb = new TenantDb(db, input.tenantId);
  const deliveries = tenantDb.collection(webhookDeliveries);
  let delivery = await deliveries.findOne({ _id: input.deliveryId });
  if (delivery && input.round !== undefined && delivery.round < input.round)
    delivery =
      (await raiseRound(deliveries, delivery._id, input.round)) ??
      (await deliveries.findOne({ _id: input.deliveryId }));
  if (!delivery || delivery.status !== 'pending') return { kind: 'done' };
  const endpoint = await tenantDb.collection(webhookEndpoints).findOne({ _id: input.endpointId });
  if (!endpoint || endpoint.status !== 'enabled') return { kind: 'stopped' };
  const event = await tenantDb.collection(webhookEvents).findOne({ _id: delivery.eventId });
  if (!event) {
    await deliveries.updateById(delivery._id, { $set: { status: 'failed', updatedAt: new Date() } });
    return { kind: 'done' };
  }

  const body = JSON.stringify(event.payload);
  const at = new Date();
  const refusal = callRefusal(endpoint.url, config.webhooks);
  const result = refusal
    ? { status: null, error: `target refused: ${refusal}`, durationMs: 0 }
    : await send(
        endpoint.url,
        body,
        signedHeaders(activeSecrets(endpoint, config.secretsKey, at), event._id, Math.floor(at.getTime() / 1000), body),
        config.webhooks.timeoutMs,
        config.webhooks.targets,
      );
  const attempt: DeliveryAttempt = {
    at,
    statusCode: result.status,
    durationMs: result.durationMs,
    ...(result.error ? { error: result.error } : {}),
  };
  const ok = result.status !== null && result.status >= 200 && result.status < 300;
  // a resend during this attempt started a new round (pending again): the attempt is recorded,
  // but only the round it was made for can be marked delivered by it
  const sameRound = await deliveries.updateOne({ _id: delivery._id, round: delivery.round }, {
    $set: { ...(ok ? { status: 'delivered' } : {}), updatedAt: new Date() },
    $push: { attempts: attempt },
  } as never);
  if (sameRound.matchedCount === 0)
    await deliveries.updateOne({ _id: delivery._id }, {
      $set: { updatedAt: new Date() },
      $push: { attempts: attempt },
    } as never);

  const endpoints = tenantDb.collection(webhookEndpoints);
  if (ok) {
    deliveryMetric.inc({ outcome: 'delivered' });
    if (endpoint.failingSince) await endpoints.updateById(endpoint._id, { $unset: { failingSince: '' } });
    return { kind: 'done' };
  }
  if (result.status === 410) {
    deliveryMetric.inc({ outcome: 'gone' });
    await disable(tenantDb, endpoint, 'gone');
    return { kind: 'stopped' };
  }
  deliveryMetric.inc({ outcome: 'failed' });
  const failingSince = endpoint.failingSince ?? at;
  if (!endpoint.failingSince)
    await endpoints.updateOne({ _id: endpoint._id, failingSince: { $exists: false } }, { $set: { failingSince: at } });
  if (at.getTime() - failingSince.getTime() >= DISABLE_AFTER_MS * config.webhooks.retryScale) {
    await disable(tenantDb, endpoint, 'failing');
    return { kind: 'stopped' };
  }
  const retryAfterMs =
    result.status === 429 || result.status === 503 ? parseRetryAfter(result.retryAfter, Date.now()) : undefined;
  return retryAfterMs === undefined ? { kind: 'retry' } : { kind: 'retry', retryAfterMs };
}

/**
 * Disables an endpoint that delivery gave up on and announces it to the tenant's other endpoints.
 * The event is keyed by the version the endpoint was disabled at, so a retried attempt announces
 * it once.
 */
async function disable(tenantDb: TenantDb, endpoint: WebhookEndpointDoc, reason: 'gone' | 'failing'): Promise<void> {
  const endpoints = tenantDb.collection(webhookEndpoints);
  await endpoints.findOneAndUpdate(
    { _id: endpoint._id, status: 'enabled' },
    { $set: { status: 'disabled', disabledReason: reason, disabledAt: new Date() }, $inc: { version: 1 } },
  );
  const now = await endpoints.findOne({ _id: endpoint._id });
  if (!now || now.status !== 'disabled' || now.disabledReason !== reason) return;
  await recordEvent(tenantDb, {
    type: 'webhook.endpoint_disabled',
    key: `webhook-endpoint:${now._id}:disabled:v${now.version}`,
    id: now._id,
    sequence: now.version,
    resource: presentEndpoint(now),
    at: now.disabledAt,
  });
}

/** A round ran out of attempts, or the endpoint stopped: POST /webhooks/{id}/recover can try them again. */
export async function failDeliveries(
  db: Db,
  /** `rounds`: the round each delivery ran out of attempts in; a later round (a resend) is left pending. */
  input: { tenantId: string; deliveryIds: string[]; rounds?: Record<string, number> },
): Promise<void> {
  const deliveries = new TenantDb(db, input.tenantId).collection(webhookDeliveries);
  for (const id of input.deliveryIds) {
    const round = input.rounds?.[id];
    await deliveries.updateOne(
      { _id: id, status: 'pending', ...(round !== undefined ? { round } : {}) },
      { $set: { status: 'failed', updatedAt: new Date() } },
    );
  }
}

/**
 * Starts round `round` of a delivery (pending again), unless it is there already: a resend or
 * recover, made by the endpoint's workflow at its attempt and by the API after telling it.
 */
export function raiseRound(
  deliveries: TenantCollection<WebhookDeliveryDoc>,
  deliveryId: string,
  round: number,
): Promise<WebhookDeliveryDoc | null> {
  return deliveries.findOneAndUpdate(
    { _id: deliveryId, round: { $lt: round } },
    { $set: { status: 'pending', round, updatedAt: new Date() } },
    { returnDocument: 'after' },
  );
}

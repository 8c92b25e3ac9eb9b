import type { TenantDb } from '../db/tenant-db';
import { isDuplicateKeyError } from '../db/duplicate-key';
import { JOB_TYPE, TENANT_ID } from '../temporal/search-attributes';
import { workflowIdFor } from '../temporal/workflow-ids';
import { subscribes } from './catalog';
import {
  webhookDeliveries,
  webhookEndpoints,
  webhookEvents,
  webhookOutbox,
  type OutboxEntryDoc,
  type WebhookDeliveryDoc,
} from './collections';
import { deliverSignal, endpointDeliveries, type EndpointDeliveryInput } from './messages';
import { webhookRuntime, type WebhookRuntime } from './runtime';

export function deliveryIdOf(endpointId: string, eventId: string): string {
  return `${endpointId}:${eventId}`;
}

/** The workflow that delivers to one endpoint: `<tenantId>/webhooks_<endpointId>` in the Temporal UI. */
export function endpointWorkflowId(tenantId: string, endpointId: string): string {
  return workflowIdFor(tenantId, `webhooks_${endpointId}`);
}

/** Hands deliveries to their endpoint's workflow, starting it if it is idle. */
export async function signalDeliveries(
  runtime: WebhookRuntime,
  tenantId: string,
  endpointId: string,
  items: { deliveryId: string; round: number }[],
): Promise<void> {
  const input: EndpointDeliveryInput = { tenantId, endpointId, retryScale: runtime.retryScale };
  await runtime.temporal.workflow.signalWithStart(endpointDeliveries.name, {
    workflowId: endpointWorkflowId(tenantId, endpointId),
    taskQueue: runtime.taskQueue,
    args: [input],
    signal: deliverSignal,
    signalArgs: [items],
    typedSearchAttributes: [
      { key: TENANT_ID, value: tenantId },
      { key: JOB_TYPE, value: 'webhook-delivery' },
    ],
  });
}

/**
 * Moves one ready outbox entry on: keeps the event, makes one delivery per endpoint that gets it
 * (`<endpointId>:<eventId>`, so doing this twice makes none twice), hands each to its endpoint's
 * workflow, and deletes the entry. Every step may be repeated: after a crash the relay does it again.
 */
export async function fanOut(tenantDb: TenantDb, eventId: string, runtime = webhookRuntime()): Promise<void> {
  if (!runtime) return; // no Temporal client in this process: the relay of a process that has one does it
  const outbox = tenantDb.collection(webhookOutbox);
  const entry = await outbox.findOne({ _id: eventId });
  if (!entry || entry.state !== 'ready' || !entry.payload) return;
  await keepEvent(tenantDb, entry);
  const endpoints = entry.endpointId
    ? await tenantDb.collection(webhookEndpoints).findByIds([entry.endpointId])
    : (await tenantDb.collection(webhookEndpoints).find({}).toArray()).filter((e) =>
        subscribes(e.eventTypes, entry.type),
      );
  const deliveries = tenantDb.collection(webhookDeliveries);
  const now = new Date();
  for (const endpoint of endpoints) {
    // an endpoint is not told that it was disabled: the others are
    if (entry.type === 'webhook.endpoint_disabled' && entry.payload.data.id === endpoint._id) continue;
    // a disabled endpoint gets its deliveries as failed, unattempted: recover sends them once it is enabled
    const enabled = endpoint.status === 'enabled';
    const _id = deliveryIdOf(endpoint._id, eventId);
    const delivery: Omit<WebhookDeliveryDoc, 'tenantId'> = {
      _id,
      endpointId: endpoint._id,
      eventId,
      eventType: entry.type,
      status: enabled ? 'pending' : 'failed',
      attempts: [],
      round: 0,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await deliveries.insertOne(delivery);
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      const existing = await deliveries.findOne({ _id });
      if (existing?.status !== 'pending') continue; // made and settled before a crash
    }
    if (!enabled) continue;
    await signalDeliveries(runtime, tenantDb.tenantId, endpoint._id, [{ deliveryId: _id, round: 0 }]);
  }
  await outbox.deleteById(eventId);
}

async function keepEvent(tenantDb: TenantDb, entry: OutboxEntryDoc): Promise<void> {
  try {
    await tenantDb.collection(webhookEvents).insertOne({
      _id: entry._id,
      type: entry.type,
      payload: entry.payload!,
      ...(entry.endpointId ? { endpointId: entry.endpointId } : {}),
      createdAt: new Date(entry.payload!.timestamp),
    });
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
  }
}

import type { TenantDb } from '../db/tenant-db';
import { AppError, errors } from '../errors/catalog';
import { newId } from '../ids';
import type { PageRequest } from '../paging';
import { webhookDeliveries, type WebhookDeliveryDoc, type WebhookEndpointDoc } from './collections';
import { raiseRound } from './attempt';
import { recordEvent } from './events';
import { deliveryIdOf, signalDeliveries } from './fan-out';
import { webhookRuntime } from './runtime';

const endpointStopped = (doc: WebhookEndpointDoc) =>
  new AppError(
    409,
    'endpoint-disabled',
    `Webhook endpoint ${doc._id} is disabled${doc.disabledReason ? ` (${doc.disabledReason})` : ''}; enable it first (PATCH /webhooks/${doc._id} {"status":"enabled"})`,
  );

/** The most deliveries one recover request takes up; a larger range is recovered by more requests. */
export const RECOVER_MAX = 1000;

/** What operators do with an endpoint's deliveries: look at them, test, resend, recover. */
export class WebhookDeliveries {
  constructor(private readonly tenantDb: TenantDb) {}

  private get deliveries() {
    return this.tenantDb.collection(webhookDeliveries);
  }

  /** Newest first; each with every attempt. */
  async list(endpointId: string, q: PageRequest & { status?: string }) {
    const filter = { endpointId, ...(q.status ? { status: q.status as WebhookDeliveryDoc['status'] } : {}) };
    const [docs, total] = await Promise.all([
      this.deliveries
        .find(filter, { sort: { createdAt: -1, _id: -1 }, skip: (q.page - 1) * q.limit, limit: q.limit })
        .toArray(),
      this.deliveries.countDocuments(filter),
    ]);
    return { docs, total };
  }

  /** A `webhook.test` event to this endpoint alone. */
  async test(endpoint: WebhookEndpointDoc): Promise<{ eventId: string; deliveryId: string }> {
    if (endpoint.status !== 'enabled') throw endpointStopped(endpoint);
    const eventId = await recordEvent(this.tenantDb, {
      type: 'webhook.test',
      key: `webhook-test:${newId('wt')}`,
      id: endpoint._id,
      sequence: 1,
      resource: { id: endpoint._id, message: `A test event for ${endpoint.url}` },
      endpointId: endpoint._id,
    });
    return { eventId: eventId!, deliveryId: deliveryIdOf(endpoint._id, eventId!) };
  }

  /** Sends one delivery again (whatever its status): a new round of attempts, the same webhook-id. */
  async resend(endpoint: WebhookEndpointDoc, deliveryId: string): Promise<WebhookDeliveryDoc> {
    if (endpoint.status !== 'enabled') throw endpointStopped(endpoint);
    const doc = await this.deliveries.findOne({ _id: deliveryId });
    if (!doc || doc.endpointId !== endpoint._id)
      throw errors.notFound(
        'not-found',
        `No delivery ${JSON.stringify(deliveryId.slice(0, 200))} of webhook endpoint ${endpoint._id}`,
      );
    const [again] = await this.restart(endpoint, [doc]);
    return again;
  }

  /** Sends again every failed delivery of the endpoint made in [since, until). */
  async recover(endpoint: WebhookEndpointDoc, since: Date, until: Date): Promise<WebhookDeliveryDoc[]> {
    if (endpoint.status !== 'enabled') throw endpointStopped(endpoint);
    const failed = await this.deliveries
      .find(
        { endpointId: endpoint._id, status: 'failed', createdAt: { $gte: since, $lt: until } },
        { sort: { createdAt: 1 }, limit: RECOVER_MAX },
      )
      .toArray();
    return this.restart(endpoint, failed);
  }

  /**
   * A new round for each delivery. The endpoint's workflow is told first, and its attempt raises
   * the delivery to the round (attempt.ts): a signal lost before it is taken (the process died,
   * Temporal refused) leaves the delivery as it was, for the next resend or recover to find, where
   * raising first left it pending with no workflow to send it.
   */
  private async restart(endpoint: WebhookEndpointDoc, docs: WebhookDeliveryDoc[]): Promise<WebhookDeliveryDoc[]> {
    const runtime = webhookRuntime();
    if (!runtime) throw new AppError(503, 'unavailable', 'Webhook delivery is not running in this process');
    if (!docs.length) return [];
    await signalDeliveries(
      runtime,
      this.tenantDb.tenantId,
      endpoint._id,
      docs.map((d) => ({ deliveryId: d._id, round: d.round + 1 })),
    );
    const restarted: WebhookDeliveryDoc[] = [];
    for (const doc of docs) {
      // shown pending at once; two concurrent resends of one round both ask for the same next
      // round, which the workflow takes once
      const next =
        (await raiseRound(this.deliveries, doc._id, doc.round + 1)) ??
        (await this.deliveries.findOne({ _id: doc._id }));
      if (next) restarted.push(next);
    }
    return restarted;
  }
}

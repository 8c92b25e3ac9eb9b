import { defineCollection } from '../db/collection';
import type { EncryptedSecret } from '../secrets/crypto';

/** A signing secret of an endpoint; after a rotation the old one stays valid until `expiresAt`. */
export interface EndpointSecret {
  secret: EncryptedSecret;
  createdAt: Date;
  /** Unset on the current secret; set on a rotated-out one. */
  expiresAt?: Date;
}

export interface WebhookEndpointDoc {
  /** `we_<random>`. */
  _id: string;
  tenantId: string;
  url: string;
  eventTypes: string[];
  description: string;
  status: 'enabled' | 'disabled';
  /** Why delivery stopped: `gone` (the target answered 410), `failing` (five days of failures), `manual`. */
  disabledReason?: 'gone' | 'failing' | 'manual';
  disabledAt?: Date;
  /** The current secret first. */
  secrets: EndpointSecret[];
  /** When the first of the current run of failed attempts happened; unset by a success. */
  failingSince?: Date;
  /** Raised by every write: updates are guarded by the version they read. */
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export const webhookEndpoints = defineCollection<WebhookEndpointDoc>({
  name: 'webhook_endpoints',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, createdAt: -1 } }],
});

/** What an endpoint receives as the body of a delivery. */
export interface EventPayload {
  type: string;
  timestamp: string;
  data: { id: string; sequence: number; resource: unknown };
}

/**
 * An event, kept so that it can be delivered, resent and recovered. `_id` is the Standard
 * Webhooks `webhook-id` (`msg_…`), derived from the change that caused it, so recording it again
 * (a retried activity, the relay after a crash) writes nothing new.
 */
export interface WebhookEventDoc {
  _id: string;
  tenantId: string;
  type: string;
  payload: EventPayload;
  /** Only this endpoint gets it (a test event); otherwise every subscribed endpoint. */
  endpointId?: string;
  createdAt: Date;
}

export const webhookEvents = defineCollection<WebhookEventDoc>({
  name: 'webhook_events',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, createdAt: -1 } }],
});

/**
 * The outbox: an event on its way from its change to the endpoints. An API change writes the
 * entry `pending` *before* the change and makes it `ready` after; a change made by an activity
 * (retried until it succeeds) writes it `ready` at once. The entry is deleted once the event is
 * fanned out to the endpoints' deliveries. The relay (relay.ts) finishes what a killed process
 * left: a `ready` entry is fanned out, a `pending` one is resolved against its resource. Entries
 * live seconds, so the relay's scan across tenants stays small.
 */
export interface OutboxEntryDoc {
  /** The event's id. */
  _id: string;
  tenantId: string;
  state: 'pending' | 'ready';
  type: string;
  /**
   * For a pending entry: how the relay finds out whether the change happened (resources.ts).
   * `sequence`: for a deletion, the one announced; otherwise the one the resource must have reached.
   */
  resource?: { kind: string; id: string; expect: 'present' | 'absent'; before?: unknown; sequence?: number };
  payload?: EventPayload;
  endpointId?: string;
  createdAt: Date;
}

export const webhookOutbox = defineCollection<OutboxEntryDoc>({
  name: 'webhook_outbox',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, createdAt: 1 } }],
});

/** One attempt to deliver an event to an endpoint. */
export interface DeliveryAttempt {
  at: Date;
  /** The HTTP status the endpoint answered; null when there was no answer (time-out, refused, DNS). */
  statusCode: number | null;
  durationMs: number;
  error?: string;
}

/**
 * One event for one endpoint: `_id` is `<endpointId>:<eventId>`, so fanning an event out twice
 * makes no second delivery.
 */
export interface WebhookDeliveryDoc {
  _id: string;
  tenantId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: DeliveryAttempt[];
  /** Raised by resend/recover: the delivery workflow counts retries per round. */
  round: number;
  createdAt: Date;
  updatedAt: Date;
}

export const webhookDeliveries = defineCollection<WebhookDeliveryDoc>({
  name: 'webhook_deliveries',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, endpointId: 1, createdAt: -1 } }],
});

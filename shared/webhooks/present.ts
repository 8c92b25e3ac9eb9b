import type { WebhookDeliveryDoc, WebhookEndpointDoc } from './collections';

/** An endpoint as the API answers it: never its secret (only create and rotate show that, once). */
export function presentEndpoint(doc: WebhookEndpointDoc) {
  return {
    id: doc._id,
    url: doc.url,
    eventTypes: doc.eventTypes,
    description: doc.description,
    status: doc.status,
    disabledReason: doc.disabledReason ?? null,
    disabledAt: doc.disabledAt ?? null,
    failingSince: doc.failingSince ?? null,
    /** When the rotated-out secret stops signing; null when only one secret signs. */
    previousSecretExpiresAt: doc.secrets.find((s) => s.expiresAt && s.expiresAt > new Date())?.expiresAt ?? null,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

export function presentDelivery(doc: WebhookDeliveryDoc) {
  return {
    id: doc._id,
    eventId: doc.eventId,
    eventType: doc.eventType,
    status: doc.status,
    attempts: doc.attempts.map((a) => ({
      at: a.at,
      statusCode: a.statusCode,
      durationMs: a.durationMs,
      error: a.error ?? null,
    })),
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

import type { JsonSchema } from '../validation';

/**
 * Every event a webhook endpoint can subscribe to: its type (Standard Webhooks' `resource.action`
 * naming), when it fires, and what its `data.resource` is. The catalog is answered by
 * GET /webhooks/event-types with each payload's JSON schema, and an endpoint's `eventTypes`
 * must name types from it (or `*`).
 */
export interface EventTypeDef {
  type: string;
  /** When it fires, for people reading the catalog. */
  description: string;
  /** What `data.resource` holds. */
  resource: JsonSchema;
}

const resource = (description: string, properties: Record<string, JsonSchema> = {}): JsonSchema => ({
  type: 'object',
  description,
  properties: { id: { type: 'string' }, ...properties },
});

const order = resource('the order as GET /orders/{id} answers it (its `data` member)');
const product = resource('the product as GET /products/{id} answers it (its `data` member)');
const customer = resource('the customer as GET /customers/{id} answers it');
const transfer = resource('the transfer as GET /inventory/transfers/{id} answers it', { status: { type: 'string' } });
const adjustment = resource('the adjustment as GET /inventory/adjustments/{id} answers it', {
  status: { type: 'string' },
});
const stockLevel = resource(
  'the balance after the movement: `{id: "<locationId>:<sku>", kind, sku, locationId, onHand, unit?, movement}`; `kind` is product (the stock ledger), material or supply (their own stock, in `unit`)',
  {
    kind: { type: 'string', enum: ['product', 'material', 'supply'] },
    sku: { type: 'string' },
    locationId: { type: 'string' },
    onHand: { type: 'number' },
    unit: { type: 'string', description: 'materials and supplies: the base unit onHand and delta are in' },
    movement: {
      type: 'object',
      description:
        'the movement that changed it: `{id, delta, reason, reference}` (delta at this location: a transfer is announced at both ends)',
    },
  },
);
const alert = resource(
  'the alert as GET /products/materials/alerts (or /products/supplies/alerts) lists it: `{id, sku, kind, locationId, status: open|closed, openedAt, closedAt, availableAtOpen, availableAtClose, reorderPoint, minStock, reorderQuantity, unit}`',
  {
    sku: { type: 'string' },
    locationId: { type: 'string' },
    status: { type: 'string', enum: ['open', 'closed'] },
  },
);
const job = resource(
  "the job: `{id, type, status, input, result, error, createdAt, finishedAt}`; input holds its plain values only (channelId, mode, operationId, format, …); each type's own route has its full view",
  {
    type: { type: 'string', description: 'csv-import, csv-export, publication, flow, ai-transform, bulk-rollback, …' },
    status: { type: 'string', description: 'completed or partial (job.completed), failed, cancelled' },
  },
);
const operation = resource(
  'the bulk operation as GET /products/bulk/operations/{id} answers it (its own members): `status` completed or failed with its counts when it ends; `status: rolled_back` and `rolledBackBy` the rollback once rolled back',
);
const endpoint = resource('the endpoint as GET /webhooks/{id} answers it (never its secret)', {
  url: { type: 'string' },
  disabledReason: { type: 'string' },
});

export const EVENT_TYPES: readonly EventTypeDef[] = [
  { type: 'order.created', description: 'An order was created (POST /orders).', resource: order },
  {
    type: 'order.updated',
    description: 'Fields of an order changed (PATCH /orders/{id}, its customer, a redaction).',
    resource: order,
  },
  {
    type: 'order.status_changed',
    description: 'An order moved in its lifecycle (confirm, ship, cancel, …).',
    resource: order,
  },
  {
    type: 'order.comment_added',
    description:
      'A comment was added to an order; the resource is the comment `{id, orderId, comment, actor, timestamp}`.',
    resource: resource('the comment', { orderId: { type: 'string' }, comment: { type: 'string' } }),
  },
  {
    type: 'product.created',
    description:
      'A product was created through the API (POST /products). Products a bulk job creates or changes (an import, a flow, an AI transform, a rollback) are announced by that job, not one by one.',
    resource: product,
  },
  {
    type: 'product.updated',
    description: 'A product was changed through the API (PUT /products/{id}, its bill of materials, its modifiers).',
    resource: product,
  },
  {
    type: 'product.deleted',
    description: 'A product was deleted (DELETE /products/{id}); the resource is the product as it was before.',
    resource: product,
  },
  {
    type: 'stock.changed',
    description:
      'A stock balance of a SKU at a location changed: every applied ledger movement (a set, an adjustment, a count, a sale, a return, a transfer, a lot) and every movement of a material or supply (a receipt, a transfer, a consumption, a return).',
    resource: stockLevel,
  },
  { type: 'transfer.created', description: 'A transfer was requested (pending).', resource: transfer },
  { type: 'transfer.approved', description: 'A transfer was approved.', resource: transfer },
  { type: 'transfer.received', description: 'A transfer was received at its destination.', resource: transfer },
  { type: 'transfer.cancelled', description: 'A transfer was cancelled.', resource: transfer },
  { type: 'adjustment.created', description: 'A stock adjustment was requested (pending).', resource: adjustment },
  { type: 'adjustment.approved', description: 'A stock adjustment was approved and applied.', resource: adjustment },
  { type: 'adjustment.rejected', description: 'A stock adjustment was rejected.', resource: adjustment },
  {
    type: 'material.alert_opened',
    description: "A material's available stock at a location fell to its reorder point.",
    resource: alert,
  },
  { type: 'material.alert_closed', description: "A material's stock alert closed (stock recovered).", resource: alert },
  {
    type: 'supply.alert_opened',
    description: "A supply's available stock at a location fell to its reorder point.",
    resource: alert,
  },
  { type: 'supply.alert_closed', description: "A supply's stock alert closed (stock recovered).", resource: alert },
  {
    type: 'job.completed',
    description:
      'A job (CSV import or export, publication, flow, AI transform, rollback) completed; an AI transform whose budget ran out completes `partial`.',
    resource: job,
  },
  { type: 'job.failed', description: 'A job failed.', resource: job },
  { type: 'job.cancelled', description: 'A job was cancelled.', resource: job },
  {
    type: 'bulk_operation.completed',
    description:
      'A bulk operation (CSV import, sync or async; edit, flow, AI transform, category assignment, rollback) ended, completed or failed, with its counts: its products announce no product.* event each.',
    resource: operation,
  },
  {
    type: 'bulk_operation.rolled_back',
    description: 'A bulk operation (import, edit, flow, AI transform, category assignment) was rolled back.',
    resource: operation,
  },
  { type: 'customer.created', description: 'A customer was created.', resource: customer },
  { type: 'customer.updated', description: 'A customer was changed.', resource: customer },
  {
    type: 'customer.deleted',
    description: 'A customer was deleted; the resource is the customer as it was before.',
    resource: customer,
  },
  {
    type: 'customer.redacted',
    description: "A customer's personal data (and their orders' customer fields) was erased.",
    resource: customer,
  },
  {
    type: 'webhook.endpoint_disabled',
    description:
      'An endpoint was disabled by delivery failures (410 Gone, or failing for five days in a row); sent to the other endpoints.',
    resource: endpoint,
  },
  {
    type: 'webhook.test',
    description: 'Sent by POST /webhooks/{id}/test to that endpoint only, whatever it subscribes to.',
    resource: resource('`{id, message}`', { message: { type: 'string' } }),
  },
];

export type EventType = string;

const KNOWN = new Set(EVENT_TYPES.map((t) => t.type));

export function isEventType(type: string): boolean {
  return KNOWN.has(type);
}

/** Whether an endpoint subscribed to `subscribed` gets events of `type` (`webhook.test` is addressed, never broadcast). */
export function subscribes(subscribed: readonly string[], type: string): boolean {
  if (type === 'webhook.test') return false;
  return subscribed.includes('*') || subscribed.includes(type);
}

/** The JSON schema of an event's payload as an endpoint receives it. */
export function payloadSchema(def: EventTypeDef): JsonSchema {
  return {
    type: 'object',
    required: ['type', 'timestamp', 'data'],
    properties: {
      type: { type: 'string', const: def.type },
      timestamp: { type: 'string', format: 'date-time', description: 'when the change happened' },
      data: {
        type: 'object',
        required: ['id', 'sequence', 'resource'],
        properties: {
          id: { type: 'string', description: "the resource's id" },
          sequence: {
            type: 'integer',
            description:
              'rises with every change of this resource: a receiver keeps the highest it has seen and drops an event whose sequence is lower (an older state arriving late)',
          },
          resource: def.resource,
        },
      },
    },
  };
}

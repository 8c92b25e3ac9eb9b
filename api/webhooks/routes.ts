import { defineRoutes, refusedFields, type InputFailure } from '../route';
import { createdId, tenantOf, validBody, type AppContext } from '../context';
import { errors } from '../../shared/errors/catalog';
import { limitParam, PAGE_PARAM } from '../../shared/paging';
import type { JsonSchema } from '../../shared/validation';
import { EVENT_TYPES, payloadSchema } from '../../shared/webhooks/catalog';
import { MAX_RETRY_AFTER_MS, RETRY_DELAYS_MS } from '../../shared/webhooks/delivery-rules';
import { RECOVER_MAX, WebhookDeliveries } from '../../shared/webhooks/deliveries';
import {
  MAX_OVERLAP_SECONDS,
  WebhookEndpoints,
  type EndpointInput,
  type EndpointPatch,
} from '../../shared/webhooks/endpoints';
import { presentDelivery, presentEndpoint } from '../../shared/webhooks/present';

/**
 * Webhook endpoints and their deliveries (docs/webhooks.md). Paths under /webhooks are area
 * 'other' (api/middleware/errors.ts): flat bodies, errors `{code, message, field?, fieldErrors?}`.
 */
const read = { scopes: ['webhooks:read' as const] };
const update = { scopes: ['webhooks:update' as const] };
const tags = ['webhooks'];

const eventTypesSchema: JsonSchema = {
  type: 'array',
  minItems: 1,
  maxItems: 100,
  items: { type: 'string', minLength: 1, maxLength: 100 },
  description: 'event types from GET /webhooks/event-types, or "*" for every one',
};
const urlSchema: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 2000,
  description:
    'https (http only where WEBHOOK_ALLOW_HTTP is true); a host resolving to a loopback, private or link-local address is refused unless WEBHOOK_TARGETS allows it',
};
const descriptionSchema: JsonSchema = { type: 'string', maxLength: 500 };

const createBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url', 'eventTypes'],
  properties: { url: urlSchema, eventTypes: eventTypesSchema, description: descriptionSchema },
};
const patchBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    url: urlSchema,
    eventTypes: eventTypesSchema,
    description: descriptionSchema,
    status: {
      type: 'string',
      enum: ['enabled', 'disabled'],
      description:
        'enabled again after a failure or a 410: deliveries resume with the next event (recover sends the failed ones)',
    },
  },
};

const endpointSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    url: { type: 'string' },
    eventTypes: { type: 'array', items: { type: 'string' } },
    description: { type: 'string' },
    status: { type: 'string', enum: ['enabled', 'disabled'] },
    disabledReason: { type: ['string', 'null'], enum: ['gone', 'failing', 'manual', null] },
    disabledAt: { type: ['string', 'null'], format: 'date-time' },
    failingSince: { type: ['string', 'null'], format: 'date-time' },
    previousSecretExpiresAt: { type: ['string', 'null'], format: 'date-time' },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};
const withSecret: JsonSchema = {
  ...endpointSchema,
  properties: {
    ...(endpointSchema.properties as object),
    secret: { type: 'string', description: 'whsec_…: shown only here; keep it to verify signatures' },
  },
};
const deliverySchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    eventId: { type: 'string', description: 'the webhook-id header of every attempt' },
    eventType: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
    attempts: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          at: { type: 'string', format: 'date-time' },
          statusCode: { type: ['integer', 'null'], description: 'null: no answer (time-out, refused connection)' },
          durationMs: { type: 'integer' },
          error: { type: ['string', 'null'] },
        },
      },
    },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

function explain(f: InputFailure): string {
  if (f.field === '(body)' && f.keyword === 'minProperties')
    return `is empty: send at least one of ${Object.keys(patchBody.properties as object).join(', ')}`;
  return f.message;
}

const refused = refusedFields(explain);

function endpoints(ctx: AppContext): WebhookEndpoints {
  const { config } = ctx.deps;
  return new WebhookEndpoints(tenantOf(ctx).tenantDb, config.webhooks, config.secretsKey);
}
const deliveries = (ctx: AppContext) => new WebhookDeliveries(tenantOf(ctx).tenantDb);

const ok = (description: string, schema?: JsonSchema) => ({ description, ...(schema ? { schema } : {}) });
const notFound404 = { description: 'not-found: no such endpoint in the tenant' };
const disabled409 = { description: 'endpoint-disabled: enable it first (PATCH status enabled)' };

const schedule = RETRY_DELAYS_MS.map((ms) =>
  ms < 60e3 ? `${ms / 1e3} s` : ms < 36e5 ? `${ms / 6e4} min` : `${ms / 36e5} h`,
);

export const webhookRoutes = defineRoutes([
  {
    method: 'get',
    path: '/webhooks/event-types',
    summary: 'The event catalog: every event type with the JSON schema of its payload',
    description:
      'Every delivery is a POST of `{type, timestamp, data: {id, sequence, resource}}` signed per the Standard Webhooks specification (webhook-id, webhook-timestamp, webhook-signature).',
    tags,
    auth: read,
    responses: {
      200: ok('`{eventTypes: [{type, description, schema}]}`', {
        type: 'object',
        properties: { eventTypes: { type: 'array', items: { type: 'object' } } },
      }),
    },
    handler: async (ctx) => {
      ctx.body = {
        eventTypes: EVENT_TYPES.map((t) => ({ type: t.type, description: t.description, schema: payloadSchema(t) })),
      };
    },
  },
  {
    method: 'post',
    path: '/webhooks',
    idempotency: 'stored',
    summary: 'Create a webhook endpoint; the answer shows its signing secret, once',
    description: `Deliveries: a POST with a 15 s time-out (WEBHOOK_TIMEOUT_MS); 2xx is success; anything else is retried after ${schedule.join(', ')} (each ±20 %), about three days; a 429 or 503 with Retry-After is retried when it says (up to ${MAX_RETRY_AFTER_MS / 36e5} h); 410 disables the endpoint; an endpoint failing for five days in a row is disabled and a webhook.endpoint_disabled event tells the other endpoints.`,
    tags,
    auth: update,
    body: createBody,
    invalid: { render: refused },
    responses: {
      201: ok('the endpoint with `secret` (Location: /webhooks/{id})', withSecret),
      400: { description: 'validation-error naming the field: an unknown event type, a refused url' },
    },
    handler: async (ctx) => {
      const { doc, secret } = await endpoints(ctx).create(validBody<EndpointInput>(ctx), createdId(ctx, 'we'));
      ctx.status = 201;
      ctx.set('Location', `/webhooks/${doc._id}`);
      ctx.body = { ...presentEndpoint(doc), secret };
    },
  },
  {
    method: 'get',
    path: '/webhooks',
    summary: "The tenant's webhook endpoints, newest first",
    tags,
    auth: read,
    responses: {
      200: ok('`{webhooks: [endpoint]}`', {
        type: 'object',
        properties: { webhooks: { type: 'array', items: endpointSchema } },
      }),
    },
    handler: async (ctx) => {
      ctx.body = { webhooks: (await endpoints(ctx).list()).map(presentEndpoint) };
    },
  },
  {
    method: 'get',
    path: '/webhooks/:id',
    summary: 'Read a webhook endpoint (never its secret)',
    tags,
    auth: read,
    responses: { 200: ok('the endpoint', endpointSchema), 404: notFound404 },
    handler: async (ctx) => {
      ctx.body = presentEndpoint(await endpoints(ctx).require(ctx.params.id));
    },
  },
  {
    method: 'patch',
    path: '/webhooks/:id',
    summary: 'Change an endpoint: url, eventTypes, description, status',
    tags,
    auth: update,
    body: patchBody,
    invalid: { render: refused },
    responses: {
      200: ok('the endpoint', endpointSchema),
      400: { description: 'validation-error naming the field' },
      404: notFound404,
    },
    handler: async (ctx) => {
      ctx.body = presentEndpoint(await endpoints(ctx).update(ctx.params.id, validBody<EndpointPatch>(ctx)));
    },
  },
  {
    method: 'delete',
    path: '/webhooks/:id',
    summary: 'Delete an endpoint: nothing more is delivered to it',
    tags,
    auth: update,
    responses: {
      200: ok('`{success: true, message}`', {
        type: 'object',
        properties: { success: { type: 'boolean' }, message: { type: 'string' } },
      }),
      404: notFound404,
    },
    handler: async (ctx) => {
      const doc = await endpoints(ctx).delete(ctx.params.id);
      ctx.body = { success: true, message: `Webhook endpoint ${doc._id} deleted` };
    },
  },
  {
    method: 'post',
    path: '/webhooks/:id/rotate-secret',
    idempotency: 'stored',
    summary: 'A new signing secret; the old one keeps signing for an overlap',
    description:
      'During the overlap every delivery carries two signatures (new first) in webhook-signature, so receivers can switch to the new secret at their pace. overlapSeconds defaults to WEBHOOK_SECRET_OVERLAP_SECONDS (24 h); 0 ends the old secret at once. Secrets rotated out earlier stop at once.',
    tags,
    auth: update,
    body: {
      type: 'object',
      additionalProperties: false,
      properties: { overlapSeconds: { type: 'integer', minimum: 0, maximum: MAX_OVERLAP_SECONDS } },
    },
    bodyRequired: false, // a bare POST rotates with the default overlap
    invalid: { render: refused },
    responses: { 200: ok('the endpoint with its new `secret`', withSecret), 404: notFound404 },
    handler: async (ctx) => {
      const body = (validBody<{ overlapSeconds?: number }>(ctx) ?? {}) as { overlapSeconds?: number };
      const overlap = body.overlapSeconds ?? ctx.deps.config.webhooks.secretOverlapSeconds;
      const { doc, secret } = await endpoints(ctx).rotate(ctx.params.id, overlap);
      ctx.body = { ...presentEndpoint(doc), secret };
    },
  },
  {
    method: 'post',
    path: '/webhooks/:id/test',
    idempotency: 'stored',
    summary: 'Send a webhook.test event to this endpoint',
    tags,
    auth: update,
    responses: {
      202: ok('`{eventId, deliveryId}`: follow it in GET /webhooks/{id}/deliveries', {
        type: 'object',
        properties: { eventId: { type: 'string' }, deliveryId: { type: 'string' } },
      }),
      404: notFound404,
      409: disabled409,
    },
    handler: async (ctx) => {
      const endpoint = await endpoints(ctx).require(ctx.params.id);
      ctx.status = 202;
      ctx.body = await deliveries(ctx).test(endpoint);
    },
  },
  {
    method: 'get',
    path: '/webhooks/:id/deliveries',
    summary: "The endpoint's deliveries, newest first, each with every attempt",
    tags,
    auth: read,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
        page: PAGE_PARAM,
        limit: limitParam(100, 20),
      },
    },
    invalid: { render: refused },
    responses: {
      200: ok('`{deliveries, totalCount, page, limit}`', {
        type: 'object',
        properties: {
          deliveries: { type: 'array', items: deliverySchema },
          totalCount: { type: 'integer' },
          page: { type: 'integer' },
          limit: { type: 'integer' },
        },
      }),
      404: notFound404,
    },
    handler: async (ctx) => {
      const endpoint = await endpoints(ctx).require(ctx.params.id);
      const q = ctx.state.query as { page: number; limit: number; status?: string };
      const { docs, total } = await deliveries(ctx).list(endpoint._id, q);
      ctx.body = { deliveries: docs.map(presentDelivery), totalCount: total, page: q.page, limit: q.limit };
    },
  },
  {
    method: 'post',
    path: '/webhooks/:id/deliveries/:deliveryId/resend',
    idempotency: 'stored',
    summary: 'Send one delivery again (same webhook-id), whatever its status',
    tags,
    auth: update,
    responses: {
      202: ok('the delivery, pending again', deliverySchema),
      404: { description: 'not-found: no such endpoint, or no such delivery of it' },
      409: disabled409,
    },
    handler: async (ctx) => {
      const endpoint = await endpoints(ctx).require(ctx.params.id);
      ctx.status = 202;
      ctx.body = presentDelivery(await deliveries(ctx).resend(endpoint, ctx.params.deliveryId));
    },
  },
  {
    method: 'post',
    path: '/webhooks/:id/recover',
    idempotency: 'stored',
    summary: 'Send again every failed delivery of the endpoint made in a time range',
    description: `since is required, until defaults to now; at most ${RECOVER_MAX} deliveries per request (oldest first): repeat for more.`,
    tags,
    auth: update,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['since'],
      properties: {
        since: { type: 'string', format: 'date-time' },
        until: { type: 'string', format: 'date-time' },
      },
    },
    invalid: { render: refused },
    responses: {
      202: ok('`{recovered, deliveryIds}`', {
        type: 'object',
        properties: { recovered: { type: 'integer' }, deliveryIds: { type: 'array', items: { type: 'string' } } },
      }),
      400: { description: 'validation-error: since/until not date-times, or until before since' },
      404: notFound404,
      409: disabled409,
    },
    handler: async (ctx) => {
      const body = validBody<{ since: string; until?: string }>(ctx);
      const since = new Date(body.since);
      const until = body.until ? new Date(body.until) : new Date();
      if (until < since)
        // without until, it is now: the since sent is the one in the future
        throw body.until
          ? errors.invalidInput('Invalid body: until is before since', [{ field: 'until', message: 'is before since' }])
          : errors.invalidInput('Invalid body: since is in the future', [
              { field: 'since', message: 'is in the future' },
            ]);
      const endpoint = await endpoints(ctx).require(ctx.params.id);
      const done = await deliveries(ctx).recover(endpoint, since, until);
      ctx.status = 202;
      ctx.body = { recovered: done.length, deliveryIds: done.map((d) => d._id) };
    },
  },
]);

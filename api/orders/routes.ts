import { defineRoutes, type RouteSpec } from '../route';
import { createdObjectId, tenantOf, type AppContext } from '../context';
import { COUNTRY_CODES } from '../../shared/geo/countries';
import { NAMED_MOVES, ORDER_STATES, type NamedMove, type OrderState } from '../../shared/orders/lifecycle';
import type { OrderDoc } from '../../shared/orders/collections';
import { orderLinks as links, presentOrder } from '../../shared/orders/present';
import { Orders } from '../../shared/orders/service';
import { OrderMoves } from '../../shared/orders/moves';
import type { MoveOutcome } from '../../shared/orders/stock';
import { limitParam, PAGE_PARAM } from '../../shared/paging';
import { commaList } from '../../shared/products/query';
import type { JsonSchema } from '../../shared/validation';

const read = { scopes: ['orders:read' as const] };
const update = { scopes: ['orders:update' as const] };

const customerInfo: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S', description: 'must not be blank' },
    email: { type: 'string', format: 'email', maxLength: 320 },
    phone: { type: 'string', maxLength: 50 },
    company: { type: 'string', maxLength: 200 },
    taxId: { type: 'string', maxLength: 50 },
    customerId: { type: 'string', maxLength: 100 },
  },
};
const address = (required: string[]): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  required,
  properties: {
    street: { type: 'string', minLength: 1, maxLength: 300 },
    city: { type: 'string', minLength: 1, maxLength: 100 },
    state: { type: 'string', maxLength: 100 },
    zipCode: { type: 'string', minLength: 1, maxLength: 20 },
    country: { type: 'string', enum: COUNTRY_CODES, description: 'ISO 3166-1 alpha-2' },
  },
});

/** The tenant's customer an order is for (GET /customers/{id}/orders lists them). */
const customerIdSchema: JsonSchema = {
  type: 'string',
  pattern: '^[0-9a-fA-F]{24}$',
  description:
    'a customer of the tenant (POST /customers), not redacted; another value: 400 validation:invalid_input naming customerId',
};

const createBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['externalId', 'customerInfo', 'items'],
  properties: {
    externalId: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description: 'unique per tenant: a repeated create is 409, so a retry cannot make a second order',
    },
    customerInfo,
    shippingAddress: address(['street', 'city', 'zipCode', 'country']),
    notes: { type: 'string', maxLength: 5000 },
    locationId: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description: "where accepting the order takes its stock; the tenant's default location when absent",
    },
    customerId: customerIdSchema,
    items: {
      type: 'array',
      minItems: 1,
      maxItems: 500,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['sku', 'quantity'],
        properties: {
          sku: { type: 'string', minLength: 1, maxLength: 100 },
          quantity: { type: 'integer', minimum: 1, maximum: 100000 },
          price: {
            type: 'number',
            minimum: 0,
            maximum: 1e12,
            description: "unit price before modifiers; the variant's or product's price when absent",
          },
          selectedModifiers: {
            type: 'array',
            maxItems: 100,
            description:
              "modifiers chosen for the line (ids are the product's group and modifier UUIDs): validated by the product's selection rules in the tenant's time zone; their price adjustments are added to the unit price, and accepting the order consumes their materials",
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['groupId', 'modifierId'],
              properties: {
                groupId: { type: 'string', minLength: 1, maxLength: 100 },
                modifierId: { type: 'string', minLength: 1, maxLength: 100 },
                quantity: { type: 'integer', minimum: 1, maximum: 1000 },
              },
            },
          },
        },
      },
    },
  },
};

/** What PUT /orders/{id} accepts: the replaceable fields, partially. */
const patchBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    externalId: { type: 'string', minLength: 1, maxLength: 100 },
    // a nested object merges the properties sent: an empty one would record an update of nothing
    customerInfo: { ...customerInfo, required: [], minProperties: 1 },
    shippingAddress: { ...address([]), minProperties: 1 },
    notes: { type: 'string', maxLength: 5000 },
    customerId: {
      ...customerIdSchema,
      type: ['string', 'null'],
      description: `${customerIdSchema.description as string}; null unlinks the order from its customer`,
    },
  },
};

/** Fields PUT /orders/{id} refuses, and where their change belongs instead. */
const LIFECYCLE =
  'POST /orders/{orderId}/accept | reject | cancel | prepare, PUT /orders/{orderId}/status or POST /orders/{orderId}/transition';
const FORBIDDEN: Record<string, string> = {
  orderStatus: `orderStatus cannot be set by a general update: use ${LIFECYCLE}, which apply the business rules and the audit trail`,
  items:
    'items are fixed when the order is created; totals are computed from them by the server (to change the goods, cancel and create a new order)',
  subtotal: `subtotal is computed by the server from the items; it cannot be sent (lifecycle: ${LIFECYCLE})`,
  tax: `tax is computed by the server from the items and the tenant's tax rate; it cannot be sent (lifecycle: ${LIFECYCLE})`,
  total: `total is computed by the server from the items; it cannot be sent (lifecycle: ${LIFECYCLE})`,
  _id: "_id is the order's identifier, given in the path; it cannot be changed",
  updatedAt: 'updatedAt is set by the server on every update',
};

/** Every refusal of orders input: the spec has one code for all of them. */
const INVALID = 'validation:invalid_input';

/** A forbidden field answers where its change belongs, not just that it is unknown. */
const patchInvalid = {
  code: INVALID,
  rules: Object.entries(FORBIDDEN).map(([field, message]) => ({
    field,
    keyword: 'additionalProperties',
    code: INVALID,
    message,
  })),
};

function service(ctx: AppContext): Orders {
  const { principal, tenantDb } = tenantOf(ctx);
  return new Orders(ctx.deps.db, tenantDb, principal.keyId);
}

function moves(ctx: AppContext): OrderMoves {
  const { principal, tenantDb } = tenantOf(ctx);
  return new OrderMoves(ctx.deps.db, tenantDb, ctx.deps.temporal, ctx.deps.config.taskQueue, principal.keyId);
}

function moveResult(m: MoveOutcome) {
  return {
    data: {
      _id: m.orderId,
      externalId: m.externalId,
      orderStatus: m.orderStatus,
      previousStatus: m.previousStatus,
      updatedAt: m.updatedAt,
      _links: links(m.orderId, ['self']),
    },
  };
}

/** What every status move answers. */
const moveResponses = {
  200: { description: '`{data: {_id, externalId, orderStatus, previousStatus, updatedAt, _links}}`' },
  409: { description: 'orders:invalid_transition' },
};
const commentSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['comment'],
  properties: {
    comment: { type: 'string', minLength: 1, maxLength: 5000, pattern: '\\S', description: 'must not be blank' },
  },
};
const reasonBody = (required: boolean): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  ...(required ? { required: ['reason'] } : {}),
  properties: {
    reason: { type: 'string', minLength: 1, maxLength: 1000, pattern: '\\S', description: 'must not be blank' },
  },
});

const namedMoveRoutes: RouteSpec[] = (Object.keys(NAMED_MOVES) as NamedMove[]).map((move) => {
  const to = NAMED_MOVES[move];
  const needsReason = to === 'rejected' || to === 'cancelled';
  return {
    method: 'post',
    path: `/orders/:orderId/${move}`,
    summary: `Move the order to ${to}${needsReason ? ' (reason required)' : ''}`,
    tags: ['orders'],
    auth: update,
    body: reasonBody(needsReason),
    bodyRequired: needsReason,
    responses: moveResponses,
    handler: async (ctx: AppContext) => {
      const { reason } = ctx.request.body as { reason?: string };
      ctx.body = moveResult(await moves(ctx).move(ctx.params.orderId, to, move, reason));
    },
  } satisfies RouteSpec;
});

export const orderRoutes = defineRoutes([
  {
    method: 'post',
    path: '/orders',
    idempotency: 'stored',
    summary: 'Create an order; the server prices the items from the catalog and computes subtotal, tax and total',
    description:
      'customerId, when given, must name a customer of the tenant that is not redacted (400 validation:invalid_input naming customerId otherwise); the order is then listed by GET /customers/{id}/orders.',
    tags: ['orders'],
    auth: { scopes: ['orders:create'] },
    body: createBody,
    responses: { 201: { description: '`{data: order}`' }, 409: { description: 'orders:duplicate_external_id' } },
    handler: async (ctx) => {
      const doc = await service(ctx).create(ctx.request.body as never, createdObjectId(ctx));
      ctx.status = 201;
      ctx.set('Location', `/orders/${doc._id.toHexString()}`);
      ctx.body = { data: presentOrder(doc) };
    },
  },
  {
    method: 'get',
    path: '/orders',
    summary: 'List orders, newest first',
    tags: ['orders'],
    auth: read,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        status: {
          type: 'string',
          pattern: `^(${ORDER_STATES.join('|')})(,(${ORDER_STATES.join('|')}))*$`,
          description: 'comma-separated states',
        },
        externalId: { type: 'string', maxLength: 100 },
        from: { type: 'string', format: 'date-time', description: 'created at or after' },
        to: { type: 'string', format: 'date-time', description: 'created at or before' },
        page: PAGE_PARAM,
        limit: limitParam(200, 50),
      },
    },
    responses: { 200: { description: '`{data: [order], meta: {page, limit, total}}`' } },
    handler: async (ctx) => {
      const q = ctx.state.query!;
      const { docs, total } = await service(ctx).list({
        ...(q as { page: number; limit: number; externalId?: string; from?: string; to?: string }),
        status: commaList(q.status),
      });
      ctx.body = { data: docs.map(presentOrder), meta: { page: q.page, limit: q.limit, total } };
    },
  },
  {
    method: 'get',
    path: '/orders/:orderId',
    summary: 'Read an order',
    tags: ['orders'],
    auth: read,
    handler: async (ctx) => {
      ctx.body = { data: presentOrder(await service(ctx).get(ctx.params.orderId)) };
    },
  },
  {
    method: 'put',
    path: '/orders/:orderId',
    summary:
      'Partial update of externalId, customerInfo, shippingAddress, notes and customerId; only the properties sent change',
    description: `orderStatus, items, subtotal, tax, total, _id and updatedAt are refused (400): lifecycle changes go through ${LIFECYCLE}.`,
    tags: ['orders'],
    auth: update,
    body: patchBody,
    invalid: patchInvalid,
    responses: {
      200: {
        description:
          '`{data: {_id, externalId, orderStatus, <changed fields>, updatedAt, _links: {self, prepare, cancel}}}`',
      },
      409: {
        description:
          'orders:duplicate_external_id; customer-redacted (customerInfo or shippingAddress of a redacted customer’s order); orders:conflict (the order kept changing: read it again)',
      },
    },
    handler: async (ctx) => {
      const body = ctx.request.body as Record<string, unknown>;
      const doc = await service(ctx).update(ctx.params.orderId, body);
      const id = doc._id.toHexString();
      // a field the update cleared (customerId: null) is answered as null
      const changed = Object.fromEntries(Object.keys(body).map((k) => [k, doc[k as keyof OrderDoc] ?? null]));
      ctx.body = {
        data: {
          _id: id,
          externalId: doc.externalId,
          orderStatus: doc.orderStatus,
          ...changed,
          updatedAt: doc.updatedAt.toISOString(),
          _links: links(id, ['self', 'prepare', 'cancel']),
        },
      };
    },
  },
  {
    method: 'put',
    path: '/orders/:orderId/customer',
    summary: 'Replace customerInfo (name required)',
    tags: ['orders'],
    auth: update,
    body: customerInfo,
    responses: {
      200: { description: '`{data: {_id, externalId, customerInfo, updatedAt, _links: {self}}}`' },
      409: {
        description:
          'customer-redacted (the order of a redacted customer); orders:conflict (the order kept changing: read it again)',
      },
    },
    handler: async (ctx) => {
      const doc = await service(ctx).updateCustomer(ctx.params.orderId, ctx.request.body as Record<string, unknown>);
      const id = doc._id.toHexString();
      ctx.body = {
        data: {
          _id: id,
          externalId: doc.externalId,
          customerInfo: doc.customerInfo,
          updatedAt: doc.updatedAt.toISOString(),
          _links: links(id, ['self']),
        },
      };
    },
  },
  {
    method: 'post',
    path: '/orders/:orderId/comments',
    // the key is the tenant's: the same key for a comment on another order is 409, as for any
    // other request (the use case still finds a retry's comment when its first process died)
    idempotency: 'stored',
    summary:
      'Append a comment to the order history (never edited or deleted); an Idempotency-Key makes a retry add it once',
    tags: ['orders'],
    auth: update,
    body: commentSchema,
    responses: { 200: { description: '`{data: {success: true, orderId}}`' } },
    handler: async (ctx) => {
      const { comment } = ctx.request.body as { comment: string };
      const key = ctx.get('idempotency-key') || undefined;
      const c = await service(ctx).comment(ctx.params.orderId, comment, key);
      ctx.body = { data: { success: true, orderId: c.orderId } };
    },
  },
  {
    method: 'get',
    path: '/orders/:orderId/activity-log',
    summary: 'Comments and lifecycle/audit events in time order, paginated',
    tags: ['orders'],
    auth: read,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: { page: PAGE_PARAM, limit: limitParam(200, 50) },
    },
    responses: {
      200: {
        description:
          '`{data: [{id, type, actor, timestamp, details}], meta: {page, limit, total}}`; type is created, updated, customer_updated, status_changed, stock_changed or comment; actor is the key id',
      },
    },
    handler: async (ctx) => {
      const { page, limit } = ctx.state.query as { page: number; limit: number };
      const { entries, total } = await service(ctx).activity(ctx.params.orderId, { page, limit });
      ctx.body = {
        data: entries.map((e) => ({ ...e, timestamp: e.timestamp.toISOString() })),
        meta: { page, limit, total },
      };
    },
  },
  ...namedMoveRoutes,
  {
    method: 'put',
    path: '/orders/:orderId/status',
    summary: 'Move the order to `status` (same guard as the named moves; reason required for rejected and cancelled)',
    tags: ['orders'],
    auth: update,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['status'],
      properties: {
        status: { type: 'string', enum: ORDER_STATES },
        reason: { type: 'string', minLength: 1, maxLength: 1000, pattern: '\\S', description: 'must not be blank' },
      },
    },
    responses: moveResponses,
    handler: async (ctx) => {
      const { status, reason } = ctx.request.body as { status: OrderState; reason?: string };
      ctx.body = moveResult(await moves(ctx).move(ctx.params.orderId, status, 'status', reason));
    },
  },
  {
    method: 'post',
    path: '/orders/:orderId/transition',
    summary: 'Move the order to `to` (same guard as the named moves; reason required for rejected and cancelled)',
    tags: ['orders'],
    auth: update,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['to'],
      properties: {
        to: { type: 'string', enum: ORDER_STATES },
        reason: { type: 'string', minLength: 1, maxLength: 1000, pattern: '\\S', description: 'must not be blank' },
      },
    },
    responses: moveResponses,
    handler: async (ctx) => {
      const { to, reason } = ctx.request.body as { to: OrderState; reason?: string };
      ctx.body = moveResult(await moves(ctx).move(ctx.params.orderId, to, 'transition', reason));
    },
  },
]);

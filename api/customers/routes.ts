import { defineRoutes, refusedFields, type InputFailure } from '../route';
import { createdObjectId, tenantOf, validBody, type AppContext } from '../context';
import { presentOrder } from '../../shared/orders/present';
import { COUNTRY_CODES } from '../../shared/geo/countries';
import { presentCustomer, presentExport } from '../../shared/customers/present';
import { REDACTED_NAME, REDACTED_VALUE } from '../../shared/customers/redaction';
import {
  Customers,
  type CustomerInput,
  type CustomerListQuery,
  type CustomerPatch,
} from '../../shared/customers/service';
import { limitParam, PAGE_PARAM } from '../../shared/paging';
import type { JsonSchema } from '../../shared/validation';

/**
 * The tenant's customers. Paths under /customers are area 'other' (api/middleware/errors.ts),
 * so, like /channels, they answer flat: a customer object, lists as `{customers, totalCount,
 * page, limit}`, and errors as `{code, message, field?, fieldErrors?}` with 400 validation-error,
 * 404 not-found, and this area's 409s: duplicate-email, customer-has-orders, customer-redacted.
 * Orders listed here are presented exactly as the orders area presents them.
 */
const read = { scopes: ['customers:read' as const] };
const update = { scopes: ['customers:update' as const] };
/** Reads that answer orders need the orders read scope too: a customers key alone does not open the orders. */
const readWithOrders = { scopes: ['customers:read' as const, 'orders:read' as const] };
const tags = ['customers'];

// ---- schemas ---------------------------------------------------------------------------------

/** Text with something in it besides spaces. */
const NOT_BLANK = '\\S';

const nameSchema: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  pattern: NOT_BLANK,
  description: '1–200 characters, not blank; stored trimmed',
};
const emailSchema: JsonSchema = {
  type: 'string',
  format: 'email',
  maxLength: 320,
  description:
    'unique per tenant in any case (another customer with it: 409 duplicate-email); stored as sent, matched lower-cased',
};
const phoneSchema: JsonSchema = { type: 'string', minLength: 1, maxLength: 50 };
const taxIdSchema: JsonSchema = { type: 'string', minLength: 1, maxLength: 50 };
const notesSchema: JsonSchema = { type: 'string', minLength: 1, maxLength: 5000 };
const addressSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['street', 'city', 'zipCode', 'country'],
  description: "the parts an order's shippingAddress has, so an address copies into an order as it is",
  properties: {
    label: { type: 'string', minLength: 1, maxLength: 100, description: 'the customer\'s name for it ("home")' },
    street: { type: 'string', minLength: 1, maxLength: 300, pattern: NOT_BLANK },
    city: { type: 'string', minLength: 1, maxLength: 100, pattern: NOT_BLANK },
    state: { type: 'string', maxLength: 100 },
    zipCode: { type: 'string', minLength: 1, maxLength: 20, pattern: NOT_BLANK },
    country: { type: 'string', enum: COUNTRY_CODES, description: 'ISO 3166-1 alpha-2, upper case' },
  },
};
const addressesSchema: JsonSchema = { type: 'array', maxItems: 20, items: addressSchema };
const tagsSchema: JsonSchema = {
  type: 'array',
  maxItems: 50,
  items: { type: 'string', minLength: 1, maxLength: 100, pattern: NOT_BLANK },
  description: 'stored trimmed, each once',
};

const createBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: nameSchema,
    email: emailSchema,
    phone: phoneSchema,
    addresses: addressesSchema,
    taxId: taxIdSchema,
    tags: tagsSchema,
    notes: notesSchema,
  },
};

const orNull = (s: JsonSchema, description: string): JsonSchema => ({
  ...s,
  type: [s.type as string, 'null'],
  description: s.description ? `${s.description as string}; ${description}` : description,
});

const patchBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: nameSchema,
    email: orNull(emailSchema, 'null removes it (and frees it for another customer)'),
    phone: orNull(phoneSchema, 'null removes it'),
    addresses: orNull(addressesSchema, 'replaces the list; null empties it'),
    taxId: orNull(taxIdSchema, 'null removes it'),
    tags: orNull(tagsSchema, 'replaces the list; null empties it'),
    notes: orNull(notesSchema, 'null removes it'),
  },
};

const customerSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', pattern: '^[0-9a-f]{24}$' },
    name: { type: 'string', description: `"${REDACTED_NAME}" once redacted` },
    email: { type: ['string', 'null'] },
    phone: { type: ['string', 'null'] },
    addresses: { type: 'array', items: addressSchema },
    taxId: { type: ['string', 'null'] },
    tags: { type: 'array', items: { type: 'string' } },
    notes: { type: ['string', 'null'] },
    redactedAt: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'when the personal data was erased (POST /customers/{id}/redact); null while it is not',
    },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

const pageQuery = { page: PAGE_PARAM, limit: limitParam(100, 20) };

const listQuery: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    q: {
      type: 'string',
      maxLength: 200,
      description: 'text found (any case) in the name, e-mail, phone or taxId',
    },
    tag: { type: 'string', maxLength: 100, description: 'only customers with this tag (as stored)' },
    ...pageQuery,
  },
};

// ---- refused input ---------------------------------------------------------------------------

/** ajv's words where they would not say what to send; `accepted`: the names the refused object takes. */
const explainFor = (accepted: JsonSchema) => (f: InputFailure) => explain(f, accepted);
function explain(f: InputFailure, accepted: JsonSchema): string {
  if (f.keyword === 'pattern' && f.params.pattern === NOT_BLANK) return 'must not be blank';
  if (f.keyword === 'format' && f.params.format === 'email') return 'must be an e-mail address';
  if (f.field === '(body)' && f.keyword === 'minProperties')
    return `is empty: send at least one field to change: ${Object.keys(patchBody.properties as object).join(', ')}`;
  if (f.keyword === 'additionalProperties' && !f.field.includes('.'))
    return f.in === 'query'
      ? `is not a query parameter of this list; accepted: ${Object.keys(accepted.properties as object).join(', ')}`
      : `is not a known field; accepted: ${Object.keys(accepted.properties as object).join(', ')}`;
  return f.message;
}

/** Every refused field at once, in this area's words (api/route.ts refusedFields). */
const refusedBy = (accepted: JsonSchema) => refusedFields(explainFor(accepted));
const ordersQuery: JsonSchema = { type: 'object', additionalProperties: false, properties: pageQuery };

// ---- helpers ---------------------------------------------------------------------------------

function service(ctx: AppContext): Customers {
  const { principal, tenantDb } = tenantOf(ctx);
  return new Customers(tenantDb, principal.keyId);
}

const ok = (description: string, schema?: JsonSchema) => ({ description, ...(schema ? { schema } : {}) });
const notFound404 = {
  description: "not-found: no such customer in the tenant (a malformed id or another tenant's is answered the same)",
};
const listOf = (key: string, item: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: {
    [key]: { type: 'array', items: item },
    totalCount: { type: 'integer' },
    page: { type: 'integer' },
    limit: { type: 'integer' },
  },
});

// ---- routes ----------------------------------------------------------------------------------

export const customerRoutes = defineRoutes([
  {
    method: 'post',
    path: '/customers',
    idempotency: 'stored',
    summary: 'Create a customer of the tenant',
    description:
      'name is required; email is optional but unique per tenant in any case: of any number of concurrent creates with one e-mail exactly one succeeds, the others get 409 duplicate-email (field email). Flat envelope (area other).',
    tags,
    auth: update,
    body: createBody,
    invalid: { render: refusedBy(createBody) },
    responses: {
      201: ok('the customer (Location: /customers/{id})', customerSchema),
      400: { description: 'validation-error naming the field (fieldErrors)' },
      409: { description: 'duplicate-email: another customer of the tenant has this e-mail (any case)' },
    },
    handler: async (ctx) => {
      const doc = await service(ctx).create(validBody<CustomerInput>(ctx), createdObjectId(ctx));
      ctx.status = 201;
      ctx.set('Location', `/customers/${doc._id.toHexString()}`);
      ctx.body = presentCustomer(doc);
    },
  },
  {
    method: 'get',
    path: '/customers',
    summary: "List the tenant's customers, newest first, paged from 1",
    description:
      'q finds text (any case) in the name, e-mail, phone or taxId; tag keeps customers with that tag. Redacted customers are listed too.',
    tags,
    auth: read,
    query: listQuery,
    invalid: { render: refusedBy(listQuery) },
    responses: {
      200: ok('`{customers, totalCount, page, limit}`', listOf('customers', customerSchema)),
      400: { description: 'validation-error naming the parameter' },
    },
    handler: async (ctx) => {
      const q = ctx.state.query as unknown as CustomerListQuery;
      const { docs, total } = await service(ctx).list(q);
      ctx.body = { customers: docs.map(presentCustomer), totalCount: total, page: q.page, limit: q.limit };
    },
  },
  {
    method: 'get',
    path: '/customers/:id',
    summary: 'Read a customer',
    tags,
    auth: read,
    responses: { 200: ok('the customer', customerSchema), 404: notFound404 },
    handler: async (ctx) => {
      ctx.body = presentCustomer(await service(ctx).require(ctx.params.id));
    },
  },
  {
    method: 'patch',
    path: '/customers/:id',
    summary: 'Partial update: only the fields sent change; null clears an optional one',
    description:
      'Same rules as create. A new e-mail another customer has: 409 duplicate-email. A redacted customer cannot change: 409 customer-redacted.',
    tags,
    auth: update,
    body: patchBody,
    invalid: { render: refusedBy(patchBody) },
    responses: {
      200: ok('the customer', customerSchema),
      400: { description: 'validation-error naming the field (fieldErrors)' },
      404: notFound404,
      409: { description: 'duplicate-email; customer-redacted; conflict (it kept changing: read it again)' },
    },
    handler: async (ctx) => {
      ctx.body = presentCustomer(await service(ctx).update(ctx.params.id, validBody<CustomerPatch>(ctx)));
    },
  },
  {
    method: 'delete',
    path: '/customers/:id',
    summary: 'Delete a customer no order references',
    description:
      "A customer that orders reference is refused with 409 customer-has-orders: redact it instead (POST /customers/{id}/redact), which erases the personal data and keeps the orders' totals and history. Deleting frees the e-mail.",
    tags,
    auth: update,
    responses: {
      200: ok('`{success: true, message}`', {
        type: 'object',
        properties: { success: { type: 'boolean' }, message: { type: 'string' } },
      }),
      404: notFound404,
      409: { description: 'customer-has-orders' },
    },
    handler: async (ctx) => {
      const doc = await service(ctx).delete(ctx.params.id);
      ctx.body = { success: true, message: `Customer ${doc._id.toHexString()} deleted` };
    },
  },
  {
    method: 'get',
    path: '/customers/:id/orders',
    summary: 'The orders that reference the customer (customerId), newest first, paged from 1',
    description:
      'Orders appear as GET /orders/{orderId} shows them. Needs orders:read besides customers:read. Flat envelope (area other).',
    tags,
    auth: readWithOrders,
    query: ordersQuery,
    invalid: { render: refusedBy(ordersQuery) },
    responses: {
      200: ok('`{orders, totalCount, page, limit}`', listOf('orders', { type: 'object' })),
      404: notFound404,
    },
    handler: async (ctx) => {
      const q = ctx.state.query as { page: number; limit: number };
      const { docs, total } = await service(ctx).orders(ctx.params.id, q);
      ctx.body = { orders: docs.map(presentOrder), totalCount: total, page: q.page, limit: q.limit };
    },
  },
  {
    method: 'post',
    path: '/customers/:id/redact',
    summary: "Erase the customer's personal data, and that of its orders' customer fields",
    description: `The customer keeps its id, tags and dates; its name becomes "${REDACTED_NAME}", email (freed for another customer), phone, taxId, addresses and notes are removed, and redactedAt is set; it can no longer be changed (409 customer-redacted) or named by new orders. In each order referencing it, every customerInfo member becomes "${REDACTED_VALUE}" (the name "${REDACTED_NAME}") and every shippingAddress part but country becomes "${REDACTED_VALUE}"; items, totals and status history stay, and the change is an event in the order's activity log. Idempotent: a repeat answers the same customer and finishes any order an interrupted run left. No body.`,
    tags,
    auth: update,
    responses: { 200: ok('the redacted customer', customerSchema), 404: notFound404 },
    handler: async (ctx) => {
      ctx.body = presentCustomer(await service(ctx).redact(ctx.params.id));
    },
  },
  {
    method: 'get',
    path: '/customers/:id/data-export',
    summary: 'Everything stored about the customer: `{customer, orders}`',
    description:
      'customer is the stored document (internal members such as emailKey and version included); orders are every order referencing it, newest first, in full as stored (items, totals, audit trail, stock effects) with their comments. Needs orders:read besides customers:read.',
    tags,
    auth: readWithOrders,
    responses: {
      200: ok('`{customer, orders}`', {
        type: 'object',
        properties: { customer: { type: 'object' }, orders: { type: 'array', items: { type: 'object' } } },
      }),
      404: notFound404,
    },
    handler: async (ctx) => {
      ctx.body = presentExport(await service(ctx).export(ctx.params.id));
    },
  },
]);

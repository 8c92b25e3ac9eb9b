import { defineRoutes, refusedFields, type InputFailure } from '../route';
import { createdObjectId, tenantOf, type AppContext } from '../context';
import { CHANNEL_TYPES } from '../../shared/channels/channel-types';
import {
  CHANNEL_STATUSES,
  Channels,
  presentChannel,
  SECRET_MAX_LENGTH,
  SECRET_MIN_LENGTH,
  SETTING_BOUNDS,
  type ChannelInput,
  type ChannelPatch,
  type ChannelStatus,
} from '../../shared/channels/channels';
import { AppError, errors } from '../../shared/errors/catalog';
import { targetRefusal } from '../../shared/webhooks/targets';
import { limitParam, PAGE_PARAM } from '../../shared/paging';
import type { JsonSchema } from '../../shared/validation';

/**
 * CRUD of the tenant's channels. Paths under /channels are area 'other': flat `{code, message, …}`
 * errors with the default codes (400 validation-error with fieldErrors, 404 not-found).
 *
 * The signing secret is accepted on create and update and stored only encrypted; no response,
 * error message or log line carries it (error messages name the field, never echo its value).
 */
const read = { scopes: ['channels:read' as const] };
const update = { scopes: ['channels:update' as const] };
const tags = ['channels'];

/** Every accepted spelling, grouped by canonical type, for schemas and messages. */
const ACCEPTED_TYPES = CHANNEL_TYPES.map((t) =>
  t.aliases.length ? `${t.id} (or ${t.aliases.join(', ')})` : t.id,
).join(', ');

// ---- schemas ---------------------------------------------------------------------------------

/** A letter in either case; `k` also as the Kelvin sign, which lower-cases to it as resolveChannelType does. */
const anyCase = (ch: string) =>
  ch === 'k'
    ? '[kK\\u212A]'
    : /[a-z]/.test(ch)
      ? `[${ch}${ch.toUpperCase()}]`
      : ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Every spelling resolveChannelType accepts: any case, surrounding spaces allowed. */
const TYPE_PATTERN = `^\\s*(?:${CHANNEL_TYPES.flatMap((t) => [t.id, ...t.aliases])
  .map((spelling) => [...spelling].map(anyCase).join(''))
  .join('|')})\\s*$`;

/**
 * An absolute http(s) URL whose host is a DNS name or an IP address, with an optional port and
 * no credentials (the signing secret goes in `secret`). Stricter than the WHATWG URL parser
 * (no userinfo at all, no empty port, no host spelled with extra slashes or non-ASCII letters:
 * send those as punycode), and laxer only where a pattern cannot follow it (a malformed IPv6
 * literal or punycode label), which then fails when sent, like an unreachable endpoint.
 */
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const LABEL = '[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
/** The last label of a name starts with a letter: one that looks like a number is parsed as an IPv4 address. */
const TOP_LABEL = '[A-Za-z_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
const HOST = `(?:${OCTET}(?:\\.${OCTET}){3}|\\[[0-9A-Fa-f:.]+\\]|(?:${LABEL}\\.)*${TOP_LABEL}\\.?)`;
const PORT = '(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?';
const HTTP_URL_PATTERN = `^[Hh][Tt][Tt][Pp][Ss]?://${HOST}${PORT}(?:[/?#]\\S*)?$`;

const nameSchema: JsonSchema = {
  type: 'string',
  maxLength: 200,
  pattern: '\\S',
  description: 'not blank; stored trimmed',
};
const typeSchema: JsonSchema = {
  type: 'string',
  pattern: TYPE_PATTERN,
  description: `any spelling, any case, of: ${ACCEPTED_TYPES}. Stored and answered as the canonical id (the first of each group).`,
};
const statusSchema: JsonSchema = { type: 'string', enum: [...CHANNEL_STATUSES] };
const endpointUrlSchema: JsonSchema = {
  type: 'string',
  maxLength: 2048,
  pattern: HTTP_URL_PATTERN,
  description:
    'absolute http:// or https:// URL with a host (a DNS name or an IP address) and an optional port; credentials in the URL are refused (the signing secret goes in `secret`); a host resolving to an address WEBHOOK_TARGETS refuses (loopback, private, link-local) is 400',
};
const siteIdSchema: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  description: "the channel's site or marketplace (e.g. MLM)",
};
const bounded = (k: keyof typeof SETTING_BOUNDS, description: string): JsonSchema => ({
  type: 'integer',
  ...SETTING_BOUNDS[k],
  description,
});
const optionalSettings: Record<string, JsonSchema> = {
  siteId: siteIdSchema,
  rateLimitPerSecond: bounded('rateLimitPerSecond', 'requests per second the connector may send'),
  timeoutMs: bounded('timeoutMs', 'timeout of one request to the channel, in milliseconds'),
  concurrency: bounded('concurrency', 'requests in flight at once'),
};
const nullable = (s: JsonSchema): JsonSchema => ({ ...s, type: [s.type as string, 'null'] });
const secretSchema: JsonSchema = {
  type: ['string', 'null'],
  minLength: SECRET_MIN_LENGTH,
  maxLength: SECRET_MAX_LENGTH,
  writeOnly: true,
  description: `the HMAC signing secret (${SECRET_MIN_LENGTH}–${SECRET_MAX_LENGTH} characters); stored only encrypted and never answered (responses say hasSecret). On update: a string replaces it, null removes it.`,
};

const createBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type', 'settings'],
  properties: {
    name: nameSchema,
    type: typeSchema,
    status: { ...statusSchema, default: 'active' },
    settings: {
      type: 'object',
      additionalProperties: false,
      required: ['endpointUrl'],
      properties: { endpointUrl: endpointUrlSchema, ...optionalSettings },
    },
    secret: secretSchema,
  },
};

const patchBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: nameSchema,
    type: typeSchema,
    status: statusSchema,
    settings: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      description: 'only the members sent change; null removes an optional member (endpointUrl cannot be removed)',
      properties: {
        endpointUrl: endpointUrlSchema,
        ...Object.fromEntries(Object.entries(optionalSettings).map(([k, s]) => [k, nullable(s)])),
      },
    },
    secret: secretSchema,
  },
};

const channelSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', pattern: '^[0-9a-f]{24}$' },
    name: { type: 'string' },
    type: { type: 'string', enum: CHANNEL_TYPES.map((t) => t.id), description: 'canonical type id' },
    status: statusSchema,
    settings: {
      type: 'object',
      properties: {
        endpointUrl: { type: 'string' },
        siteId: { type: 'string' },
        rateLimitPerSecond: { type: 'integer' },
        timeoutMs: { type: 'integer' },
        concurrency: { type: 'integer' },
      },
    },
    hasSecret: {
      type: 'boolean',
      description: 'whether a signing secret is set (the secret itself is never answered)',
    },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

const listQuery: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    page: PAGE_PARAM,
    limit: limitParam(100, 20),
    type: { ...typeSchema, description: `only channels of this type; any spelling of: ${ACCEPTED_TYPES}` },
    status: statusSchema,
  },
};

// ---- refused input ---------------------------------------------------------------------------

/** What a failed keyword means for a field, where ajv's own words would not say what to send. */
function explain(f: InputFailure): string {
  if (f.field === 'type' && f.keyword === 'required') return `is required: one of ${ACCEPTED_TYPES}`;
  if (f.field === 'type' && f.keyword === 'pattern') return `is not a channel type; accepted: ${ACCEPTED_TYPES}`;
  if (f.field === 'name' && f.keyword === 'pattern') return 'must not be blank';
  if (f.field === 'settings.endpointUrl' && f.keyword === 'pattern')
    return 'must be an absolute http:// or https:// URL with a host and without credentials';
  if (f.field === '(body)' && f.keyword === 'minProperties')
    return `is empty: send at least one field to change: ${Object.keys(patchBody.properties as object).join(', ')}`;
  return f.message;
}

/** Every refused field at once (api/route.ts refusedFields): the messages name fields and never repeat a value, so neither the secret nor the URL is echoed. */
const refused = refusedFields(explain);

// ---- helpers ---------------------------------------------------------------------------------

/**
 * The service calls a channel's endpoint itself (publication, category suggestions, the retail
 * catalog read), so it may not point at the service's own network: the webhook targets' policy
 * (WEBHOOK_TARGETS) applies to it, with http allowed. A host that does not resolve yet is
 * accepted (a channel may be set up before its DNS); one that resolves to a refused address is
 * 400, nothing stored.
 */
async function refuseInternalEndpoint(ctx: AppContext, url: string | undefined): Promise<void> {
  if (url === undefined) return;
  const why = await targetRefusal(
    url,
    { targets: ctx.deps.config.webhooks.targets, allowHttp: true },
    { what: 'channel endpoints', unresolvable: 'allowed' },
  );
  if (why)
    throw new AppError(400, 'validation-error', `settings.endpointUrl ${why}`, {
      field: 'settings.endpointUrl',
      fieldErrors: [{ field: 'settings.endpointUrl', message: why }],
    });
}

function service(ctx: AppContext): Channels {
  return new Channels(tenantOf(ctx).tenantDb, ctx.deps.config.secretsKey);
}

/** The name as stored: without the spaces around it. */
function trimmedName<T extends { name?: string }>(body: T): T {
  return typeof body.name === 'string' ? { ...body, name: body.name.trim() } : body;
}

function notFound(id: string) {
  const shown = JSON.stringify(id.slice(0, 100));
  return errors.notFound(
    'not-found',
    /^[0-9a-f]{24}$/i.test(id)
      ? `No channel ${shown} in this tenant`
      : `No channel ${shown}: a channel id is 24 hexadecimal characters`,
  );
}

const ok = (description: string, schema?: JsonSchema) => ({ description, ...(schema ? { schema } : {}) });
const notFound404 = {
  description: "not-found: no such channel in the tenant (a malformed id or another tenant's is answered the same)",
};

// ---- routes ----------------------------------------------------------------------------------

export const channelRoutes = defineRoutes([
  {
    method: 'post',
    path: '/channels',
    idempotency: 'stored',
    summary: 'Create a channel of the tenant',
    description: `type takes any spelling of: ${ACCEPTED_TYPES} and is stored canonical. The signing secret is stored only encrypted and never answered.`,
    tags,
    auth: update,
    body: createBody,
    invalid: { render: refused },
    responses: {
      201: ok('the channel', channelSchema),
      400: { description: 'validation-error naming the field (fieldErrors)' },
    },
    handler: async (ctx) => {
      await refuseInternalEndpoint(ctx, (ctx.request.body as unknown as ChannelInput).settings?.endpointUrl);
      const doc = await service(ctx).create(
        trimmedName(ctx.request.body as unknown as ChannelInput),
        createdObjectId(ctx),
      );
      ctx.status = 201;
      ctx.set('Location', `/channels/${doc._id.toHexString()}`);
      ctx.body = presentChannel(doc);
    },
  },
  {
    method: 'get',
    path: '/channels',
    summary: "List the tenant's channels, newest first, paged from 1",
    tags,
    auth: read,
    query: listQuery,
    invalid: { render: refused },
    responses: {
      200: ok('`{channels, totalCount, page, limit}`', {
        type: 'object',
        properties: {
          channels: { type: 'array', items: channelSchema },
          totalCount: { type: 'integer' },
          page: { type: 'integer' },
          limit: { type: 'integer' },
        },
      }),
      400: { description: 'validation-error (an unknown type spelling is named with the accepted ones)' },
    },
    handler: async (ctx) => {
      const q = ctx.state.query as { page: number; limit: number; type?: string; status?: ChannelStatus };
      const { docs, total } = await service(ctx).list(q);
      ctx.body = { channels: docs.map(presentChannel), totalCount: total, page: q.page, limit: q.limit };
    },
  },
  {
    method: 'get',
    path: '/channels/:id',
    summary: 'Read a channel',
    tags,
    auth: read,
    responses: { 200: ok('the channel', channelSchema), 404: notFound404 },
    handler: async (ctx) => {
      const doc = await service(ctx).get(ctx.params.id);
      if (!doc) throw notFound(ctx.params.id);
      ctx.body = presentChannel(doc);
    },
  },
  {
    method: 'put',
    path: '/channels/:id',
    summary: 'Partial update: only the fields sent change',
    description:
      'Same rules as create. settings change member by member (null removes an optional member); `secret` a string replaces the signing secret, null removes it.',
    tags,
    auth: update,
    body: patchBody,
    invalid: { render: refused },
    responses: {
      200: ok('the channel', channelSchema),
      400: { description: 'validation-error naming the field (fieldErrors)' },
      404: notFound404,
    },
    handler: async (ctx) => {
      await refuseInternalEndpoint(ctx, (ctx.request.body as ChannelPatch).settings?.endpointUrl);
      const doc = await service(ctx).update(ctx.params.id, trimmedName(ctx.request.body as ChannelPatch));
      if (!doc) throw notFound(ctx.params.id);
      ctx.body = presentChannel(doc);
    },
  },
  {
    method: 'delete',
    path: '/channels/:id',
    summary: 'Delete a channel',
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
      const doc = await service(ctx).delete(ctx.params.id);
      if (!doc) throw notFound(ctx.params.id);
      ctx.body = { success: true, message: `Channel ${doc._id.toHexString()} (${doc.name}) deleted` };
    },
  },
]);

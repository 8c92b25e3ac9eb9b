import { defineRoutes } from '../route';
import { tenantOf, type AppContext } from '../context';
import { CHANNEL_TYPES, resolveChannelType } from '../../shared/channels/channel-types';
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
import { errors, type FieldError } from '../../shared/errors/catalog';
import { PAGE_PARAM, compile, summarize, toFieldErrors, type JsonSchema } from '../../shared/validation';

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

const nameSchema: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: 'not blank; stored trimmed',
};
const typeSchema: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  description: `any spelling, any case, of: ${ACCEPTED_TYPES}. Stored and answered as the canonical id (the first of each group).`,
};
const statusSchema: JsonSchema = { type: 'string', enum: [...CHANNEL_STATUSES] };
const endpointUrlSchema: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 2048,
  description:
    'absolute http:// or https:// URL with a host; credentials in the URL are refused (the signing secret goes in `secret`)',
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
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    type: { ...typeSchema, description: `only channels of this type; any spelling of: ${ACCEPTED_TYPES}` },
    status: statusSchema,
  },
};

// ---- validation ------------------------------------------------------------------------------

function unknownType(value: string): FieldError {
  return {
    field: 'type',
    message: `${JSON.stringify(value.slice(0, 100))} is not a channel type; accepted: ${ACCEPTED_TYPES}`,
  };
}

function isHttpUrl(value: string): boolean {
  if (!/^https?:\/\//i.test(value) || /\s/.test(value)) return false;
  try {
    const url = new URL(value);
    return (
      (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && !url.username && !url.password
    );
  } catch {
    return false;
  }
}

/**
 * The schema and the rules a schema cannot say (a known type spelling, an http(s) URL, a name
 * that is not blank), all reported together as one 400 validation-error with fieldErrors.
 * Messages name fields and never repeat the value of the secret or the URL.
 */
function validate(schema: JsonSchema, body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw errors.invalidInput('The body must be a JSON object', [{ field: '(body)', message: 'must be an object' }]);
  }
  const b = body as Record<string, unknown>;
  if (schema === patchBody && Object.keys(b).length === 0) {
    throw errors.invalidInput(
      `Send at least one field to change: ${Object.keys(patchBody.properties as object).join(', ')}`,
      [{ field: '(body)', message: 'is empty' }],
    );
  }
  const fn = compile(schema);
  const fe = fn(b) ? [] : toFieldErrors(fn.errors);
  for (const f of fe)
    if (f.field === 'type' && f.message === 'is required') f.message = `is required: one of ${ACCEPTED_TYPES}`;
  // the schema already reports an empty or too long value: these add only what it cannot see
  if (typeof b.name === 'string' && b.name.length > 0 && b.name.trim() === '')
    fe.push({ field: 'name', message: 'must not be blank' });
  if (typeof b.type === 'string' && b.type.length > 0 && b.type.length <= 100 && !resolveChannelType(b.type))
    fe.push(unknownType(b.type));
  const url = (b.settings as { endpointUrl?: unknown } | undefined)?.endpointUrl;
  if (typeof url === 'string' && url.length > 0 && url.length <= 2048 && !isHttpUrl(url)) {
    fe.push({
      field: 'settings.endpointUrl',
      message: 'must be an absolute http:// or https:// URL with a host and without credentials',
    });
  }
  if (fe.length) throw errors.invalidInput(`Invalid body: ${summarize(fe)}`, fe);
  if (typeof b.name === 'string') b.name = b.name.trim();
  return b;
}

// ---- helpers ---------------------------------------------------------------------------------

function service(ctx: AppContext): Channels {
  return new Channels(tenantOf(ctx).tenantDb, ctx.deps.config.secretsKey);
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
    summary: 'Create a channel of the tenant',
    description: `type takes any spelling of: ${ACCEPTED_TYPES} and is stored canonical. The signing secret is stored only encrypted and never answered.`,
    tags,
    auth: update,
    body: createBody,
    bodyValidation: 'handler',
    responses: {
      201: ok('the channel', channelSchema),
      400: { description: 'validation-error naming the field (fieldErrors)' },
    },
    handler: async (ctx) => {
      const body = validate(createBody, ctx.request.body);
      const doc = await service(ctx).create(body as unknown as ChannelInput);
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
      if (q.type !== undefined && !resolveChannelType(q.type)) {
        const fe = [unknownType(q.type)];
        throw errors.invalidInput(`Invalid query: ${summarize(fe)}`, fe);
      }
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
    bodyValidation: 'handler',
    responses: {
      200: ok('the channel', channelSchema),
      400: { description: 'validation-error naming the field (fieldErrors)' },
      404: notFound404,
    },
    handler: async (ctx) => {
      const body = validate(patchBody, ctx.request.body);
      const doc = await service(ctx).update(ctx.params.id, body as ChannelPatch);
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

import { defineRoutes, type InputFailure, type InputRule } from '../route';
import { createdId, tenantOf, type AppContext } from '../context';
import { COUNTRY_CODES } from '../../shared/geo/countries';
import {
  ADDRESS_FIELDS,
  LOCATION_STATUSES,
  LOCATION_TYPES,
  type LocationDoc,
  type LocationStatus,
  type LocationType,
} from '../../shared/locations/locations';
import {
  locationErrors,
  LocationService,
  type LocationInput,
  type LocationPatch,
} from '../../shared/locations/service';
import { ZONE_CODE_PATTERN, ZONE_TYPES, type ZoneDoc, type ZoneType } from '../../shared/locations/zones';
import { limitParam, PAGE_PARAM } from '../../shared/paging';
import type { JsonSchema } from '../../shared/validation';

const read = { scopes: ['locations:read' as const] };
const create = { scopes: ['locations:create' as const] };
const update = { scopes: ['locations:update' as const] };
const remove = { scopes: ['locations:delete' as const] };
const tags = ['locations'];

// ---- schemas ---------------------------------------------------------------------------------

const addressParts: Record<string, JsonSchema> = {
  street: { type: 'string', maxLength: 300 },
  city: { type: 'string', maxLength: 100 },
  state: { type: 'string', maxLength: 100 },
  postalCode: { type: 'string', maxLength: 20 },
  country: { type: 'string', enum: COUNTRY_CODES, description: 'ISO 3166-1 alpha-2, upper case' },
};
/**
 * What the spec calls missing when it is sent: null, or text that is empty or only spaces. A
 * schema refuses it with `not`, so that a rule can give it the spec's missing-… code while any
 * other wrong value (a number, an unknown word) gets the code of a wrong value.
 */
const BLANK: JsonSchema = { anyOf: [{ const: null }, { type: 'string', pattern: '^\\s*$' }] };
const notBlank = (s: JsonSchema): JsonSchema => ({ ...s, not: BLANK });
/** Text with something in it besides spaces. */
const TEXT = '\\S';

/** A part an update may clear: null or blank (an enumerated part admits '' for that too). */
const nullable = (s: JsonSchema): JsonSchema =>
  s.enum
    ? { ...s, type: ['string', 'null'], enum: [...(s.enum as unknown[]), '', null] }
    : { ...s, type: ['string', 'null'] };

const createBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type'],
  properties: {
    name: notBlank({
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: 'missing, null or blank: 400 bad-request/missing-name',
    }),
    type: notBlank({
      type: 'string',
      enum: [...LOCATION_TYPES],
      description: 'missing, null or blank: 400 bad-request/missing-type; another value: 400 bad-request/invalid-type',
    }),
    address: { type: 'object', additionalProperties: false, properties: addressParts },
    code: { type: 'string', minLength: 1, maxLength: 50, description: 'your own short code (not unique)' },
    phone: { type: 'string', maxLength: 50 },
    email: { type: 'string', format: 'email', maxLength: 320 },
    isDefault: { type: 'boolean', description: "true: this location becomes the tenant's only default" },
    status: { type: 'string', enum: [...LOCATION_STATUSES], description: 'active when absent' },
  },
};

const patchBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: notBlank({
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: 'blank or null: 400 bad-request/missing-name',
    }),
    type: notBlank({
      type: 'string',
      enum: [...LOCATION_TYPES],
      description: 'null or blank: 400 bad-request/missing-type; another value: 400 bad-request/invalid-type',
    }),
    address: {
      type: 'object',
      additionalProperties: false,
      description: 'only the parts sent change; null (or blank) clears a part',
      properties: Object.fromEntries(Object.entries(addressParts).map(([k, s]) => [k, nullable(s)])),
    },
    code: { type: ['string', 'null'], minLength: 1, maxLength: 50, description: 'null clears it' },
    phone: { type: ['string', 'null'], maxLength: 50, description: 'null clears it' },
    email: { type: ['string', 'null'], format: 'email', maxLength: 320, description: 'null clears it' },
    isDefault: {
      type: 'boolean',
      description:
        'true: set-default; false on the default location: the system location becomes the default again; false on the system location: 400 bad-request/system-location',
    },
    status: { type: 'string', enum: [...LOCATION_STATUSES] },
  },
};

const zoneBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['code', 'name', 'type'],
  properties: {
    code: notBlank({
      type: 'string',
      pattern: ZONE_CODE_PATTERN,
      description:
        'unique per location, case-insensitive (stored upper case); letters, digits, . _ -, up to 50. Missing, null or blank: 400 bad-request/missing-code',
    }),
    name: notBlank({
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: 'missing, null or blank: 400 bad-request/missing-name',
    }),
    type: notBlank({
      type: 'string',
      enum: [...ZONE_TYPES],
      description: 'missing, null or blank: 400 bad-request/missing-type; another value: 400 bad-request/invalid-type',
    }),
  },
};

const locationSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'string', enum: [...LOCATION_TYPES] },
    code: { type: ['string', 'null'] },
    address: { type: 'object', properties: Object.fromEntries(ADDRESS_FIELDS.map((f) => [f, { type: 'string' }])) },
    phone: { type: ['string', 'null'] },
    email: { type: ['string', 'null'] },
    isDefault: { type: 'boolean', description: 'exactly one location of the tenant is the default' },
    isSystem: {
      type: 'boolean',
      description: "the tenant's system location: never deleted, the default when no other is",
    },
    status: { type: 'string', enum: [...LOCATION_STATUSES] },
    managedBy: { type: ['string', 'null'], description: "the integration that manages this location's stock" },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};
const zoneSchema: JsonSchema = {
  type: 'object',
  properties: {
    locationId: { type: 'string' },
    code: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'string', enum: [...ZONE_TYPES] },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};
const listOf = (key: string, item: JsonSchema, paged: boolean): JsonSchema => ({
  type: 'object',
  properties: {
    [key]: { type: 'array', items: item },
    totalCount: { type: 'integer' },
    ...(paged ? { page: { type: 'integer' }, limit: { type: 'integer' } } : {}),
  },
});

const filterQuery = {
  q: {
    type: 'string',
    maxLength: 200,
    description: 'words that must each appear (any case) in the name or the address',
  },
  type: { type: 'string', enum: [...LOCATION_TYPES] },
  status: { type: 'string', enum: [...LOCATION_STATUSES] },
};

// ---- helpers ---------------------------------------------------------------------------------

function service(ctx: AppContext): LocationService {
  return new LocationService(tenantOf(ctx).tenantDb);
}

function present(doc: LocationDoc) {
  return {
    id: doc._id,
    name: doc.name,
    type: doc.type,
    code: doc.code ?? null,
    address: doc.address && typeof doc.address === 'object' ? doc.address : {},
    phone: doc.phone ?? null,
    email: doc.email ?? null,
    isDefault: doc.isDefault,
    isSystem: doc.isSystem,
    status: doc.status ?? 'active',
    managedBy: doc.managedBy ?? null,
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
  };
}

function presentZone(z: ZoneDoc) {
  return {
    locationId: z.locationId,
    code: z.code,
    name: z.name,
    type: z.type,
    createdAt: z.createdAt.toISOString(),
    updatedAt: z.updatedAt.toISOString(),
  };
}

// ---- refused input -----------------------------------------------------------------------------

/** A missing (or null, or blank) required member: the spec's `bad-request/missing-<field>`. */
const missing = (field: 'name' | 'type' | 'code', message = `${field} is required`): InputRule => ({
  field,
  keyword: ['required', 'not'],
  code: `bad-request/missing-${field}`,
  message,
});

/** A type that is there but not one of `allowed` (another word, or not text at all). */
const invalidType = (allowed: readonly string[]): InputRule => ({
  field: 'type',
  keyword: ['type', 'enum'],
  code: 'bad-request/invalid-type',
  message: `type must be one of ${allowed.join(', ')}`,
});

/** A member the body does not know, named with the ones it does. */
const unknownField = (schema: JsonSchema): InputRule => ({
  field: '*',
  keyword: 'additionalProperties',
  code: 'bad-request',
  message: (f: InputFailure) =>
    `Unknown field ${f.field}; accepted: ${Object.keys(schema.properties as object).join(', ')}`,
});

/** A required parameter that is absent or blank: the spec's `bad-request/missing-param`. */
const missingParam = (parameter: string, where: 'query' | 'path'): InputRule => ({
  field: parameter,
  keyword: ['required', 'pattern'],
  code: 'bad-request/missing-param',
  message: `The ${where} parameter ${parameter} is required`,
});

const MISSING_ID = 'A location id is required in the path: PUT /locations/{id}';

const ok = (description: string, schema?: JsonSchema) => ({ description, ...(schema ? { schema } : {}) });
const notFound404 = {
  description: "bad-request/not-found: no such location in the tenant (another tenant's is answered the same)",
};

// ---- routes ----------------------------------------------------------------------------------

export const locationRoutes = defineRoutes([
  {
    method: 'post',
    path: '/locations',
    idempotency: 'stored',
    summary: 'Create a location',
    description:
      "Checks, in order: name (400 bad-request/missing-name), type (400 bad-request/missing-type, bad-request/invalid-type), unknown fields and the rest of the schema (400 bad-request naming the field). `isDefault: true` makes it the tenant's only default.",
    tags,
    auth: create,
    body: createBody,
    bodyRequired: false,
    invalid: {
      rules: [missing('name'), missing('type'), invalidType(LOCATION_TYPES), unknownField(createBody)],
    },
    responses: {
      201: ok('the location', locationSchema),
      400: {
        description:
          "bad-request/missing-name, bad-request/missing-type, bad-request/invalid-type, bad-request/can't-create (isDefault with status inactive), bad-request",
      },
    },
    handler: async (ctx) => {
      const doc = await service(ctx).create(ctx.request.body as unknown as LocationInput, createdId(ctx, 'loc'));
      ctx.status = 201;
      ctx.set('Location', `/locations/${doc._id}`);
      ctx.body = present(doc);
    },
  },
  {
    method: 'get',
    path: '/locations',
    summary: "List the tenant's locations (the system location first, then oldest first), paged from 1",
    description:
      "The tenant's system location always exists (it is created on first use) and is listed like any other.",
    tags,
    auth: read,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        ...filterQuery,
        page: PAGE_PARAM,
        limit: limitParam(100, 50),
      },
    },
    responses: { 200: ok('`{locations, totalCount, page, limit}`', listOf('locations', locationSchema, true)) },
    handler: async (ctx) => {
      const q = ctx.state.query as {
        page: number;
        limit: number;
        q?: string;
        type?: LocationType;
        status?: LocationStatus;
      };
      const { docs, total } = await service(ctx).list(q);
      ctx.body = { locations: docs.map(present), totalCount: total, page: q.page, limit: q.limit };
    },
  },
  {
    method: 'put',
    path: '/locations',
    summary: 'PUT without a location id: 400 bad-request/missing-id',
    tags,
    auth: update,
    responses: { 400: { description: 'bad-request/missing-id' } },
    handler: () => {
      throw locationErrors.missingId(MISSING_ID);
    },
  },
  {
    method: 'get',
    path: '/locations/count',
    summary: "Count the tenant's locations with the list's filters",
    description:
      "A type or status the count cannot be resolved with: 400 bad-request/not-found (the spec's code for an unresolvable count).",
    tags,
    auth: read,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        q: filterQuery.q,
        type: { type: 'string', enum: [...LOCATION_TYPES], description: 'another value: 400 bad-request/not-found' },
        status: {
          type: 'string',
          enum: [...LOCATION_STATUSES],
          description: 'another value: 400 bad-request/not-found',
        },
      },
    },
    invalid: {
      // the spec's code for a count it cannot resolve
      rules: (['type', 'status'] as const).map((field) => ({
        field,
        keyword: 'enum',
        code: 'bad-request/not-found',
        message: `The count cannot be resolved: ${field} must be one of ${(field === 'type' ? LOCATION_TYPES : LOCATION_STATUSES).join(', ')}`,
      })),
    },
    responses: {
      200: ok('`{count}`', { type: 'object', properties: { count: { type: 'integer' } } }),
      400: { description: 'bad-request/not-found: the count cannot be resolved (unknown type or status)' },
    },
    handler: async (ctx) => {
      const q = ctx.state.query as { q?: string; type?: LocationType; status?: LocationStatus };
      ctx.body = { count: await service(ctx).count(q) };
    },
  },
  {
    method: 'get',
    path: '/locations/places/search',
    summary:
      "Place lookup: the tenant's locations whose name or address (street, city, state) contains every word of q (any case)",
    tags,
    auth: read,
    query: {
      type: 'object',
      additionalProperties: false,
      required: ['q'],
      properties: {
        q: {
          type: 'string',
          maxLength: 200,
          pattern: TEXT,
          description: 'missing or blank: 400 bad-request/missing-param',
        },
        limit: limitParam(100, 50),
      },
    },
    invalid: { rules: [missingParam('q', 'query')] },
    responses: {
      200: ok(
        '`{locations, totalCount}` (an empty list when nothing matches)',
        listOf('locations', locationSchema, false),
      ),
      400: { description: 'bad-request/missing-param' },
    },
    handler: async (ctx) => {
      const q = ctx.state.query as { q: string; limit: number };
      const { docs, total } = await service(ctx).searchPlaces(q.q, q.limit);
      ctx.body = { locations: docs.map(present), totalCount: total };
    },
  },
  {
    method: 'get',
    path: '/locations/places/postal-code/:postalCode',
    summary: "Place lookup by postal code: the tenant's locations with exactly this postal code (any case)",
    tags,
    auth: read,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: { limit: limitParam(100, 50) },
    },
    params: { postalCode: { type: 'string', pattern: TEXT, description: 'blank: 400 bad-request/missing-param' } },
    invalid: { rules: [missingParam('postalCode', 'path')] },
    responses: {
      200: ok('`{locations, totalCount}`', listOf('locations', locationSchema, false)),
      400: { description: 'bad-request/missing-param (blank postal code)' },
      404: { description: 'bad-request/not-found: no location of the tenant has this postal code' },
    },
    handler: async (ctx) => {
      const postalCode = ctx.params.postalCode.trim();
      const { docs, total } = await service(ctx).byPostalCode(postalCode, (ctx.state.query as { limit: number }).limit);
      if (total === 0) throw locationErrors.notFound(`No location with postal code ${postalCode}`, 'postalCode');
      ctx.body = { locations: docs.map(present), totalCount: total };
    },
  },
  {
    method: 'get',
    path: '/locations/:id',
    summary: 'Read a location',
    tags,
    auth: read,
    responses: { 200: ok('the location', locationSchema), 404: { description: 'not-found' } },
    handler: async (ctx) => {
      const id = ctx.params.id.trim();
      const doc = await service(ctx).find(id);
      if (!doc) throw locationErrors.readNotFound(id);
      ctx.body = present(doc);
    },
  },
  {
    method: 'put',
    path: '/locations/:id',
    summary: 'Partial update: only the fields sent change',
    description:
      'A blank id: 400 bad-request/missing-id. name blank: bad-request/missing-name; type: bad-request/missing-type or invalid-type. The system location keeps isDefault (clearing it: 400 bad-request/system-location), type location and status active. `isDefault: false` on the default location makes the system location the default again.',
    tags,
    auth: update,
    params: { id: { type: 'string', pattern: TEXT, description: 'blank: 400 bad-request/missing-id' } },
    body: patchBody,
    bodyRequired: false,
    invalid: {
      rules: [
        { field: 'id', keyword: 'pattern', code: 'bad-request/missing-id', message: MISSING_ID },
        missing('name', 'name cannot be blank'),
        missing('type', 'type cannot be blank'),
        invalidType(LOCATION_TYPES),
        unknownField(patchBody),
        {
          keyword: 'minProperties',
          code: 'bad-request',
          message: `Send at least one field to change: ${Object.keys(patchBody.properties as object).join(', ')}`,
        },
      ],
    },
    responses: {
      200: ok('the location', locationSchema),
      400: {
        description:
          "bad-request/missing-id, bad-request/missing-name, bad-request/missing-type, bad-request/invalid-type, bad-request/system-location, bad-request/can't-update (a location managed by an integration; the default made inactive), bad-request",
      },
      404: notFound404,
    },
    handler: async (ctx) => {
      ctx.body = present(await service(ctx).update(ctx.params.id.trim(), ctx.request.body as LocationPatch));
    },
  },
  {
    method: 'delete',
    path: '/locations/:id',
    summary: 'Delete a location and its zones',
    description:
      "The system location cannot be deleted (400 bad-request/system-location); a location that still holds stock (or is managed by an integration) is refused with 400 bad-request/can't-delete. Deleting the default location makes the system location the default.",
    tags,
    auth: remove,
    responses: {
      200: ok('`{success: true, message}`', {
        type: 'object',
        properties: { success: { type: 'boolean' }, message: { type: 'string' } },
      }),
      400: {
        description:
          "bad-request/system-location, bad-request/can't-delete (stock, open orders, transfers not yet received or counts not yet completed there)",
      },
      404: notFound404,
    },
    handler: async (ctx) => {
      const doc = await service(ctx).delete(ctx.params.id.trim());
      ctx.body = { success: true, message: `Location ${doc._id} (${doc.name}) deleted` };
    },
  },
  {
    method: 'post',
    path: '/locations/:id/set-default',
    summary: "Make the location the tenant's default; every other location loses isDefault",
    tags,
    auth: update,
    responses: {
      200: ok('the location (isDefault true)', locationSchema),
      400: { description: "bad-request/can't-update: an inactive location cannot be the default" },
      404: notFound404,
    },
    handler: async (ctx) => {
      ctx.body = present(await service(ctx).setDefault(ctx.params.id.trim()));
    },
  },
  {
    method: 'post',
    path: '/locations/:id/zones',
    idempotency: 'stored',
    summary: 'Create a zone inside the location',
    description:
      'code, name, type required (400 bad-request/missing-code, missing-name, missing-type); type must be zone (400 bad-request/invalid-type); a code already used in the location: 400 bad-request/duplicate-code.',
    tags,
    auth: create,
    body: zoneBody,
    bodyRequired: false,
    invalid: {
      rules: [missing('code'), missing('name'), missing('type'), invalidType(ZONE_TYPES), unknownField(zoneBody)],
    },
    responses: {
      201: ok('the zone', zoneSchema),
      400: {
        description:
          'bad-request/missing-code, bad-request/missing-name, bad-request/missing-type, bad-request/invalid-type, bad-request/duplicate-code, bad-request',
      },
      404: notFound404,
    },
    handler: async (ctx) => {
      const id = ctx.params.id.trim();
      const zone = await service(ctx).createZone(
        id,
        ctx.request.body as { code: string; name: string; type: ZoneType },
        ctx.state.keyedRun?.runId,
      );
      ctx.status = 201;
      ctx.set('Location', `/locations/${id}/zones/${encodeURIComponent(zone.code)}`);
      ctx.body = presentZone(zone);
    },
  },
  {
    method: 'get',
    path: '/locations/:id/zones',
    summary: 'The zones of a location, by code',
    tags,
    auth: read,
    responses: { 200: ok('`{zones, totalCount}`', listOf('zones', zoneSchema, false)), 404: notFound404 },
    handler: async (ctx) => {
      const zones = await service(ctx).listZones(ctx.params.id.trim());
      ctx.body = { zones: zones.map(presentZone), totalCount: zones.length };
    },
  },
  {
    method: 'get',
    path: '/locations/:id/zones/:code',
    summary: 'One zone of a location (code in any case); where a created zone’s Location header points',
    tags,
    auth: read,
    responses: {
      200: ok('the zone', zoneSchema),
      404: { description: 'bad-request/not-found: no such location, or no such zone in it' },
    },
    handler: async (ctx) => {
      ctx.body = presentZone(await service(ctx).getZone(ctx.params.id.trim(), ctx.params.code));
    },
  },
  {
    method: 'delete',
    path: '/locations/:id/zones/:code',
    summary: 'Delete a zone of a location (code in any case)',
    tags,
    auth: remove,
    responses: {
      200: ok('`{success: true, message}`', {
        type: 'object',
        properties: { success: { type: 'boolean' }, message: { type: 'string' } },
      }),
      404: { description: 'bad-request/not-found: no such location, or no such zone in it' },
    },
    handler: async (ctx) => {
      const zone = await service(ctx).deleteZone(ctx.params.id.trim(), ctx.params.code);
      ctx.body = { success: true, message: `Zone ${zone.code} of location ${zone.locationId} deleted` };
    },
  },
]);

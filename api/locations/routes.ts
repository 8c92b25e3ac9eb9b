import { defineRoutes } from '../route';
import { tenantOf, type AppContext } from '../context';
import { COUNTRY_CODES } from '../../shared/geo/countries';
import { errors } from '../../shared/errors/catalog';
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
import { PAGE_PARAM, compile, summarize, toFieldErrors, type JsonSchema } from '../../shared/validation';

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
const nullable = (s: JsonSchema): JsonSchema =>
  s.enum
    ? { ...s, type: ['string', 'null'], enum: [...(s.enum as unknown[]), null] }
    : { ...s, type: ['string', 'null'] };

const createBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type'],
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: 'missing or blank: 400 bad-request/missing-name',
    },
    type: {
      type: 'string',
      enum: [...LOCATION_TYPES],
      description: 'missing: 400 bad-request/missing-type; another value: 400 bad-request/invalid-type',
    },
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
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200, description: 'blank or null: 400 bad-request/missing-name' },
    type: { type: 'string', enum: [...LOCATION_TYPES] },
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
    code: {
      type: 'string',
      pattern: ZONE_CODE_PATTERN,
      description: 'unique per location, case-insensitive (stored upper case); letters, digits, . _ -, up to 50',
    },
    name: { type: 'string', minLength: 1, maxLength: 200 },
    type: { type: 'string', enum: [...ZONE_TYPES] },
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

function objectBody(ctx: AppContext): Record<string, unknown> {
  const body = ctx.request.body;
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw errors.invalidInput('The body must be a JSON object', [{ field: '(body)', message: 'must be an object' }]);
  return body as Record<string, unknown>;
}

const blank = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

/** Unknown members first (named), then the schema; both 400 `bad-request` with the fields. */
function validate(schema: JsonSchema, body: Record<string, unknown>): void {
  const known = Object.keys(schema.properties as object);
  const unknown = Object.keys(body).filter((k) => !known.includes(k));
  if (unknown.length) {
    throw errors.invalidInput(
      `Unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; accepted: ${known.join(', ')}`,
      unknown.map((field) => ({ field, message: 'is not a known field' })),
    );
  }
  const fn = compile(schema);
  if (!fn(body)) {
    const fe = toFieldErrors(fn.errors);
    throw errors.invalidInput(`Invalid body: ${summarize(fe)}`, fe);
  }
}

function checkType(value: unknown, allowed: readonly string[]): void {
  if (blank(value)) throw locationErrors.missing('type');
  if (typeof value !== 'string' || !allowed.includes(value)) throw locationErrors.invalidType(value, allowed);
}

/** The `:id` path segment, or 400 bad-request/missing-id when it is empty or blank. */
function idParam(ctx: AppContext): string {
  const id = (ctx.params.id ?? '').trim();
  if (!id) throw locationErrors.missing('id', 'A location id is required in the path: PUT /locations/{id}');
  return id;
}

const ok = (description: string, schema?: JsonSchema) => ({ description, ...(schema ? { schema } : {}) });
const notFound404 = {
  description: "bad-request/not-found: no such location in the tenant (another tenant's is answered the same)",
};

// ---- routes ----------------------------------------------------------------------------------

export const locationRoutes = defineRoutes([
  {
    method: 'post',
    path: '/locations',
    summary: 'Create a location',
    description:
      "Checks, in order: name (400 bad-request/missing-name), type (400 bad-request/missing-type, bad-request/invalid-type), unknown fields and the rest of the schema (400 bad-request naming the field). `isDefault: true` makes it the tenant's only default.",
    tags,
    auth: create,
    body: createBody,
    bodyRequired: false,
    bodyValidation: 'handler',
    responses: {
      201: ok('the location', locationSchema),
      400: {
        description:
          "bad-request/missing-name, bad-request/missing-type, bad-request/invalid-type, bad-request/can't-create (isDefault with status inactive), bad-request",
      },
    },
    handler: async (ctx) => {
      const body = objectBody(ctx);
      if (blank(body.name)) throw locationErrors.missing('name');
      checkType(body.type, LOCATION_TYPES);
      validate(createBody, body);
      const doc = await service(ctx).create(body as unknown as LocationInput);
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
        limit: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
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
      throw locationErrors.missing('id', 'A location id is required in the path: PUT /locations/{id}');
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
        type: { type: 'string', description: `one of ${LOCATION_TYPES.join(', ')}` },
        status: { type: 'string', description: `one of ${LOCATION_STATUSES.join(', ')}` },
      },
    },
    responses: {
      200: ok('`{count}`', { type: 'object', properties: { count: { type: 'integer' } } }),
      400: { description: 'bad-request/not-found: the count cannot be resolved (unknown type or status)' },
    },
    handler: async (ctx) => {
      const q = ctx.state.query as { q?: string; type?: string; status?: string };
      if (q.type !== undefined && !(LOCATION_TYPES as readonly string[]).includes(q.type)) {
        throw locationErrors.countUnresolved(`type must be one of ${LOCATION_TYPES.join(', ')}`, 'type');
      }
      if (q.status !== undefined && !(LOCATION_STATUSES as readonly string[]).includes(q.status)) {
        throw locationErrors.countUnresolved(`status must be one of ${LOCATION_STATUSES.join(', ')}`, 'status');
      }
      ctx.body = { count: await service(ctx).count(q as { q?: string; type?: LocationType; status?: LocationStatus }) };
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
      properties: {
        q: {
          type: 'string',
          maxLength: 200,
          description: 'required: missing or blank is 400 bad-request/missing-param',
        },
        limit: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
      },
    },
    responses: {
      200: ok(
        '`{locations, totalCount}` (an empty list when nothing matches)',
        listOf('locations', locationSchema, false),
      ),
      400: { description: 'bad-request/missing-param' },
    },
    handler: async (ctx) => {
      const q = ctx.state.query as { q?: string; limit: number };
      if (blank(q.q)) throw locationErrors.missingParam('q');
      const { docs, total } = await service(ctx).searchPlaces(q.q!, q.limit);
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
      properties: { limit: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
    },
    responses: {
      200: ok('`{locations, totalCount}`', listOf('locations', locationSchema, false)),
      400: { description: 'bad-request/missing-param (blank postal code)' },
      404: { description: 'bad-request/not-found: no location of the tenant has this postal code' },
    },
    handler: async (ctx) => {
      const postalCode = (ctx.params.postalCode ?? '').trim();
      if (!postalCode) throw locationErrors.missingParam('postalCode');
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
      const doc = id ? await service(ctx).find(id) : null;
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
    body: patchBody,
    bodyRequired: false,
    bodyValidation: 'handler',
    responses: {
      200: ok('the location', locationSchema),
      400: {
        description:
          "bad-request/missing-id, bad-request/missing-name, bad-request/missing-type, bad-request/invalid-type, bad-request/system-location, bad-request/can't-update (a location managed by an integration; the default made inactive), bad-request",
      },
      404: notFound404,
    },
    handler: async (ctx) => {
      const id = idParam(ctx);
      const body = objectBody(ctx);
      if ('name' in body && blank(body.name)) throw locationErrors.missing('name', 'name cannot be blank');
      if ('type' in body) checkType(body.type, LOCATION_TYPES);
      validate(patchBody, body);
      if (Object.keys(body).length === 0)
        throw errors.invalidInput(
          `Send at least one field to change: ${Object.keys(patchBody.properties as object).join(', ')}`,
          [{ field: '(body)', message: 'is empty' }],
        );
      ctx.body = present(await service(ctx).update(id, body as LocationPatch));
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
      400: { description: "bad-request/system-location, bad-request/can't-delete" },
      404: notFound404,
    },
    handler: async (ctx) => {
      const id = ctx.params.id.trim();
      if (!id) throw locationErrors.notFound('No location with a blank id');
      const doc = await service(ctx).delete(id);
      ctx.body = { success: true, message: `Location ${doc._id} (${doc.name}) deleted` };
    },
  },
  {
    method: 'post',
    path: '/locations/:id/set-default',
    summary: "Make the location the tenant's default; every other location loses isDefault",
    tags,
    auth: update,
    responses: { 200: ok('the location (isDefault true)', locationSchema), 404: notFound404 },
    handler: async (ctx) => {
      const id = ctx.params.id.trim();
      if (!id) throw locationErrors.notFound('No location with a blank id');
      ctx.body = present(await service(ctx).setDefault(id));
    },
  },
  {
    method: 'post',
    path: '/locations/:id/zones',
    summary: 'Create a zone inside the location',
    description:
      'code, name, type required (400 bad-request/missing-code, missing-name, missing-type); type must be zone (400 bad-request/invalid-type); a code already used in the location: 400 bad-request/duplicate-code.',
    tags,
    auth: create,
    body: zoneBody,
    bodyRequired: false,
    bodyValidation: 'handler',
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
      const body = objectBody(ctx);
      if (blank(body.code)) throw locationErrors.missing('code');
      if (blank(body.name)) throw locationErrors.missing('name');
      checkType(body.type, ZONE_TYPES);
      validate(zoneBody, body);
      if (!id) throw locationErrors.notFound('No location with a blank id');
      const zone = await service(ctx).createZone(id, body as { code: string; name: string; type: ZoneType });
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

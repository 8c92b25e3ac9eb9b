import type { InputFailure, InputRule } from '../route';
import { MAX_PAGE, PAGE0_PARAM, PAGE_PARAM, limitParam } from '../../shared/paging';
import { productFiltersSchema } from '../../shared/products/query';
import { MAX_PUBLICATION_PRODUCTS, OPTION_DEFAULTS } from '../../shared/publication/publication';
import { LEGACY_SELECTION_MODES, SELECTION_MODES, type SelectionMode } from '../../shared/publication/selection';
import type { JsonSchema } from '../../shared/validation';

/**
 * The publication area's request schemas, and the rules that answer what they refuse with the
 * codes and messages the spec's publication routes use (every refusal of input is `bad-request`).
 */

/** A rule of this area: every refusal is a bad-request; the message says what to send. */
const rule = (
  field: string,
  keyword: string | string[] | undefined,
  message: string | ((f: InputFailure) => string),
): InputRule => ({ field, ...(keyword ? { keyword } : {}), code: 'bad-request', message });

const OPTION_NAMES = [...Object.keys(OPTION_DEFAULTS), 'locationId'];
const FILTER_NAMES = Object.keys(productFiltersSchema.properties as Record<string, JsonSchema>);

/** The catalog's product filters, each of which may also be null: a null filter is no filter. */
const filtersSchema: JsonSchema = {
  ...productFiltersSchema,
  properties: Object.fromEntries(
    Object.entries(productFiltersSchema.properties as Record<string, JsonSchema>).map(([name, s]) => [
      name,
      { ...s, type: [s.type, 'null'] },
    ]),
  ),
};

const idList: JsonSchema = {
  type: 'array',
  maxItems: MAX_PUBLICATION_PRODUCTS,
  items: { type: 'string', minLength: 1 },
  description: 'product ids or SKUs (a variant SKU selects its product)',
};

/** The body's member `name` (mode or selectionMode) is `m`. */
const memberIs = (name: 'mode' | 'selectionMode', m: SelectionMode): JsonSchema => ({
  type: 'object',
  required: [name],
  properties: { [name]: { const: m } },
});

/** The body names this mode, in `mode` or in the legacy `selectionMode`. */
const modeIs = (m: SelectionMode): JsonSchema => ({
  anyOf: [memberIs('mode', m), ...(LEGACY_SELECTION_MODES.includes(m) ? [memberIs('selectionMode', m)] : [])],
});

const filtersRules: InputRule[] = [
  rule('filters', ['required', 'minProperties', 'type'], 'filters is required when the mode is filtered'),
  rule('filters.*', 'additionalProperties', (f) => `Unknown filter ${f.field}; accepted: ${FILTER_NAMES.join(', ')}`),
  rule('filters.**', undefined, (f) => `Invalid filters: ${f.field} ${f.message}`),
];

const unknownField = (accepted: string[]) =>
  rule('*', 'additionalProperties', (f) => `Unknown field ${f.field}; accepted: ${accepted.join(', ')}`);

export const publishBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['channelId'],
  properties: {
    channelId: { type: 'string', minLength: 1 },
    mode: { type: 'string', enum: [...SELECTION_MODES] },
    selectionMode: {
      type: 'string',
      enum: [...LEGACY_SELECTION_MODES],
      description: 'the older name of `mode` (without single); when both come they must agree',
    },
    productIds: {
      ...idList,
      description: `${idList.description as string}; required when the mode is single (one) or selected`,
    },
    filters: { ...filtersSchema, description: 'required when the mode is filtered' },
    targetMarketplaces: { type: 'array', items: { type: 'string' } },
    options: {
      type: 'object',
      additionalProperties: false,
      properties: {
        enableCategorization: { type: 'boolean', default: OPTION_DEFAULTS.enableCategorization },
        forceRecategorization: { type: 'boolean', default: OPTION_DEFAULTS.forceRecategorization },
        includeInventory: { type: 'boolean', default: OPTION_DEFAULTS.includeInventory },
        includeVariants: { type: 'boolean', default: OPTION_DEFAULTS.includeVariants },
        forceUpdate: { type: 'boolean', default: OPTION_DEFAULTS.forceUpdate },
        locationId: { type: 'string', minLength: 1, description: 'where stock is read (default: every location)' },
      },
    },
  },
  anyOf: [{ required: ['mode'] }, { required: ['selectionMode'] }],
  allOf: [
    // when both come they agree
    ...SELECTION_MODES.map((m) => ({ if: memberIs('mode', m), then: { properties: { selectionMode: { const: m } } } })),
    {
      if: modeIs('single'),
      then: { required: ['productIds'], properties: { productIds: { type: 'array', minItems: 1, maxItems: 1 } } },
    },
    {
      if: modeIs('selected'),
      then: { required: ['productIds'], properties: { productIds: { type: 'array', minItems: 1 } } },
    },
    {
      if: modeIs('filtered'),
      then: { required: ['filters'], properties: { filters: { type: 'object', minProperties: 1 } } },
    },
  ],
};

export const publishInvalid = {
  code: 'bad-request',
  rules: [
    rule('(body)', 'type', 'A JSON object body is required'),
    unknownField(Object.keys(publishBody.properties as object)),
    rule('channelId', undefined, 'channelId is required'),
    rule('mode', ['type', 'enum'], `mode must be one of ${SELECTION_MODES.join(', ')}`),
    rule('selectionMode', ['type', 'enum'], `selectionMode must be one of ${LEGACY_SELECTION_MODES.join(', ')}`),
    rule('selectionMode', 'const', 'mode and selectionMode disagree; send one of them'),
    rule('mode', 'required', `mode (or selectionMode) is required: one of ${SELECTION_MODES.join(', ')}`),
    rule('productIds', 'maxItems', (f) =>
      f.params.limit === 1
        ? 'mode single publishes exactly one product'
        : `at most ${MAX_PUBLICATION_PRODUCTS} products per publication`,
    ),
    rule('productIds.**', undefined, 'productIds (ids or SKUs) is required when the mode is single or selected'),
    ...filtersRules,
    rule('options', 'type', 'options must be an object'),
    rule('options.*', 'additionalProperties', (f) => `Unknown option ${f.field}; accepted: ${OPTION_NAMES.join(', ')}`),
    rule('options.locationId', undefined, 'options.locationId must be a location id'),
    rule('options.*', undefined, (f) => `${f.field} must be true or false`),
    rule('targetMarketplaces.**', undefined, 'targetMarketplaces must be a list of texts'),
  ],
};

export const validateBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['channelId', 'selectionMode'],
  properties: {
    channelId: { type: 'string', minLength: 1 },
    selectionMode: { type: 'string', enum: [...LEGACY_SELECTION_MODES] },
    skus: { ...idList, description: `${idList.description as string}; required when the mode is selected` },
    filters: { ...filtersSchema, description: 'required when the mode is filtered' },
    page: PAGE_PARAM,
    limit: limitParam(200, 50),
  },
  allOf: [
    { if: modeIs('selected'), then: { required: ['skus'], properties: { skus: { type: 'array', minItems: 1 } } } },
    {
      if: modeIs('filtered'),
      then: { required: ['filters'], properties: { filters: { type: 'object', minProperties: 1 } } },
    },
  ],
};

export const validateInvalid = {
  code: 'bad-request',
  rules: [
    rule('(body)', 'type', 'A JSON object body is required'),
    rule('selectionMode', 'required', `selectionMode is required: ${LEGACY_SELECTION_MODES.join(', ')}`),
    rule('selectionMode', undefined, `selectionMode must be one of ${LEGACY_SELECTION_MODES.join(', ')}`),
    rule('channelId', undefined, 'channelId is required'),
    unknownField(Object.keys(validateBody.properties as object)),
    rule('page', undefined, `page must be a whole number from 1 to ${MAX_PAGE}`),
    rule('limit', undefined, 'limit must be 1 to 200'),
    rule('skus', 'maxItems', `at most ${MAX_PUBLICATION_PRODUCTS} products per publication`),
    rule('skus.**', undefined, 'skus (ids or SKUs) is required when the mode is selected'),
    ...filtersRules,
  ],
};

export const pendingFeedsQuery: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['sku'],
  properties: {
    sku: { type: 'string', pattern: '\\S', description: 'a product SKU (case-insensitive)' },
    destination: { type: 'string', default: 'walmart', description: 'a channel type, any spelling of it' },
  },
};

export const pendingFeedsInvalid = {
  code: 'bad-request',
  rules: [
    rule('sku', undefined, 'sku is required'),
    rule('destination', undefined, 'destination must be a channel type'),
  ],
};

/** The retail-group listings page from 0, as the spec gives them. */
const groupQueryProperties: Record<string, JsonSchema> = {
  page: PAGE0_PARAM,
  limit: limitParam(100, 20),
  search: { type: 'string', maxLength: 200 },
};

export const groupQuery: JsonSchema = { type: 'object', additionalProperties: false, properties: groupQueryProperties };

export const eligibleQuery: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { ...groupQueryProperties, inStock: { type: 'boolean' } },
};

export const groupInvalid = {
  code: 'bad-request',
  rules: [
    rule('page', undefined, `page must be a whole number from 0 to ${MAX_PAGE}`),
    rule('limit', undefined, 'limit must be 1 to 100'),
    rule('inStock', undefined, 'inStock must be true or false'),
  ],
};

/** POST /products/export/{jobId}/cancel: a reason is text, refused as every publication input is. */
export const cancelInvalid = {
  code: 'bad-request',
  rules: [
    rule('(body)', 'type', 'A JSON object body is required'),
    unknownField(['reason']),
    rule('reason', undefined, 'reason must be text of at most 1000 characters'),
  ],
};

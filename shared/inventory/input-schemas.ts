import type { JsonSchema, KeywordFailure } from '../validation';
import { ADJUSTMENT_REASONS, MAX_QUANTITY } from './adjustments';
import { COUNT_TYPES, MAX_COUNT_ITEMS } from './counts';
import { REPORT_TYPES } from './reports';

/**
 * The inventory requests' bodies as JSON Schema: the API validates them with these and the
 * OpenAPI document shows them. The spec names a code per situation (`missing-sku`,
 * `invalid-stock`, …); each route maps the keywords below to those codes.
 */

/**
 * The keywords a required text fails when it is absent (`required`), null (`not`) or blank
 * (`pattern`): the spec's "missing" codes cover all three.
 */
export const ABSENT = ['required', 'not', 'pattern'];

/** A text a request must carry: absent, null or blank counts as missing (see ABSENT). */
export function requiredText(maxLength: number, description?: string): JsonSchema {
  return {
    type: 'string',
    maxLength,
    pattern: '\\S',
    not: { const: null },
    ...(description ? { description } : {}),
  };
}

/** A stock quantity: a whole number of units ≥ 0; null counts as absent (keyword `not`). */
export function quantity(description?: string, maximum?: number): JsonSchema {
  return {
    type: 'integer',
    minimum: 0,
    ...(maximum !== undefined ? { maximum } : {}),
    not: { const: null },
    ...(description ? { description } : {}),
  };
}

/** What is wrong with a quantity, from the keyword it failed ("Stock cannot be negative" is the spec's). */
export function quantityMessage(f: KeywordFailure): string {
  switch (f.keyword) {
    case 'minimum':
      return f.field.split('.').pop() === 'stock'
        ? 'Stock cannot be negative'
        : `${f.field} cannot be negative: stock cannot be negative`;
    case 'maximum':
      return `${f.field} must be at most ${String(f.params.limit)}`;
    case 'required':
    case 'not':
      return `${f.field} is required: a whole number of units`;
    default:
      return `${f.field} must be a number: a whole number of units`;
  }
}

/** PUT /inventory/location/{locationId}/product/{sku} */
export const setStockBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  required: ['stock'],
  properties: { stock: quantity('the balance to set', MAX_QUANTITY) },
};

export const MAX_BULK_ITEMS = 1000;

/** POST /inventory/bulk-update (fields beside these are ignored, as they always were). */
export const bulkSetBody: JsonSchema = {
  type: 'object',
  minProperties: 1,
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_BULK_ITEMS,
      items: {
        type: 'object',
        required: ['sku', 'stock'],
        properties: {
          sku: { type: 'string', pattern: '\\S', description: 'a product or variant SKU (case-insensitive)' },
          stock: quantity('the balance to set', MAX_QUANTITY),
          locationId: {
            type: ['string', 'null'],
            minLength: 1,
            description: 'the default location when absent or null',
          },
        },
      },
    },
  },
};

/** POST /inventory/handlers */
export const handlerBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    type: { type: 'string', minLength: 1, maxLength: 50 },
    skus: { type: 'array', maxItems: 10000, items: { type: 'string', minLength: 1, pattern: '\\S' } },
    locationIds: { type: 'array', maxItems: 1000, items: { type: 'string', minLength: 1 } },
  },
};

/** POST /inventory/adjustments */
export const createAdjustmentBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  required: ['locationId', 'sku', 'newQuantity', 'reason'],
  properties: {
    locationId: requiredText(100),
    sku: requiredText(100, 'a product or variant SKU of the tenant (case-insensitive)'),
    newQuantity: quantity('the balance the adjustment sets when approved', MAX_QUANTITY),
    reason: {
      type: 'string',
      enum: [...ADJUSTMENT_REASONS],
      pattern: '\\S',
      not: { const: null },
      description: "'sale' is reserved for automatic decrements and refused",
    },
    notes: { type: ['string', 'null'], maxLength: 5000 },
  },
};

/** POST /inventory/adjustments/{id}/reject */
export const rejectAdjustmentBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['reason'],
  properties: { reason: requiredText(1000, 'why the adjustment is rejected') },
};

/** POST /inventory/counts */
export const createCountBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  required: ['name', 'locationId', 'countType'],
  properties: {
    name: requiredText(200),
    locationId: requiredText(100),
    countType: { type: 'string', enum: [...COUNT_TYPES], pattern: '\\S', not: { const: null } },
    notes: { type: ['string', 'null'], maxLength: 5000 },
  },
};

/** PUT /inventory/counts/{id}/items */
export const countItemsBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['countItems'],
  properties: {
    countItems: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_COUNT_ITEMS,
      description: 'each SKU (in any case) at most once',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['sku', 'countedQuantity'],
        properties: {
          sku: requiredText(100),
          countedQuantity: quantity(undefined, MAX_QUANTITY),
        },
      },
    },
  },
};

/** An ISO 8601 date, or a date-time (with or without an offset). */
const dateOrDateTime: JsonSchema = {
  type: ['string', 'null'],
  anyOf: [{ format: 'date' }, { format: 'iso-date-time' }],
  description: 'an ISO 8601 date or date-time (UTC when it has no offset); a date-only `to` is the end of that day',
};

/** POST /inventory/reports */
export const reportBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  required: ['reportType'],
  properties: {
    reportType: { type: 'string', enum: [...REPORT_TYPES], pattern: '\\S', not: { const: null } },
    locationId: {
      type: ['string', 'null'],
      maxLength: 100,
      description: 'narrows the report to one location; blank or null: every location',
    },
    from: dateOrDateTime,
    to: dateOrDateTime,
  },
};

import { CURRENCIES, sku } from '../products/schema';
import { limitParam, PAGE0_PARAM } from '../paging';
import type { JsonSchema } from '../validation';
import { list, obj, text } from '../schema-builders';
import { COSTING_METHODS, RECORD_STATUSES, SUPPLY_CATEGORIES } from './collections';

/**
 * The request schemas of materials and supplies, as the OpenAPI document shows them. A create
 * fills defaults; a partial update takes the same fields without defaults, and its nested
 * objects (stockAlerts, baseUnit, expiration) are merged into what is stored.
 */

/** The most a single receipt or transfer may move, in the unit sent. */
export const MAX_QUANTITY = 1_000_000_000;

const currency: JsonSchema = { type: 'string', enum: CURRENCIES, description: 'ISO 4217 code' };
const amount: JsonSchema = { type: 'number', minimum: 0, maximum: 1e12 };
/** A unit code: no space at either end (` kg` would be a second unit beside `kg`). */
const unitCode: JsonSchema = { type: 'string', minLength: 1, maxLength: 20, pattern: '^\\S(.*\\S)?$' };

const title: JsonSchema = {
  description: 'a text, or `{value}` as records show it',
  oneOf: [text(500), obj({ value: text(500) }, ['value'])],
};

const stockAlerts = (required: boolean): JsonSchema =>
  obj(
    {
      minStock: amount,
      reorderPoint: amount,
      reorderQuantity: amount,
      alertEmails: list({ type: 'string', format: 'email', maxLength: 254 }, 20, required ? { default: [] } : {}),
      alertEnabled: { type: 'boolean', ...(required ? { default: true } : {}) },
    },
    required ? ['minStock', 'reorderPoint', 'reorderQuantity'] : [],
    required ? {} : { minProperties: 1 },
  );

const alternativeUnits: JsonSchema = list(
  obj(
    {
      code: unitCode,
      name: text(100),
      conversionFactor: {
        type: 'number',
        exclusiveMinimum: 0,
        maximum: 1e9,
        description: 'base units in one of this unit (a 25 kg bag of a material counted in kg: 25)',
      },
    },
    ['code', 'conversionFactor'],
  ),
  20,
);

const baseUnit = (required: boolean): JsonSchema =>
  obj(
    {
      code: unitCode,
      name: text(100),
      precision: {
        type: 'integer',
        minimum: 0,
        maximum: 6,
        ...(required ? { default: 3 } : {}),
        description: 'decimals kept in balances of this unit',
      },
    },
    required ? ['code', 'name'] : [],
    required ? {} : { minProperties: 1 },
  );

const expiration = (create: boolean): JsonSchema =>
  obj(
    {
      expires: { type: 'boolean', ...(create ? { default: false } : {}) },
      shelfLifeDays: { type: 'integer', minimum: 0, maximum: 36500 },
      expirationPolicy: {
        type: 'string',
        enum: ['fefo', 'costing_order'],
        ...(create ? { default: 'fefo' } : {}),
        description:
          'fefo: lots leave earliest expiry first (then in the costing order); costing_order: in the costing order alone. Under both, an expired lot never leaves.',
      },
    },
    [],
    create ? {} : { minProperties: 1 },
  );

const supplier = obj(
  {
    supplierId: text(100),
    name: { type: 'string', maxLength: 200 },
    sku: { type: 'string', maxLength: 100 },
    cost: amount,
    currency,
    leadTimeDays: { type: 'integer', minimum: 0, maximum: 3650 },
  },
  ['supplierId'],
);

const common = (create: boolean): Record<string, JsonSchema> => ({
  sku: { ...sku, ...(create ? {} : { description: 'optional; when sent it must be the SKU of the path' }) },
  title,
  description: { type: 'string', maxLength: 5000 },
  // answered null when unset, so a record read and sent back is accepted (null clears it)
  price: { type: ['number', 'null'], minimum: 0, maximum: 1e12 },
  currency: { ...currency, ...(create ? { default: 'USD' } : {}) },
  tags: list(text(100), 100, create ? { default: [] } : {}),
  status: { type: 'string', enum: [...RECORD_STATUSES], ...(create ? { default: 'active' } : {}) },
  stockAlerts: stockAlerts(create),
  alternativeUnits: { ...alternativeUnits, ...(create ? { default: [] } : {}) },
});

const materialFields = (create: boolean): Record<string, JsonSchema> => ({
  ...common(create),
  category: text(100),
  baseUnit: baseUnit(create),
  costingMethod: { type: 'string', enum: COSTING_METHODS, ...(create ? { default: 'average' } : {}) },
  initialCost: { ...amount, ...(create ? { default: 0 } : {}), description: 'cost per base unit before any receipt' },
  expiration: expiration(create),
  suppliers: list(supplier, 50, create ? { default: [] } : {}),
  lotTrackingEnabled: { type: 'boolean', ...(create ? { default: false } : {}) },
});

const supplyFields = (create: boolean): Record<string, JsonSchema> => ({
  ...common(create),
  supplyCategory: { type: 'string', enum: [...SUPPLY_CATEGORIES], ...(create ? { default: 'other' } : {}) },
  consumptionUnit: { ...unitCode, ...(create ? { default: 'pza' } : {}) },
  unitPrecision: {
    type: 'integer',
    minimum: 0,
    maximum: 6,
    ...(create ? { default: 3 } : {}),
    description: 'decimals of consumptionUnit kept in balances',
  },
  typicalUsagePerOrder: amount,
  shippingAssociation: { type: 'string', maxLength: 200 },
  preferredSupplierId: { type: 'string', maxLength: 100 },
});

export const materialCreateSchema = obj(materialFields(true), ['sku', 'title', 'baseUnit']);
export const materialPatchSchema = obj(materialFields(false), [], { minProperties: 1 });
export const supplyCreateSchema = obj(supplyFields(true), ['sku', 'title']);
export const supplyPatchSchema = obj(supplyFields(false), [], { minProperties: 1 });

const quantity: JsonSchema = {
  type: 'number',
  exclusiveMinimum: 0,
  maximum: MAX_QUANTITY,
  description: 'in `unit` (default the base unit); converted to the base unit and rounded to its precision',
};

export const receiptSchema = (kind: 'material' | 'supply'): JsonSchema =>
  obj(
    {
      quantity,
      unit: unitCode,
      ...(kind === 'material'
        ? {
            lot: obj(
              {
                lotNumber: text(100),
                costPerUnit: { ...amount, description: 'per base unit; default the current cost' },
                currency,
                expirationDate: { type: 'string', format: 'date-time' },
              },
              [],
              { description: 'required (with lotNumber) for a lot-tracked material' },
            ),
          }
        : {}),
      minStock: amount,
      reorderPoint: amount,
      reason: { type: 'string', maxLength: 500 },
    },
    ['quantity'],
  );

export const transferSchema = (kind: 'material' | 'supply'): JsonSchema =>
  obj(
    {
      [kind === 'material' ? 'materialSku' : 'supplySku']: sku,
      fromLocationId: text(100),
      toLocationId: text(100),
      quantity,
      unit: unitCode,
      reason: { type: 'string', maxLength: 500 },
    },
    [kind === 'material' ? 'materialSku' : 'supplySku', 'fromLocationId', 'toLocationId', 'quantity'],
  );

/** The materials and supplies lists page from 0, 50 at a time by default, as the spec gives them. */
const LIMIT_PARAM = limitParam(200, 50);

export const listQuerySchema: JsonSchema = {
  type: 'object',
  properties: {
    page: PAGE0_PARAM,
    limit: LIMIT_PARAM,
    category: { type: 'string', minLength: 1, maxLength: 100 },
    status: { type: 'string', enum: [...RECORD_STATUSES] },
    term: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      pattern: '\\S',
      description: 'part of the SKU or the title, any case',
    },
  },
};

export const alertsQuerySchema: JsonSchema = {
  type: 'object',
  properties: {
    page: PAGE0_PARAM,
    limit: LIMIT_PARAM,
    status: { type: 'string', enum: ['open', 'closed', 'all'], default: 'all' },
    locationId: { type: 'string', minLength: 1, maxLength: 100 },
  },
};

export const movementsQuerySchema: JsonSchema = {
  type: 'object',
  properties: { page: PAGE0_PARAM, limit: LIMIT_PARAM },
};

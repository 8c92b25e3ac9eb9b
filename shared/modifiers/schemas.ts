import { CURRENCIES, MODIFIER_CHANNEL_TYPES, sku } from '../products/schema';
import type { JsonSchema } from '../validation';
import { list, obj, text } from '../schema-builders';
import { DAYS, MODIFIER_TYPES, PRICE_ADJUSTMENT_TYPES } from './selection';

/**
 * The request schemas of /products/{sku}/modifiers, as the OpenAPI document shows them. The
 * input is the spec's shape (configure.ts turns it into the stored one); every object is closed.
 */

/** Most groups in a configuration, modifiers in a group, and entries in a selection. */
export const MAX_GROUPS = 50;
export const MAX_MODIFIERS = 100;
export const MAX_SELECTIONS = 200;
/** The most of one modifier a selection may ask for. */
export const MAX_QUANTITY = 1000;

const count: JsonSchema = { type: 'integer', minimum: 0, maximum: 1000 };
const hhmm: JsonSchema = { type: 'string', pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM, 24 h' };
const id: JsonSchema = { type: 'string', minLength: 1, maxLength: 100 };

const selectionRule = (required: boolean): JsonSchema =>
  obj(
    {
      minSelections: count,
      maxSelections: count,
      exactlyOne: { type: 'boolean' },
      allowDuplicates: { type: 'boolean' },
      maxPerModifier: { type: 'integer', minimum: 1, maximum: 1000 },
    },
    required ? ['minSelections', 'maxSelections'] : [],
    required ? {} : { minProperties: 1 },
  );

const priceAdjustment: JsonSchema = obj(
  {
    type: { type: 'string', enum: PRICE_ADJUSTMENT_TYPES },
    value: {
      type: 'number',
      minimum: -1e9,
      maximum: 1e9,
      'x-note':
        'fixed: added per unit (whole cents, may be negative); percentage: % of the product or variant price per unit; replace: the price instead of the base price (≥ 0, whole cents)',
    },
    currency: { type: 'string', enum: CURRENCIES, description: "ISO 4217; default and only value: the product's" },
  },
  ['type', 'value'],
);

const inventoryConsumption: JsonSchema = obj(
  {
    materialSku: { ...sku, description: 'a material or supply of the tenant (any case)' },
    quantity: { type: 'number', exclusiveMinimum: 0, maximum: 1e9 },
    unit: { type: 'string', minLength: 1, maxLength: 20, description: "one of the record's units (any case)" },
  },
  ['materialSku', 'quantity', 'unit'],
);

const modifierChannelBindings: JsonSchema = list(
  obj(
    {
      channelType: { type: 'string', enum: MODIFIER_CHANNEL_TYPES },
      externalId: { type: 'string', maxLength: 200 },
      isEnabled: { type: 'boolean', default: true },
    },
    ['channelType'],
  ),
  20,
);

const groupChannelBindings: JsonSchema = list(
  obj(
    {
      channelId: text(100),
      externalGroupId: { type: 'string', maxLength: 200 },
      isEnabled: { type: 'boolean', default: true },
    },
    ['channelId'],
  ),
  20,
);

const modifier: JsonSchema = obj(
  {
    name: text(300),
    type: { type: 'string', enum: MODIFIER_TYPES, default: 'addon' },
    sku: { ...sku, description: 'the SKU the modifier is sold as, if any (stored upper-case; not checked)' },
    priceAdjustment,
    inventoryConsumption,
    isDefault: { type: 'boolean' },
    isAvailable: { type: 'boolean' },
    sortOrder: { type: 'integer', minimum: 0, maximum: 100_000 },
    channelBindings: modifierChannelBindings,
  },
  ['name'],
);

const modifiers: JsonSchema = list(modifier, MAX_MODIFIERS, { minItems: 1 });

const groupName: JsonSchema = {
  description: 'a text, or `{value, translations[{locale, value}]}` as stored',
  oneOf: [
    text(5000),
    obj(
      {
        value: text(5000),
        translations: list(
          obj({ locale: { type: 'string', pattern: '^[a-z]{2,3}([-_][A-Za-z]{2,4})?$' }, value: text(5000) }, [
            'locale',
            'value',
          ]),
          50,
        ),
      },
      ['value'],
    ),
  ],
};

const group: JsonSchema = obj(
  {
    name: groupName,
    displayName: { type: 'string', maxLength: 2000, description: 'stored as description' },
    selectionRule: selectionRule(true),
    modifiers,
    sortOrder: { type: 'integer', minimum: 0, maximum: 100_000, description: 'stored as position' },
    active: { type: 'boolean', description: 'default true; an inactive group takes no selection' },
    channelBindings: groupChannelBindings,
  },
  ['name', 'selectionRule', 'modifiers'],
);

const conditions: JsonSchema = obj({
  variantSkus: list({ ...sku, description: 'a variant SKU of this product' }, 500, { uniqueItems: true }),
  availableHours: obj({ start: hhmm, end: hhmm }, ['start', 'end']),
  availableDays: list({ type: 'string', enum: DAYS }, 7, { minItems: 1, uniqueItems: true }),
});

export const configureSchema: JsonSchema = obj(
  {
    enabled: { type: 'boolean' },
    groups: list(group, MAX_GROUPS),
    conditions,
  },
  ['enabled', 'groups'],
);

export const groupPatchSchema: JsonSchema = obj(
  {
    name: groupName,
    displayName: { type: 'string', maxLength: 2000, description: "stored as description; '' removes it" },
    selectionRule: selectionRule(false),
    modifiers,
    sortOrder: { type: 'integer', minimum: 0, maximum: 100_000 },
    active: { type: 'boolean' },
    channelBindings: groupChannelBindings,
  },
  [],
  { minProperties: 1 },
);

export const validateSchema: JsonSchema = obj(
  {
    selections: list(
      obj(
        {
          groupId: id,
          modifierIds: list(id, MAX_SELECTIONS),
          quantities: list({ type: 'integer', minimum: 1, maximum: MAX_QUANTITY }, MAX_SELECTIONS, {
            description: 'quantities[i] is how many of modifierIds[i] (default 1 each); as many entries as modifierIds',
          }),
        },
        ['groupId', 'modifierIds'],
      ),
      MAX_SELECTIONS,
    ),
    variantSku: { ...sku, description: 'the variant ordered (its price is the base of percentage and replace)' },
  },
  ['selections'],
);

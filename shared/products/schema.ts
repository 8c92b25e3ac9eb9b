import { BINDABLE_SPELLINGS } from '../channels/channel-types';
import type { JsonSchema } from '../validation';

/**
 * The product as a client writes it (POST /products, PUT /products/{id}), as JSON Schema for ajv.
 * Rules ajv cannot express (compareAtPrice > price, SKU uniqueness, option references, bundle
 * components, metafield values by type) live in rules.ts. Every object is closed
 * (additionalProperties: false): an unknown field is a 400 naming it, never silently dropped.
 */

export const CURRENCIES = Intl.supportedValuesOf('currency');
export const STATUSES = ['active', 'disabled', 'draft'] as const;
export const PRODUCT_TYPES = ['physical', 'digital', 'service', 'bundle', 'supply', 'material'] as const;
export const CONDITIONS = [
  'new',
  'new-open-box',
  'new-oem',
  'refurbished',
  'used-like-new',
  'used-very-good',
  'used-good',
  'used-acceptable',
  'collectible-like-new',
  'collectible-very-good',
  'collectible-good',
  'collectible-acceptable',
] as const;
export const BARCODE_TYPES = ['upc', 'ean13', 'ean8', 'isbn', 'gtin14', 'code128', 'code39', 'qr', 'other'] as const;
export const METAFIELD_TYPES = [
  'string',
  'json',
  'number_integer',
  'number_decimal',
  'date',
  'date_time',
  'url',
  'boolean',
] as const;
export const BINDING_STATES = ['active', 'inactive', 'pending', 'error', 'paused'] as const;
export const MODIFIER_CHANNEL_TYPES = ['rappi', 'ubereats', 'didifood', 'mercadolibre', 'amazon', 'other'] as const;

const str = (max = 500): JsonSchema => ({ type: 'string', maxLength: max });
const nonEmpty = (max = 500): JsonSchema => ({ type: 'string', minLength: 1, maxLength: max });
// a trillion is beyond any price or cost, and keeps totals and stock valuations finite and exact in cents
const money: JsonSchema = { type: 'number', minimum: 0, maximum: 1e12 };
const currency: JsonSchema = { type: 'string', enum: CURRENCIES, description: 'ISO 4217 code' };
const id: JsonSchema = { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' };
const obj = (properties: Record<string, JsonSchema>, required: string[] = [], extra: JsonSchema = {}): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  properties,
  ...(required.length ? { required } : {}),
  ...extra,
});
const list = (items: JsonSchema, extra: JsonSchema = {}): JsonSchema => ({ type: 'array', items, ...extra });

export const sku: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  // no spaces and no control characters (a NUL could never be named in a path again)
  pattern: '^[^\\s\\u0000-\\u001f\\u007f]+$',
  description: 'stored UPPERCASE',
};

/** `{value, translations[{locale, value}]}` */
export const translated = (required = false): JsonSchema =>
  obj(
    {
      value: required ? nonEmpty(5000) : str(100_000),
      translations: list(
        obj({ locale: { type: 'string', pattern: '^[a-z]{2,3}([-_][A-Za-z]{2,4})?$' }, value: str(100_000) }, [
          'locale',
          'value',
        ]),
        {
          default: [],
          maxItems: 50,
        },
      ),
    },
    ['value'],
  );

export const priceSchema: JsonSchema = obj(
  {
    id,
    name: nonEmpty(200),
    isWholesale: { type: 'boolean', default: false },
    content: {},
    currency,
    target: { type: 'string', enum: ['customers', 'client', 'segment'] },
    channels: list(nonEmpty(100), { minItems: 1 }),
    client: nonEmpty(200),
    segment: nonEmpty(200),
  },
  ['name', 'content', 'currency', 'target'],
  {
    allOf: [
      {
        if: { properties: { target: { const: 'customers' } }, required: ['target'] },
        then: { required: ['channels'] },
      },
      { if: { properties: { target: { const: 'client' } }, required: ['target'] }, then: { required: ['client'] } },
      { if: { properties: { target: { const: 'segment' } }, required: ['target'] }, then: { required: ['segment'] } },
    ],
  },
);

export const costSchema: JsonSchema = obj(
  {
    id,
    name: str(200),
    type: { type: 'string', enum: ['money', 'rate'] },
    cost: money,
    currency,
    reason: { type: 'string', enum: ['tax', 'delivery-packaging', 'fees', 'material', 'inventory', 'custom'] },
  },
  ['type', 'cost', 'currency', 'reason'],
);

export const mediaSchema: JsonSchema = obj(
  {
    id,
    src: { type: 'string', maxLength: 2000, pattern: '^https?://\\S+$', description: 'http:// or https:// only' },
    name: nonEmpty(300),
    type: { type: 'string', enum: ['image', 'video', 'audio', 'document'], default: 'image' },
    size: { type: 'number', minimum: 0 },
    position: { type: 'integer', minimum: 0 },
    alt: translated(false),
    bindings: list(obj({ channelId: nonEmpty(100), externalId: str(200) }, ['channelId']), { default: [] }),
  },
  ['src', 'name', 'position', 'alt'],
);

export const categorySchema: JsonSchema = obj(
  {
    id: str(200),
    name: nonEmpty(300),
    channels: list(nonEmpty(100), { default: [] }),
    mappings: {
      type: 'object',
      description: 'per marketplace and country: {<marketplace>: {<country>: <category id>}}',
    },
    path: nonEmpty(1000),
    selectable: { type: 'boolean', default: true },
  },
  ['name', 'path'],
);

export const metafieldSchema: JsonSchema = obj(
  {
    namespace: str(100),
    key: nonEmpty(200),
    type: { type: 'string', enum: METAFIELD_TYPES, default: 'string' },
    value: {},
  },
  ['key', 'value'],
);

export const bindingSchema: JsonSchema = obj(
  {
    id,
    channelId: nonEmpty(100),
    handle: nonEmpty(500),
    type: {
      type: 'string',
      enum: BINDABLE_SPELLINGS,
      description: 'channel type; either spelling of a type is accepted and stored canonical',
    },
    status: { type: 'string', enum: BINDING_STATES },
    desiredStatus: { type: 'string', enum: BINDING_STATES },
    syncStatus: {
      type: 'string',
      enum: ['synced', 'pending', 'error'],
      description: 'synced is read as pending once the product is written after syncedVersion',
    },
    syncedVersion: {
      type: ['integer', 'null'],
      minimum: 1,
      description: "the product's version the channel holds, as the last publication sent it",
    },
    reservedStock: { type: 'number', minimum: 0, default: 0 },
    overrides: list({ type: 'object' }, { default: [] }),
    customValues: list({ type: 'object' }, { default: [] }),
    data: { type: 'object', description: 'channel-specific data block' },
    lastError: { type: ['string', 'null'], maxLength: 2000 },
    lastSyncedAt: { type: ['string', 'null'], format: 'date-time' },
  },
  ['channelId', 'handle', 'type'],
);

const shippingSchema: JsonSchema = obj({
  weight: { type: 'number', minimum: 0 },
  weightUnit: { type: 'string', enum: ['g', 'kg', 'lb', 'oz'] },
  dimensions: obj({
    length: { type: 'number', minimum: 0 },
    width: { type: 'number', minimum: 0 },
    height: { type: 'number', minimum: 0 },
    unit: { type: 'string', enum: ['mm', 'cm', 'm', 'in'] },
  }),
  requiresShipping: { type: 'boolean' },
  shippingClass: str(100),
});

const stockAlerts: JsonSchema = obj(
  {
    minStock: { type: 'number', minimum: 0 },
    reorderPoint: { type: 'number', minimum: 0 },
    reorderQuantity: { type: 'number', minimum: 0 },
    alertEmails: list({ type: 'string', format: 'email' }, { default: [] }),
    alertEnabled: { type: 'boolean', default: true },
  },
  ['minStock', 'reorderPoint', 'reorderQuantity'],
);

export const supplyConfigSchema: JsonSchema = obj(
  {
    supplyCategory: {
      type: 'string',
      enum: ['packaging', 'shipping', 'office', 'cleaning', 'tools', 'labels', 'other'],
      default: 'other',
    },
    consumptionUnit: { ...nonEmpty(20), default: 'pza' },
    stockAlerts,
    typicalUsagePerOrder: { type: 'number', minimum: 0 },
    shippingAssociation: str(200),
    preferredSupplierId: str(100),
  },
  ['consumptionUnit'],
);

const unit: JsonSchema = obj(
  { code: nonEmpty(20), name: nonEmpty(100), precision: { type: 'integer', minimum: 0, maximum: 6 } },
  ['code', 'name'],
);

export const materialConfigSchema: JsonSchema = obj(
  {
    baseUnit: unit,
    alternativeUnits: list(
      obj({ code: nonEmpty(20), name: nonEmpty(100), factor: { type: 'number', exclusiveMinimum: 0 } }, [
        'code',
        'factor',
      ]),
      { default: [] },
    ),
    costing: obj({ method: { type: 'string', enum: ['fifo', 'lifo', 'average', 'last_purchase'] }, currency }, [
      'method',
    ]),
    expiration: obj({
      expires: { type: 'boolean' },
      shelfLifeDays: { type: 'integer', minimum: 0 },
      expirationPolicy: { type: 'string', enum: ['fefo', 'fifo', 'discard', 'warn'] },
    }),
    suppliers: list(
      obj(
        {
          supplierId: nonEmpty(100),
          name: str(200),
          sku: str(100),
          cost: money,
          currency,
          leadTimeDays: { type: 'integer', minimum: 0 },
        },
        ['supplierId'],
      ),
      {
        default: [],
      },
    ),
    stockAlerts,
    lotTrackingEnabled: { type: 'boolean', default: false },
  },
  ['baseUnit', 'costing', 'stockAlerts'],
);

export const billOfMaterialsSchema: JsonSchema = obj(
  {
    consumptionMode: { type: 'string', enum: ['on_sale', 'on_production', 'manual'] },
    yield: obj({ quantity: { type: 'number', exclusiveMinimum: 0 }, unit: nonEmpty(20) }, ['quantity', 'unit']),
    components: list(
      obj(
        {
          materialSku: sku,
          quantity: { type: 'number', exclusiveMinimum: 0 },
          unit: nonEmpty(20),
          required: { type: 'boolean', default: true },
          sequence: { type: 'integer', minimum: 0, description: 'assigned by the server in order, from 0' },
          substitutes: list(
            obj({ materialSku: sku, conversionFactor: { type: 'number', exclusiveMinimum: 0 } }, [
              'materialSku',
              'conversionFactor',
            ]),
            { default: [] },
          ),
          notes: str(1000),
        },
        ['materialSku', 'quantity', 'unit'],
      ),
      { minItems: 1 },
    ),
    wastagePercent: { type: 'number', minimum: 0, maximum: 100 },
    preparationNotes: obj({ value: str(5000) }, ['value']),
    prepTimeMinutes: { type: 'number', minimum: 0 },
  },
  ['consumptionMode', 'yield', 'components'],
);

const channelBinding: JsonSchema = obj(
  { channelId: nonEmpty(100), externalGroupId: str(200), isEnabled: { type: 'boolean', default: true } },
  ['channelId'],
);

export const modifiersConfigSchema: JsonSchema = obj({
  enabled: { type: 'boolean', default: false },
  groups: list(
    obj(
      {
        id: { type: 'string', format: 'uuid' },
        code: { type: 'string', pattern: '^group-[0-9]+$' },
        name: translated(true),
        description: str(2000),
        selectionRule: obj(
          {
            minSelections: { type: 'integer', minimum: 0 },
            maxSelections: { type: 'integer', minimum: 0 },
            exactlyOne: { type: 'boolean' },
            allowDuplicates: { type: 'boolean' },
            maxPerModifier: { type: 'integer', minimum: 1 },
          },
          ['minSelections', 'maxSelections'],
        ),
        modifiers: list(
          obj(
            {
              id: { type: 'string', format: 'uuid' },
              code: str(100),
              name: nonEmpty(300),
              type: { type: 'string', enum: ['addon', 'option', 'removal', 'substitution'], default: 'addon' },
              sku: str(100),
              priceAdjustment: obj(
                {
                  type: { type: 'string', enum: ['fixed', 'percentage', 'replace'] },
                  value: { type: 'number' },
                  currency,
                },
                ['type', 'value'],
              ),
              inventoryConsumption: list(
                obj({ sku, quantity: { type: 'number', exclusiveMinimum: 0 }, unit: nonEmpty(20) }, [
                  'sku',
                  'quantity',
                  'unit',
                ]),
                { default: [] },
              ),
              available: { type: 'boolean', default: true },
              isDefault: { type: 'boolean', default: false },
              position: { type: 'integer', minimum: 0 },
              channelBindings: list(
                obj(
                  {
                    channelType: { type: 'string', enum: MODIFIER_CHANNEL_TYPES },
                    externalId: str(200),
                    isEnabled: { type: 'boolean', default: true },
                  },
                  ['channelType'],
                ),
                { default: [] },
              ),
            },
            ['name'],
          ),
          { minItems: 1 },
        ),
        position: { type: 'integer', minimum: 0 },
        active: { type: 'boolean', default: true },
        channelBindings: list(channelBinding, { default: [] }),
      },
      ['name', 'selectionRule', 'modifiers'],
    ),
    { default: [] },
  ),
  conditions: obj({
    variantSkus: list(sku, { default: [] }),
    availableHours: obj(
      {
        start: { type: 'string', pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$' },
        end: { type: 'string', pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$' },
      },
      ['start', 'end'],
    ),
    availableDays: list(
      { type: 'string', enum: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] },
      { uniqueItems: true },
    ),
  }),
});

export const bundleConfigSchema: JsonSchema = obj(
  {
    inventoryMode: { type: 'string', enum: ['calculated', 'reserved'], default: 'calculated' },
    components: list(
      obj(
        {
          productSku: sku,
          variantMode: { type: 'string', enum: ['fixed', 'selectable', 'any'], default: 'fixed' },
          quantity: { type: 'integer', minimum: 1, default: 1 },
          required: { type: 'boolean', default: true },
        },
        ['productSku'],
      ),
      { minItems: 1, maxItems: 100 },
    ),
  },
  ['components'],
);

const optionSchema: JsonSchema = obj({ id, name: nonEmpty(100), values: list(nonEmpty(200), { default: [] }) }, [
  'name',
]);

export const variantSchema: JsonSchema = obj(
  {
    id,
    sku,
    parentSku: sku,
    productSku: sku,
    imageId: id,
    barcode: str(100),
    barcodeType: { type: 'string', enum: BARCODE_TYPES },
    satCode: { type: 'string', pattern: '^[0-9]{8}$' },
    productType: { type: 'string', enum: ['physical', 'digital', 'service'], default: 'physical' },
    title: translated(true),
    price: money,
    priceSchemas: list(priceSchema, { default: [] }),
    cost: money,
    costs: list(costSchema, { default: [] }),
    compareAtPrice: money,
    position: { type: 'integer', minimum: 0 },
    taxable: { type: 'boolean', default: true },
    shipping: shippingSchema,
    options: list(obj({ id, name: nonEmpty(100), value: nonEmpty(200) }, ['id', 'name', 'value']), { default: [] }),
    bindings: list(obj({ id, channelId: nonEmpty(100), handle: nonEmpty(500) }, ['channelId', 'handle']), {
      default: [],
    }),
    countryOfOrigin: { type: 'string', pattern: '^[A-Z]{2}$' },
    minAlertStock: { type: ['number', 'null'], minimum: 0, default: null },
    sellIfOutOfStock: { type: 'boolean', default: false },
  },
  ['sku', 'title', 'price', 'position'],
);

export const productProperties: Record<string, JsonSchema> = {
  sku,
  status: { type: 'string', enum: STATUSES, default: 'draft' },
  productType: { type: 'string', enum: PRODUCT_TYPES, default: 'physical' },
  upc: { type: 'string', pattern: '^[0-9]{12}$', description: 'exactly 12 digits' },
  barcode: str(100),
  barcodeType: { type: 'string', enum: BARCODE_TYPES },
  categoryMap: list(obj({ domain: nonEmpty(100), value: nonEmpty(500) }, ['domain', 'value']), { default: [] }),
  condition: { type: 'string', enum: CONDITIONS },
  title: translated(true),
  description: translated(false),
  htmlDescription: translated(false),
  brand: str(200),
  model: str(200),
  productKind: str(200),
  satCode: { type: 'string', pattern: '^[0-9]{8}$', description: '8 digits (tax invoicing)' },
  price: money,
  compareAtPrice: { ...money, description: 'must be greater than price' },
  priceSchemas: list(priceSchema, { default: [] }),
  cost: money,
  costs: list(costSchema, { default: [] }),
  category: categorySchema,
  currency: { ...currency, default: 'USD' },
  taxable: { type: 'boolean', default: true },
  media: list(mediaSchema, { default: [], maxItems: 100 }),
  variants: list(variantSchema, { default: [], maxItems: 500 }),
  options: list(optionSchema, { default: [], maxItems: 20 }),
  attributes: list(
    obj({ name: nonEmpty(200), value: { type: ['string', 'number', 'boolean'] }, unit: str(50) }, ['name', 'value']),
    { default: [] },
  ),
  shipping: shippingSchema,
  seo: obj({
    metaTitle: { type: 'string', maxLength: 60 },
    metaDescription: { type: 'string', maxLength: 160 },
    slug: { type: 'string', maxLength: 200, pattern: '^[a-z0-9-]+$' },
  }),
  tags: list(nonEmpty(100), { default: [], maxItems: 100 }),
  bullets: list(str(1000), { default: [], maxItems: 7 }),
  bindings: list(bindingSchema, { default: [] }),
  bundleConfig: bundleConfigSchema,
  minAlertStock: { type: 'number', minimum: 0, default: 5 },
  sellIfOutOfStock: { type: 'boolean', default: false },
  fitmentConfig: { description: 'free-form; not validated' },
  supplyConfig: supplyConfigSchema,
  materialConfig: materialConfigSchema,
  billOfMaterials: billOfMaterialsSchema,
  modifiersConfig: modifiersConfigSchema,
  metafields: list(metafieldSchema, { default: [] }),
};

export const productInputSchema: JsonSchema = obj(productProperties, ['sku', 'title', 'price']);

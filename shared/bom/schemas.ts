import { MAX_QUANTITY } from '../materials/schemas';
import { billOfMaterialsSchema } from '../products/schema';
import type { JsonSchema } from '../validation';

/**
 * The request bodies of the bill-of-materials routes (`/products/{sku}/bom`), derived from the
 * stored shape (products/schema.ts: billOfMaterialsSchema) so that both keep the same limits. A
 * client does not send `sequence` (the server numbers components from 0 in the order sent) nor
 * `calculatedCost` (computed whenever the BOM is read). `preparationNotes` may be a plain text.
 * Rules a schema cannot express (components naming materials or supplies of the tenant in one of
 * their units, a material once among components) are the catalog's: Catalog.prepareInput.
 */

/** More components than any recipe has; each one is two primary-key reads when the BOM is checked. */
export const MAX_COMPONENTS = 100;
export const MAX_SUBSTITUTES = 10;

const stored = billOfMaterialsSchema.properties as Record<string, JsonSchema>;
const storedComponent = (stored.components as { items: JsonSchema }).items;
const { sequence: _sequence, ...componentProperties } = storedComponent.properties as Record<string, JsonSchema>;

/** A positive number no larger than any receipt may be (materials/schemas.ts MAX_QUANTITY). */
const positive = (description?: string): JsonSchema => ({
  type: 'number',
  exclusiveMinimum: 0,
  maximum: MAX_QUANTITY,
  ...(description ? { description } : {}),
});

const storedSubstitute = (componentProperties.substitutes as { items: JsonSchema }).items;

const component: JsonSchema = {
  ...storedComponent,
  properties: {
    ...componentProperties,
    quantity: positive('for one run of the BOM, in `unit`'),
    substitutes: {
      ...componentProperties.substitutes,
      items: {
        ...storedSubstitute,
        properties: {
          ...(storedSubstitute.properties as Record<string, JsonSchema>),
          conversionFactor: positive(),
        },
      },
      maxItems: MAX_SUBSTITUTES,
      description:
        'other materials or supplies that may stand in when allowed and the primary is short; conversionFactor: base units of the substitute per base unit of the primary',
    },
  },
};

const components: JsonSchema = {
  type: 'array',
  items: component,
  minItems: 1,
  maxItems: MAX_COMPONENTS,
  description: 'replaced as a whole; `sequence` is assigned from 0 in this order',
};

const storedNotes = stored.preparationNotes;
const preparationNotes: JsonSchema = {
  description: 'a text, or `{value}` as the BOM shows it',
  oneOf: [(storedNotes as { properties: Record<string, JsonSchema> }).properties.value, storedNotes],
};

const storedYield = stored.yield as { properties: Record<string, JsonSchema> };
const yieldProperties = { ...storedYield.properties, quantity: positive() };

const fields = (patch: boolean): Record<string, JsonSchema> => ({
  consumptionMode: stored.consumptionMode,
  yield: patch
    ? {
        type: 'object',
        additionalProperties: false,
        properties: yieldProperties,
        minProperties: 1,
        description: 'merged into the stored yield',
      }
    : { ...stored.yield, properties: yieldProperties, description: 'what one run of the BOM produces' },
  components,
  wastagePercent: stored.wastagePercent,
  preparationNotes,
  prepTimeMinutes: stored.prepTimeMinutes,
});

/** PUT /products/{sku}/bom: the whole bill of materials. */
export const bomAssignSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: fields(false),
  required: ['consumptionMode', 'yield', 'components'],
};

/** PATCH /products/{sku}/bom: the fields sent replace the stored ones (components as a whole; yield merged). */
export const bomPatchSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: fields(true),
  minProperties: 1,
};

/** Why some fields cannot be sent, for the refusal's message. */
export const NOT_SENT: Record<string, string> = {
  sequence: 'is assigned by the server: components are numbered from 0 in the order sent',
  calculatedCost: 'is read-only: the service computes it from the current cost of each component whenever it is read',
};

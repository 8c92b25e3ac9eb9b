import type { JsonSchema } from '../validation';
import { productProperties } from '../products/schema';
import { FORMATS } from './layouts/index';
import { FORBIDDEN_KEYS } from './read';

/**
 * The options of a CSV import, as schemas the routes declare (so the OpenAPI document shows what
 * is enforced) and as the config an async import runs with.
 */

/** The product fields an import may restrict its updates to (the SKU is how a row finds its product). */
export const UPDATABLE_FIELDS: readonly string[] = Object.keys(productProperties).filter((f) => f !== 'sku');

export const formatSchema: JsonSchema = {
  type: 'string',
  enum: [...FORMATS],
  description: `the CSV layout: one of ${FORMATS.join(', ')}`,
};

export const mappingsSchema: JsonSchema = {
  type: 'object',
  propertyNames: { not: { enum: FORBIDDEN_KEYS } },
  additionalProperties: { type: 'string', minLength: 1, maxLength: 200 },
  description: "CSV column → the layout's column name; `__proto__`, `constructor`, `prototype` are refused",
};

// an unknown field would skip every row as unchanged: refused instead
export const fieldsToUpdateSchema: JsonSchema = {
  type: 'array',
  items: { type: 'string', enum: [...UPDATABLE_FIELDS] },
  maxItems: 100,
  description: 'only these product fields change on existing products',
};

export const operationNameSchema: JsonSchema = {
  type: 'string',
  maxLength: 200,
  description: 'label in the bulk operations history',
};

export interface ImportConfig {
  format: string;
  mappings?: Record<string, string>;
  fieldsToUpdate?: string[];
  skipErrorRows: boolean;
  operationName?: string;
  createIfNotExists: boolean;
  enableSideEffects: boolean;
}

/** What an async import does about a key the config leaves out. */
export const CONFIG_DEFAULTS = {
  format: 'native',
  skipErrorRows: true,
  createIfNotExists: false,
  enableSideEffects: false,
} as const satisfies Partial<ImportConfig>;

/**
 * An async import's `config`, as the route validates it. The keys it names are the allowlist;
 * any other key (maxRows, chunkSize: the server's caps) passes validation and is then dropped by
 * `allowedConfig`, as the spec says: ignored, not refused. The schema leaves them open
 * (`additionalProperties: true`) rather than ajv removing them, because ajv's removal is an
 * option of the whole validator, not of one schema.
 */
export const importConfigSchema: JsonSchema = {
  type: 'object',
  additionalProperties: true,
  description: `async import options; keys other than these are ignored (the caps are the server's)`,
  properties: {
    format: { ...formatSchema, default: CONFIG_DEFAULTS.format },
    mappings: mappingsSchema,
    fieldsToUpdate: fieldsToUpdateSchema,
    skipErrorRows: { type: 'boolean', default: CONFIG_DEFAULTS.skipErrorRows },
    operationName: operationNameSchema,
    createIfNotExists: { type: 'boolean', default: CONFIG_DEFAULTS.createIfNotExists },
    enableSideEffects: { type: 'boolean', default: CONFIG_DEFAULTS.enableSideEffects },
  },
};

/** The config keys an async import takes: those its schema names. */
export const CONFIG_ALLOWLIST: readonly string[] = Object.keys(importConfigSchema.properties as object);

/** A validated config (importConfigSchema) cut down to the allowlist, with the defaults of what it leaves out. */
export function allowedConfig(config: Record<string, unknown> = {}): ImportConfig {
  const picked: Record<string, unknown> = {};
  for (const key of CONFIG_ALLOWLIST) if (Object.hasOwn(config, key)) picked[key] = config[key];
  return { ...CONFIG_DEFAULTS, ...picked } as ImportConfig;
}

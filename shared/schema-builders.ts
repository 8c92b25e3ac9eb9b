import type { JsonSchema } from './validation';

/** Small builders for request schemas: a non-blank text, a closed object, a bounded list. */

export const text = (max: number): JsonSchema => ({ type: 'string', minLength: 1, maxLength: max, pattern: '\\S' });

export const obj = (
  properties: Record<string, JsonSchema>,
  required: string[] = [],
  extra: JsonSchema = {},
): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  properties,
  ...(required.length ? { required } : {}),
  ...extra,
});

export const list = (items: JsonSchema, maxItems: number, extra: JsonSchema = {}): JsonSchema => ({
  type: 'array',
  items,
  maxItems,
  ...extra,
});

import type { JsonSchema } from '../validation';
import { isObject } from './fields';

/**
 * Whether a value a flow writes fits a field's schema: type, enum, lengths, pattern, bounds,
 * list items. A small checker rather than ajv, because it runs where ajv's generated code may not
 * (a workflow sandbox), on values only (flows never set whole objects), and must not fill
 * defaults into the flow. Formats and cross-field rules are left to the product rules, which
 * validate the result.
 */

const patterns = new Map<string, RegExp>();
function pattern(source: string): RegExp {
  let re = patterns.get(source);
  if (!re) patterns.set(source, (re = new RegExp(source, 'u')));
  return re;
}

function typeFits(type: string, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    default:
      return true;
  }
}

const list = (values: unknown[]) =>
  values.length > 12 ? `${values.slice(0, 12).join(', ')}, …` : values.map(String).join(', ');

/** Why `value` does not fit `schema`, or null when it does. */
export function valueProblem(schema: JsonSchema, value: unknown): string | null {
  if (value === undefined) return 'is required';
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : schema.type ? [schema.type as string] : [];
  if (types.length && !types.some((t) => typeFits(t, value))) return `must be ${types.join(' or ')}`;
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return `must be one of: ${list(schema.enum)}`;
  if (typeof value === 'string') {
    const length = [...value].length; // code points, as ajv counts
    if (typeof schema.minLength === 'number' && length < schema.minLength)
      return schema.minLength === 1 ? 'must not be empty' : `must have at least ${schema.minLength} characters`;
    if (typeof schema.maxLength === 'number' && length > schema.maxLength)
      return `must have at most ${schema.maxLength} characters`;
    if (typeof schema.pattern === 'string' && !pattern(schema.pattern).test(value))
      return `must match ${schema.pattern}${schema.description ? ` (${String(schema.description)})` : ''}`;
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) return `must be at least ${schema.minimum}`;
    if (typeof schema.maximum === 'number' && value > schema.maximum) return `must be at most ${schema.maximum}`;
    if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum)
      return `must be greater than ${schema.exclusiveMinimum}`;
    if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum)
      return `must be less than ${schema.exclusiveMaximum}`;
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems)
      return `must have at least ${schema.minItems} items`;
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems)
      return `must have at most ${schema.maxItems} items`;
    if (isObject(schema.items)) {
      for (const [i, item] of value.entries()) {
        const problem = valueProblem(schema.items, item);
        if (problem) return `item ${i} ${problem}`;
      }
    }
  }
  return null;
}

/** Whether plain data nests deeper than `max` levels (checked before walking a client's value). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (max === 0) return true;
  return Object.values(value).some((v) => nestsDeeperThan(v, max - 1));
}

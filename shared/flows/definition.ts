import type { ProductFilters } from '../products/query';
import { productFiltersSchema } from '../products/query';
import { sku } from '../products/schema';
import type { JsonSchema } from '../validation';

/**
 * A rule flow: which products (selection) and what to do to each (rules, in order). This module
 * is the contract: the TypeScript shapes and the ajv schema that checks their structure and
 * sizes. What a schema cannot check (fields exist, operators fit their types, values fit the
 * field) is flowErrors in validate.ts.
 */

export const MAX_RULES = 50;
export const MAX_ACTIONS = 50;
export const MAX_SELECTED_SKUS = 5000;
/** Groups (all / any / not) nest at most this deep; the schema spells every level out. */
export const MAX_CONDITION_DEPTH = 5;
/** Field conditions in one rule, over all its groups; counted by flowErrors. */
export const MAX_CONDITIONS = 100;
/** Values an `in` / `not_in` condition or an add / remove action takes. */
export const MAX_LIST_VALUES = 1000;

export const OPERATORS = [
  'equals',
  'not_equals',
  'in',
  'not_in',
  'contains',
  'starts_with',
  'ends_with',
  'empty',
  'not_empty',
  'greater',
  'less',
  'between',
] as const;
export type ConditionOperator = (typeof OPERATORS)[number];

export const ACTION_TYPES = ['set', 'clear', 'add', 'remove', 'copy', 'concatenate', 'replace', 'calculate'] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

export const CALCULATIONS = ['multiply', 'divide', 'add', 'subtract'] as const;
export type Calculation = (typeof CALCULATIONS)[number];

export type FlowSelection = { skus: string[] } | { filters: ProductFilters } | { all: true };

export interface FieldCondition {
  field: string;
  operator: ConditionOperator;
  value?: unknown;
  /** Text comparisons ignore case unless this is true. */
  caseSensitive?: boolean;
}
export type FlowCondition =
  FieldCondition | { all: FlowCondition[] } | { any: FlowCondition[] } | { not: FlowCondition };

export interface SetAction {
  type: 'set';
  field: string;
  value: unknown;
}
export interface ClearAction {
  type: 'clear';
  field: string;
}
export interface ListAction {
  type: 'add' | 'remove';
  field: string;
  values: unknown[];
}
export interface CopyAction {
  type: 'copy';
  field: string;
  from: string;
}
export type ConcatenatePart = { field: string } | { text: string };
export interface ConcatenateAction {
  type: 'concatenate';
  field: string;
  parts: ConcatenatePart[];
  separator?: string;
}
export interface ReplaceAction {
  type: 'replace';
  field: string;
  find: string;
  replace: string;
  caseSensitive?: boolean;
}
export type Rounding = { step: number } | { ending: number } | { decimals: number };
export interface CalculateAction {
  type: 'calculate';
  field: string;
  /** The field the calculation starts from; the target itself when absent. */
  from?: string;
  operation: Calculation;
  operand: number | { field: string };
  round?: Rounding;
}
export type FlowAction =
  SetAction | ClearAction | ListAction | CopyAction | ConcatenateAction | ReplaceAction | CalculateAction;

export interface FlowRule {
  name?: string;
  /** Absent: the rule applies to every selected product. */
  when?: FlowCondition;
  actions: FlowAction[];
}

export interface FlowDefinition {
  name?: string;
  selection: FlowSelection;
  rules: FlowRule[];
}

// ---------------------------------------------------------------------------------------------
// The ajv schema. Every object is closed; alternatives are told apart by the key they carry
// (if/then/else), so a mistake is reported once, on the field that is wrong, not as "must match
// exactly one schema" over every alternative.

const text = (maxLength: number, minLength = 0): JsonSchema => ({
  type: 'string',
  maxLength,
  ...(minLength ? { minLength } : {}),
});
const fieldPath: JsonSchema = {
  ...text(300, 1),
  description: 'a field path: price, title.value, variants.price, metafields.<namespace>.<key>',
};
const closed = (properties: Record<string, JsonSchema>, required: string[]): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  properties,
  required,
});
/** The first alternative whose key is present; the last one otherwise. */
const byKey = (alternatives: [key: string, schema: JsonSchema][], otherwise: JsonSchema): JsonSchema =>
  alternatives.reduceRight<JsonSchema>(
    (elseSchema, [key, thenSchema]) => ({ if: { required: [key] }, then: thenSchema, else: elseSchema }),
    otherwise,
  );

const scalar: JsonSchema = { type: ['string', 'number', 'boolean'], maxLength: 10_000 };

export const flowSelectionSchema: JsonSchema = {
  type: 'object',
  description: 'exactly one of: skus, filters, all',
  ...byKey(
    [
      ['skus', closed({ skus: { type: 'array', minItems: 1, maxItems: MAX_SELECTED_SKUS, items: sku } }, ['skus'])],
      ['filters', closed({ filters: productFiltersSchema }, ['filters'])],
    ],
    closed({ all: { const: true } }, ['all']),
  ),
};

const fieldConditionSchema: JsonSchema = closed(
  {
    field: fieldPath,
    operator: { type: 'string', enum: [...OPERATORS] },
    value: {
      type: ['string', 'number', 'boolean', 'array'],
      maxLength: 10_000,
      maxItems: MAX_LIST_VALUES,
      items: scalar,
      description: 'absent for empty / not_empty; a list for in / not_in; [min, max] for between',
    },
    caseSensitive: { type: 'boolean' },
  },
  ['field', 'operator'],
);

/** A condition that may hold groups `depth` levels deep; the levels below are `$defs` of one schema resource. */
function conditionNode(depth: number): JsonSchema {
  if (depth === 0) return fieldConditionSchema;
  const child: JsonSchema = { $ref: `#/$defs/condition${depth - 1}` };
  const group = (key: string) =>
    closed({ [key]: { type: 'array', minItems: 1, maxItems: MAX_CONDITIONS, items: child } }, [key]);
  return {
    type: 'object',
    ...byKey(
      [
        ['all', group('all')],
        ['any', group('any')],
        ['not', closed({ not: child }, ['not'])],
      ],
      fieldConditionSchema,
    ),
  };
}

/**
 * A `when`: a field condition, or all / any / not over conditions, at most MAX_CONDITION_DEPTH
 * groups deep. The levels are `$ref`s inside their own resource (`$id`), so each level compiles
 * once (inlined, the five levels would be 3^5 copies of a leaf) and the schema still works
 * wherever it is embedded. Embed this object itself: a copy with the same `$id` would clash in ajv.
 */
export const flowConditionSchema: JsonSchema = {
  $id: 'flow-condition.json',
  $defs: Object.fromEntries(Array.from({ length: MAX_CONDITION_DEPTH }, (_, d) => [`condition${d}`, conditionNode(d)])),
  ...conditionNode(MAX_CONDITION_DEPTH),
};

const roundingSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  maxProperties: 1,
  description: 'exactly one of: step (nearest multiple), ending (next price with these cents), decimals',
  properties: {
    step: { type: 'number', exclusiveMinimum: 0 },
    ending: { type: 'number', minimum: 0, exclusiveMaximum: 1 },
    decimals: { type: 'integer', minimum: 0, maximum: 6 },
  },
};

const listValues: JsonSchema = { type: 'array', minItems: 1, maxItems: MAX_LIST_VALUES, items: scalar };

const actionShapes: Record<ActionType, JsonSchema> = {
  set: { value: { description: 'the new value; type-checked against the field by flowErrors' } },
  clear: {},
  add: { values: listValues },
  remove: { values: listValues },
  copy: { from: fieldPath },
  concatenate: {
    parts: {
      type: 'array',
      minItems: 1,
      maxItems: 50,
      items: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        maxProperties: 1,
        description: 'exactly one of: field, text',
        properties: { field: fieldPath, text: text(1000) },
      },
    },
    separator: text(100),
  },
  replace: { find: text(1000, 1), replace: text(1000), caseSensitive: { type: 'boolean' } },
  calculate: {
    from: fieldPath,
    operation: { type: 'string', enum: [...CALCULATIONS] },
    operand: {
      type: ['number', 'object'],
      additionalProperties: false,
      required: ['field'],
      properties: { field: fieldPath },
    },
    round: roundingSchema,
  },
};
const actionRequired: Record<ActionType, string[]> = {
  set: ['value'],
  clear: [],
  add: ['values'],
  remove: ['values'],
  copy: ['from'],
  concatenate: ['parts'],
  replace: ['find', 'replace'],
  calculate: ['operation', 'operand'],
};

export const flowActionSchema: JsonSchema = {
  type: 'object',
  required: ['type', 'field'],
  properties: { type: { type: 'string', enum: [...ACTION_TYPES] } },
  allOf: ACTION_TYPES.map((type) => ({
    if: { required: ['type'], properties: { type: { const: type } } },
    then: closed({ type: {}, field: fieldPath, ...actionShapes[type] }, ['type', 'field', ...actionRequired[type]]),
  })),
};

export const flowRuleSchema: JsonSchema = closed(
  {
    name: text(200),
    when: flowConditionSchema,
    actions: { type: 'array', minItems: 1, maxItems: MAX_ACTIONS, items: flowActionSchema },
  },
  ['actions'],
);

/** The whole flow body: structure and sizes. Meaning (fields, operators, values) is flowErrors. */
export const flowSchema: JsonSchema = closed(
  {
    name: text(200),
    selection: flowSelectionSchema,
    rules: { type: 'array', minItems: 1, maxItems: MAX_RULES, items: flowRuleSchema },
  },
  ['selection', 'rules'],
);

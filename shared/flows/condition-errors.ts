import type { ConditionOperator, FieldCondition, FlowCondition } from './definition';
import { MAX_CONDITION_DEPTH } from './definition';
import { operatorsFor, timeOf } from './conditions';
import { enumOf, fieldLabel } from './describe';
import { resolveField, unknownFieldMessage, type FieldInfo } from './fields';

/** What a schema cannot check in a `when`: the fields exist, operators fit them, values fit both. */

export interface FlowError {
  path: string;
  message: string;
}

const ORDER: ConditionOperator[] = ['greater', 'less', 'between'];
const TEXT: ConditionOperator[] = ['contains', 'starts_with', 'ends_with'];

const listing = (values: unknown[]) => values.map(String).join(', ');

/** Why one compared value does not fit the field and operator, or null. */
function comparedValueProblem(
  info: FieldInfo,
  op: ConditionOperator,
  v: unknown,
  caseSensitive: boolean,
): string | null {
  const kind = info.kind === 'list' ? info.itemKind! : info.kind;
  if (Array.isArray(v) || v === undefined || v === null) return 'must be a single value';
  if (kind === 'any') {
    if (ORDER.includes(op) && typeof v !== 'number' && timeOf(v) === null)
      return 'must be a number or an ISO date (YYYY-MM-DD or a date-time)';
    // `contains` on a value that turns out to be a list looks for an element, of any type
    if ((op === 'starts_with' || op === 'ends_with') && typeof v !== 'string') return 'must be text';
    return null;
  }
  if (TEXT.includes(op)) return typeof v === 'string' ? null : 'must be text';
  switch (kind) {
    case 'text': {
      if (typeof v !== 'string') return 'must be text';
      const values = enumOf(info);
      const same = (e: unknown) => (caseSensitive ? e === v : String(e).toLowerCase() === v.toLowerCase());
      return values && !values.some(same) ? `must be one of: ${listing(values)}` : null;
    }
    case 'number':
      return typeof v === 'number' ? null : 'must be a number';
    case 'boolean':
      return typeof v === 'boolean' ? null : 'must be true or false';
    case 'date':
      return timeOf(v) === null ? 'must be an ISO date (YYYY-MM-DD or a date-time)' : null;
    default:
      return 'takes no value';
  }
}

function fieldConditionErrors(c: FieldCondition, path: string, out: FlowError[]): void {
  const info = resolveField(c.field);
  if (!info) {
    out.push({ path: `${path}.field`, message: unknownFieldMessage(c.field) });
    return;
  }
  const operators = operatorsFor(info);
  if (!operators.includes(c.operator)) {
    out.push({
      path: `${path}.operator`,
      message: `${c.operator} does not apply to ${fieldLabel(info)}; it takes: ${operators.join(', ')}`,
    });
    return;
  }
  const at = `${path}.value`;
  const cs = c.caseSensitive === true;
  switch (c.operator) {
    case 'empty':
    case 'not_empty':
      if (c.value !== undefined) out.push({ path: at, message: `${c.operator} takes no value` });
      return;
    case 'in':
    case 'not_in':
      if (!Array.isArray(c.value) || c.value.length === 0) {
        out.push({ path: at, message: `${c.operator} takes a list of one or more values` });
        return;
      }
      c.value.forEach((v, i) => {
        const problem = comparedValueProblem(info, c.operator, v, cs);
        if (problem) out.push({ path: `${at}.${i}`, message: problem });
      });
      return;
    case 'between': {
      if (!Array.isArray(c.value) || c.value.length !== 2) {
        out.push({ path: at, message: 'between takes [min, max]' });
        return;
      }
      const problems = c.value.map((v) => comparedValueProblem(info, c.operator, v, cs));
      problems.forEach((problem, i) => problem && out.push({ path: `${at}.${i}`, message: problem }));
      const [min, max] = c.value as unknown[];
      const low = typeof min === 'number' ? min : timeOf(min);
      const high = typeof max === 'number' ? max : timeOf(max);
      if (!problems.some(Boolean) && low !== null && high !== null && low > high)
        out.push({ path: at, message: 'between takes [min, max] with min ≤ max' });
      return;
    }
    default: {
      const problem = comparedValueProblem(info, c.operator, c.value, cs);
      if (problem) out.push({ path: at, message: problem });
    }
  }
}

/** Checks a condition tree into `out`; answers the count of field conditions in it. */
export function conditionErrors(condition: FlowCondition, path: string, out: FlowError[], depth = 0): number {
  if (!('all' in condition || 'any' in condition || 'not' in condition)) {
    fieldConditionErrors(condition, path, out);
    return 1;
  }
  const children: [path: string, condition: FlowCondition][] =
    'all' in condition
      ? condition.all.map((c, i) => [`${path}.all.${i}`, c])
      : 'any' in condition
        ? condition.any.map((c, i) => [`${path}.any.${i}`, c])
        : [[`${path}.not`, condition.not]];
  if (depth >= MAX_CONDITION_DEPTH) {
    out.push({ path, message: `conditions nest at most ${MAX_CONDITION_DEPTH} groups deep` });
    return 0;
  }
  return children.reduce((count, [at, child]) => count + conditionErrors(child, at, out, depth + 1), 0);
}

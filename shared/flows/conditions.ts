import type { ConditionOperator, FieldCondition, FlowCondition } from './definition';
import { OPERATORS } from './definition';
import {
  FlowFieldError,
  isObject,
  isPlain,
  readAt,
  resolveField,
  unknownFieldMessage,
  variantsOf,
  type FieldInfo,
  type FieldKind,
} from './fields';

/**
 * When a rule applies: conditions evaluated against the product as the rules before left it.
 *
 * - Text comparisons ignore case unless the condition says `caseSensitive: true`.
 * - On a list field (tags, bullets, a metafield holding a list) an operator holds when some
 *   element satisfies it (`contains`: the list has the element; `starts_with`: some element
 *   starts so), and `not_in` holds when no element is one of the values.
 * - On a variant field (`variants.price`) a condition holds when ANY variant satisfies it; a
 *   product without variants satisfies none (wrap it in `not` for "no variant …").
 * - `empty`: absent, null, blank text, an empty list or object. `greater` / `less` / `between`
 *   compare numbers, or dates (Date values, ISO date texts); `between` includes both ends.
 * - Values of another type than the condition's never match (the text "10" is not the number 10).
 */

type Obj = Record<string, unknown>;

const TEXT_OPERATORS: ConditionOperator[] = ['contains', 'starts_with', 'ends_with'];
const EMPTINESS: ConditionOperator[] = ['empty', 'not_empty'];
const ORDER: ConditionOperator[] = ['greater', 'less', 'between'];
const MEMBERSHIP: ConditionOperator[] = ['equals', 'not_equals', 'in', 'not_in'];

const BY_KIND: Record<Exclude<FieldKind, 'list'>, readonly ConditionOperator[]> = {
  text: [...MEMBERSHIP, ...TEXT_OPERATORS, ...EMPTINESS],
  number: [...MEMBERSHIP, ...ORDER, ...EMPTINESS],
  boolean: [...MEMBERSHIP, ...EMPTINESS],
  date: ['equals', 'not_equals', ...ORDER, ...EMPTINESS],
  structure: EMPTINESS,
  any: OPERATORS,
};
const BY_LIST_ITEM: Partial<Record<FieldKind, readonly ConditionOperator[]>> = {
  text: ['contains', 'in', 'not_in', 'starts_with', 'ends_with', ...EMPTINESS],
  number: ['contains', 'in', 'not_in', ...ORDER, ...EMPTINESS],
  boolean: ['contains', 'in', 'not_in', ...EMPTINESS],
};

/** The operators a field's type takes. */
export function operatorsFor(info: FieldInfo): readonly ConditionOperator[] {
  return info.kind === 'list' ? (BY_LIST_ITEM[info.itemKind!] ?? EMPTINESS) : BY_KIND[info.kind];
}

export function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (typeof v === 'string') return v.trim() === '';
  if (Array.isArray(v)) return v.length === 0;
  return isObject(v) && isPlain(v) && Object.keys(v).length === 0;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:$|T)/;

/** Milliseconds of a Date or an ISO date text; null for anything else. */
export function timeOf(v: unknown): number | null {
  const t = v instanceof Date ? v.getTime() : typeof v === 'string' && ISO_DATE.test(v) ? Date.parse(v) : NaN;
  return Number.isNaN(t) ? null : t;
}

/** An id object (ObjectId) compares as its text. */
const comparable = (v: unknown): unknown => (isObject(v) && !isPlain(v) ? String(v) : v);

function equal(v: unknown, x: unknown, kind: FieldKind, caseSensitive: boolean): boolean {
  const a = comparable(v);
  if (kind === 'date' || a instanceof Date) {
    const t = timeOf(a);
    return t !== null && t === timeOf(x);
  }
  if (typeof a === 'string' && typeof x === 'string')
    return caseSensitive ? a === x : a.toLowerCase() === x.toLowerCase();
  return a === x;
}

const isIn = (v: unknown, xs: unknown, kind: FieldKind, cs: boolean) =>
  Array.isArray(xs) && xs.some((x) => equal(v, x, kind, cs));

/** The sign of v − x for two numbers or two dates; null when they do not compare. */
function compare(v: unknown, x: unknown): number | null {
  if (typeof v === 'number' && typeof x === 'number') return Math.sign(v - x);
  const tv = timeOf(v);
  const tx = timeOf(x);
  return tv === null || tx === null ? null : Math.sign(tv - tx);
}

function textTest(v: unknown, op: ConditionOperator, x: unknown, caseSensitive: boolean): boolean {
  let a = comparable(v);
  if (typeof a !== 'string' || typeof x !== 'string') return false;
  let b = x;
  if (!caseSensitive) {
    a = a.toLowerCase();
    b = b.toLowerCase();
  }
  const s = a as string;
  return op === 'contains' ? s.includes(b) : op === 'starts_with' ? s.startsWith(b) : s.endsWith(b);
}

function scalarTest(v: unknown, c: FieldCondition, kind: FieldKind): boolean {
  const cs = c.caseSensitive === true;
  switch (c.operator) {
    case 'equals':
      return equal(v, c.value, kind, cs);
    case 'not_equals':
      return !equal(v, c.value, kind, cs);
    case 'in':
      return isIn(v, c.value, kind, cs);
    case 'not_in':
      return !isIn(v, c.value, kind, cs);
    case 'contains':
    case 'starts_with':
    case 'ends_with':
      return textTest(v, c.operator, c.value, cs);
    case 'greater':
      return compare(v, c.value) === 1;
    case 'less':
      return compare(v, c.value) === -1;
    case 'between': {
      const [min, max] = Array.isArray(c.value) ? c.value : [];
      const low = compare(v, min);
      const high = compare(v, max);
      return low !== null && high !== null && low >= 0 && high <= 0;
    }
    case 'empty':
      return isEmpty(v);
    case 'not_empty':
      return !isEmpty(v);
  }
}

/** One value (a product's, or one variant's) against a field condition. */
function valueHolds(v: unknown, c: FieldCondition, kind: FieldKind): boolean {
  if (c.operator === 'empty' || c.operator === 'not_empty' || !Array.isArray(v)) return scalarTest(v, c, kind);
  const cs = c.caseSensitive === true;
  switch (c.operator) {
    case 'contains':
    case 'equals':
      return v.some((el) => equal(el, c.value, kind, cs));
    case 'not_equals':
      return !v.some((el) => equal(el, c.value, kind, cs));
    case 'not_in':
      return !v.some((el) => isIn(el, c.value, kind, cs));
    default:
      return v.some((el) => scalarTest(el, c, kind));
  }
}

function fieldConditionHolds(c: FieldCondition, product: Obj): boolean {
  const info = resolveField(c.field);
  if (!info) throw new FlowFieldError(unknownFieldMessage(c.field));
  const kind = info.kind === 'list' ? info.itemKind! : info.kind;
  if (info.scope === 'variant') return variantsOf(product).some((v) => valueHolds(readAt(product, info, v), c, kind));
  return valueHolds(readAt(product, info), c, kind);
}

/** Whether a condition holds for a product. Throws FlowFieldError for a field no flow validation would pass. */
export function conditionHolds(condition: FlowCondition, product: Obj): boolean {
  if ('all' in condition) return condition.all.every((c) => conditionHolds(c, product));
  if ('any' in condition) return condition.any.some((c) => conditionHolds(c, product));
  if ('not' in condition) return !conditionHolds(condition.not, product);
  return fieldConditionHolds(condition, product);
}

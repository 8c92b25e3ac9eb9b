import { applyAction } from './actions';
import { conditionHolds } from './conditions';
import type { FlowAction, FlowDefinition } from './definition';
import { isObject, isPlain, structuredCopy } from './fields';

/**
 * One product through a flow. Pure: no clock, no randomness, no I/O, so it can run anywhere,
 * including a workflow. The flow is expected to have passed flowSchema and flowErrors; what can
 * still go wrong is this product's data (division by zero, text where a number was expected),
 * and that is this product's error, not the flow's.
 */

export interface FlowRunSuccess {
  /** The product's content after every rule (a deep copy: the input is left as it was). */
  product: Record<string, unknown>;
  /** The rules whose `when` held, by index, in order. */
  firedRules: number[];
  /** Whether the result differs from the input. */
  changed: boolean;
}
export interface FlowRunFailure {
  /** What went wrong, naming rule, action and field: `rules.1.actions.0 (calculate price): division by zero`. */
  error: string;
  rule: number;
  /** Null when the rule's condition failed to evaluate. */
  action: number | null;
  field: string | null;
}
export type FlowRunResult = FlowRunSuccess | FlowRunFailure;

const describeAction = (a: FlowAction) => `${a.type} ${a.field}`;
const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Applies the rules in order, each to the product as the rules before it left it (a rule sees the
 * changes of the rules before it, and a later rule's condition may hold only because of them).
 */
export function runFlow(flow: FlowDefinition, product: Record<string, unknown>): FlowRunResult {
  const out = structuredCopy(product);
  const firedRules: number[] = [];
  for (const [i, rule] of flow.rules.entries()) {
    let holds: boolean;
    try {
      holds = rule.when ? conditionHolds(rule.when, out) : true;
    } catch (err) {
      return { error: `rules.${i}.when: ${messageOf(err)}`, rule: i, action: null, field: null };
    }
    if (!holds) continue;
    firedRules.push(i);
    for (const [j, action] of rule.actions.entries()) {
      try {
        applyAction(out, action);
      } catch (err) {
        return {
          error: `rules.${i}.actions.${j} (${describeAction(action)}): ${messageOf(err)}`,
          rule: i,
          action: j,
          field: action.field,
        };
      }
    }
  }
  return { product: out, firedRules, changed: !sameData(product, out) };
}

export function isFlowRunFailure(result: FlowRunResult): result is FlowRunFailure {
  return 'error' in result;
}

/** Deep equality of plain data; Dates by time, other objects (an ObjectId) by identity. */
function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Date || b instanceof Date)
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  if (Array.isArray(a) || Array.isArray(b))
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameData(v, b[i]));
  if (!isObject(a) || !isObject(b) || !isPlain(a) || !isPlain(b)) return Number.isNaN(a) && Number.isNaN(b);
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameData(a[k], b[k]));
}

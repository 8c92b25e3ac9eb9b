import { actionErrors } from './action-errors';
import { conditionErrors, type FlowError } from './condition-errors';
import type { FlowDefinition } from './definition';
import { MAX_CONDITIONS } from './definition';

export type { FlowError } from './condition-errors';

/**
 * The checks beyond flowSchema, on a body that passed it: every field a flow names exists (and is
 * writable where it is a target), operators fit their field's type, values fit their field (an
 * enum value, a number for a number), copy / concatenate / calculate read fields of types that
 * fit, a required field is never cleared, and a rule has at most MAX_CONDITIONS conditions.
 * Each error's `path` is the JSON path of the offending member: `rules.0.when.all.1.operator`.
 */
export function flowErrors(flow: FlowDefinition): FlowError[] {
  const out: FlowError[] = [];
  (flow.rules ?? []).forEach((rule, i) => {
    if (rule.when) {
      const count = conditionErrors(rule.when, `rules.${i}.when`, out);
      if (count > MAX_CONDITIONS)
        out.push({
          path: `rules.${i}.when`,
          message: `has ${count} conditions; a rule takes at most ${MAX_CONDITIONS}`,
        });
    }
    (rule.actions ?? []).forEach((action, j) => actionErrors(action, `rules.${i}.actions.${j}`, out));
  });
  return out;
}

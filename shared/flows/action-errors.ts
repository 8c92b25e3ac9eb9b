import type { CalculateAction, FlowAction } from './definition';
import type { FlowError } from './condition-errors';
import { decimalsOf } from './decimal';
import { enumOf, fieldLabel, typeLabel } from './describe';
import { resolveField, unknownFieldMessage, type FieldInfo, type FieldKind } from './fields';
import { nestsDeeperThan, valueProblem } from './value-fit';

/** What a schema cannot check in an action: targets exist and are writable, values and sources fit them. */

const MAX_VALUE_DEPTH = 10;
const MAX_ROUNDING_DECIMALS = 6;
const SINGLE: FieldKind[] = ['text', 'number', 'boolean', 'date', 'any'];

/**
 * A source an action reads from (`at` is where its path is in the flow): it must exist, and a
 * variant field can feed only a variant field, being read on the same variant.
 */
function source(path: string, at: string, target: FieldInfo, out: FlowError[]): FieldInfo | null {
  const info = resolveField(path);
  if (!info) {
    out.push({ path: at, message: unknownFieldMessage(path) });
    return null;
  }
  if (info.scope === 'variant' && target.scope !== 'variant') {
    out.push({
      path: at,
      message: `${info.path} is a variant field: only a variant field can take its value (read on the same variant)`,
    });
    return null;
  }
  return info;
}

function copyProblem(target: FieldInfo, from: FieldInfo): string | null {
  if (target.kind === 'structure' || from.kind === 'structure')
    return `copy takes single values and lists; ${target.kind === 'structure' ? target.path : from.path} is structured`;
  if (target.kind === 'any' || from.kind === 'any') return null;
  if (target.kind !== from.kind || target.itemKind !== from.itemKind)
    return `${fieldLabel(from)} does not fit ${fieldLabel(target)}`;
  const allowed = enumOf(target);
  const possible = enumOf(from);
  if (allowed && (!possible || possible.some((v) => !allowed.includes(v))))
    return `${target.path} takes only ${allowed.join(', ')}; ${from.path} may hold other values`;
  return null;
}

function numberSource(path: string, at: string, target: FieldInfo, out: FlowError[]): void {
  const info = source(path, at, target, out);
  if (info && info.kind !== 'number' && info.kind !== 'any')
    out.push({ path: at, message: `calculate reads numbers; ${fieldLabel(info)} is not one` });
}

function calculateErrors(action: CalculateAction, path: string, target: FieldInfo, out: FlowError[]): void {
  if (target.kind !== 'number' && target.kind !== 'any') {
    out.push({ path: `${path}.field`, message: `calculate writes numbers; ${fieldLabel(target)} is not one` });
    return;
  }
  if (action.from !== undefined) numberSource(action.from, `${path}.from`, target, out);
  if (typeof action.operand === 'number') {
    if (action.operation === 'divide' && action.operand === 0)
      out.push({ path: `${path}.operand`, message: 'division by zero' });
  } else if (action.operand && typeof action.operand.field === 'string') {
    numberSource(action.operand.field, `${path}.operand.field`, target, out);
  }
  const round = action.round as Record<string, number> | undefined;
  for (const key of ['step', 'ending'] as const) {
    if (typeof round?.[key] === 'number' && decimalsOf(round[key]) > MAX_ROUNDING_DECIMALS)
      out.push({ path: `${path}.round.${key}`, message: `takes at most ${MAX_ROUNDING_DECIMALS} decimals` });
  }
}

/** Checks one action into `out`. */
export function actionErrors(action: FlowAction, path: string, out: FlowError[]): void {
  const target = resolveField(action.field);
  const at = `${path}.field`;
  if (!target) {
    out.push({ path: at, message: unknownFieldMessage(action.field) });
    return;
  }
  if (target.readOnly) {
    out.push({ path: at, message: `${target.path} is read-only` });
    return;
  }
  switch (action.type) {
    case 'set': {
      if (target.kind === 'structure') {
        out.push({ path: at, message: `${target.path} is structured: set its fields one by one` });
      } else if (nestsDeeperThan(action.value, MAX_VALUE_DEPTH)) {
        out.push({ path: `${path}.value`, message: `nests deeper than ${MAX_VALUE_DEPTH} levels` });
      } else {
        const problem = valueProblem(target.schema, action.value);
        if (problem) out.push({ path: `${path}.value`, message: problem });
      }
      return;
    }
    case 'clear':
      if (target.clear === 'refuse')
        out.push({ path: at, message: `${target.path} is required and cannot be cleared` });
      return;
    case 'add':
    case 'remove': {
      if (target.kind !== 'list' && target.kind !== 'any') {
        out.push({ path: at, message: `${action.type} works on lists; ${fieldLabel(target)} is not one` });
        return;
      }
      const items = target.kind === 'list' ? (target.schema.items as Record<string, unknown>) : {};
      // a value to remove need only be of the list's type; one to add must be a valid element
      const fit = action.type === 'add' ? items : { type: items.type };
      action.values.forEach((v, i) => {
        const problem = valueProblem(fit, v);
        if (problem) out.push({ path: `${path}.values.${i}`, message: problem });
      });
      return;
    }
    case 'copy': {
      const from = source(action.from, `${path}.from`, target, out);
      const problem = from && copyProblem(target, from);
      if (problem) out.push({ path: `${path}.from`, message: problem });
      return;
    }
    case 'concatenate':
      if (target.kind !== 'text' && target.kind !== 'any') {
        out.push({ path: at, message: `concatenate writes text; ${fieldLabel(target)} is not text` });
        return;
      }
      action.parts.forEach((part, i) => {
        if (!('field' in part)) return;
        const from = source(part.field, `${path}.parts.${i}.field`, target, out);
        if (from && !SINGLE.includes(from.kind))
          out.push({
            path: `${path}.parts.${i}.field`,
            message: `concatenate joins single values; ${from.path} is a ${typeLabel(from)}`,
          });
      });
      return;
    case 'replace':
      if (target.kind !== 'text' && target.kind !== 'any' && !(target.kind === 'list' && target.itemKind === 'text'))
        out.push({ path: at, message: `replace works on text; ${fieldLabel(target)} is not text` });
      return;
    case 'calculate':
      calculateErrors(action, path, target, out);
      return;
  }
}

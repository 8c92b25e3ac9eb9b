import type { CalculateAction, ConcatenateAction, FlowAction, ListAction, ReplaceAction } from './definition';
import { calculate, DivisionByZero } from './decimal';
import {
  clearAt,
  FlowFieldError,
  readAt,
  resolveField,
  structuredCopy,
  unknownFieldMessage,
  variantsOf,
  writeAt,
  type FieldInfo,
} from './fields';

/**
 * What an action does to a product (already a copy: actions change it in place).
 *
 * - An action on a variant field applies to every variant; a field it reads from (copy, the parts
 *   of concatenate, calculate's from and operand) is read on the same variant when it is a
 *   variant field, on the product otherwise.
 * - set: the value (validated against the field by flowErrors). clear: see ClearMode in fields.ts.
 * - add: appends the values the list lacks; remove: drops every element equal to one of the
 *   values. Text elements compare ignoring case (tags "Sale" and "sale" are one tag).
 * - copy: the source's value; an empty source clears the target.
 * - concatenate: the parts as text, empty ones left out, joined by the separator (default none).
 * - replace: every occurrence of `find`, as plain text (never a pattern: flows are client input),
 *   in a text or in every element of a text list.
 * - calculate: exact decimal arithmetic (decimal.ts), rounded to `round`, by default to 2 decimals
 *   (0 for an integer field). A product whose source is empty or not a number, or whose division
 *   is by zero, fails with an error naming the field. On variant fields, a variant whose source is
 *   empty is left as it is: unlike a product, a variant cannot be singled out by a rule's `when`.
 */

type Obj = Record<string, unknown>;

/** A problem applying an action to this product, reported as the product's error. */
export class FlowActionError extends Error {
  override name = 'FlowActionError';
}

function field(path: string): FieldInfo {
  const info = resolveField(path);
  if (!info) throw new FlowActionError(unknownFieldMessage(path));
  return info;
}

/** Where an action on `target` applies: the product once, or each variant. */
function placesOf(product: Obj, target: FieldInfo): (Obj | undefined)[] {
  return target.scope === 'variant' ? variantsOf(product) : [undefined];
}

/** A field's value at a place: a variant field on that variant, anything else on the product. */
function readFrom(product: Obj, info: FieldInfo, variant: Obj | undefined): unknown {
  if (info.scope === 'variant' && !variant)
    throw new FlowActionError(`${info.path} is a variant field: a product field cannot take its value`);
  return readAt(product, info, info.scope === 'variant' ? variant : undefined);
}

const sameElement = (a: unknown, b: unknown) =>
  typeof a === 'string' && typeof b === 'string' ? a.toLowerCase() === b.toLowerCase() : a === b;

function listAt(product: Obj, target: FieldInfo, place: Obj | undefined): unknown[] | null {
  const current = readAt(product, target, place);
  if (current === undefined || current === null) return null;
  if (!Array.isArray(current)) throw new FlowActionError(`${target.path} is not a list for this product`);
  return current;
}

function addOrRemove(product: Obj, action: ListAction, target: FieldInfo, place: Obj | undefined): void {
  const current = listAt(product, target, place);
  if (action.type === 'remove') {
    if (current)
      writeAt(
        product,
        target,
        current.filter((el) => !action.values.some((v) => sameElement(el, v))),
        place,
      );
    return;
  }
  const next = [...(current ?? [])];
  for (const v of action.values) if (!next.some((el) => sameElement(el, v))) next.push(structuredCopy(v));
  writeAt(product, target, next, place);
}

function asText(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map(asText).filter(Boolean).join(', ');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function concatenate(product: Obj, action: ConcatenateAction, target: FieldInfo, place: Obj | undefined): void {
  const texts = action.parts.map((p) => ('text' in p ? p.text : asText(readFrom(product, field(p.field), place))));
  writeAt(product, target, texts.filter((t) => t !== '').join(action.separator ?? ''), place);
}

/** Every occurrence of `find` replaced, as plain text. */
export function replaceAll(text: string, find: string, replacement: string, caseSensitive: boolean): string {
  if (caseSensitive) return text.split(find).join(replacement);
  const lower = text.toLowerCase();
  const needle = find.toLowerCase();
  // lower-casing keeps the length of almost every text; where it does not, positions would not map back
  if (lower.length !== text.length || needle.length !== find.length) {
    let out = '';
    let i = 0;
    while (i < text.length) {
      if (text.slice(i, i + find.length).toLowerCase() === needle) {
        out += replacement;
        i += find.length;
      } else out += text[i++];
    }
    return out;
  }
  let out = '';
  let from = 0;
  for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, from)) {
    out += text.slice(from, at) + replacement;
    from = at + needle.length;
  }
  return out + text.slice(from);
}

function replace(product: Obj, action: ReplaceAction, target: FieldInfo, place: Obj | undefined): void {
  const current = readAt(product, target, place);
  const one = (t: string) => replaceAll(t, action.find, action.replace, action.caseSensitive === true);
  if (typeof current === 'string') writeAt(product, target, one(current), place);
  else if (Array.isArray(current))
    writeAt(
      product,
      target,
      current.map((el) => (typeof el === 'string' ? one(el) : el)),
      place,
    );
  else if (current !== undefined && current !== null)
    throw new FlowActionError(`${target.path} is not text for this product`);
}

/** A number the calculation needs, or null for "leave this variant as it is". */
function numberAt(product: Obj, info: FieldInfo, place: Obj | undefined, role: string): number | null {
  const v = readFrom(product, info, place);
  if ((v === undefined || v === null) && place) return null;
  if (v === undefined || v === null) throw new FlowActionError(`${role} ${info.path} is empty for this product`);
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw new FlowActionError(`${role} ${info.path} is not a number for this product (${JSON.stringify(v)})`);
  return v;
}

function calculateAt(product: Obj, action: CalculateAction, target: FieldInfo, place: Obj | undefined): void {
  const base = numberAt(product, action.from ? field(action.from) : target, place, 'the source');
  const operand =
    typeof action.operand === 'number'
      ? action.operand
      : numberAt(product, field(action.operand.field), place, 'the operand');
  if (base === null || operand === null) return;
  const rounding = action.round ?? { decimals: target.schema.type === 'integer' ? 0 : 2 };
  let result: number;
  try {
    result = calculate(base, action.operation, operand, rounding);
  } catch (err) {
    if (err instanceof DivisionByZero)
      throw new FlowActionError(
        typeof action.operand === 'number'
          ? 'division by zero'
          : `division by zero: ${action.operand.field} is 0 for this product`,
      );
    throw err;
  }
  if (!Number.isFinite(result)) throw new FlowActionError(`the result for ${target.path} is out of range`);
  writeAt(product, target, result, place);
}

/** Applies one action to the product in place. Throws FlowActionError (or FlowFieldError) for this product's problem. */
export function applyAction(product: Obj, action: FlowAction): void {
  const target = field(action.field);
  if (target.readOnly) throw new FlowActionError(`${target.path} is read-only`);
  for (const place of placesOf(product, target)) {
    switch (action.type) {
      case 'set':
        writeAt(product, target, structuredCopy(action.value), place);
        break;
      case 'clear':
        clearAt(product, target, place);
        break;
      case 'add':
      case 'remove':
        addOrRemove(product, action, target, place);
        break;
      case 'copy': {
        const value = readFrom(product, field(action.from), place);
        if (value === undefined || value === null) {
          if (target.clear === 'refuse')
            throw new FlowFieldError(`${action.from} is empty for this product; ${target.path} is required`);
          clearAt(product, target, place);
        } else writeAt(product, target, structuredCopy(value), place);
        break;
      }
      case 'concatenate':
        concatenate(product, action, target, place);
        break;
      case 'replace':
        replace(product, action, target, place);
        break;
      case 'calculate':
        calculateAt(product, action, target, place);
        break;
    }
  }
}

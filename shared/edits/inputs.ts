import { AppError } from '../errors/catalog';
import { storabilityErrors } from '../products/rules';
import { compile, inputFailures } from '../validation';
import { flowSchema, type FlowDefinition } from '../flows/definition';
import { flowErrors } from '../flows/validate';
import { resolveField, type FieldKind } from '../flows/fields';

/** A problem with an edit as sent, at a path of its body (`rules.0.actions.1.field`). */
export interface EditProblem {
  path: string;
  message: string;
}

/**
 * Everything wrong with a flow: its shape (the schema the routes declare), what the store cannot
 * keep in a value, then the rules of the language (fields that exist and may be written,
 * operators and values that fit each field's type). The one check behind validate, preview and execute.
 */
export function flowProblems(body: unknown): EditProblem[] {
  const validate = compile(flowSchema);
  const copy = structuredClone(body);
  if (!validate(copy)) return inputFailures(validate.errors).map((f) => ({ path: f.field, message: f.message }));
  const unstorable = storabilityErrors(copy);
  if (unstorable.length) return unstorable.map((e) => ({ path: e.field, message: e.message }));
  return flowErrors(copy as FlowDefinition);
}

/** A flow to run, or the 400 that lists what is wrong with it. */
export function requireValidFlow(body: unknown): FlowDefinition {
  const problems = flowProblems(body);
  if (problems.length)
    throw new AppError(
      400,
      'validation-error',
      `Invalid flow: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
      {
        field: problems[0].path,
        errors: problems,
      },
    );
  return body as FlowDefinition;
}

/** Kinds of value a model gives as plain JSON, alone or as a list. */
const MODEL_KINDS: readonly FieldKind[] = ['text', 'number', 'boolean', 'date'];

/**
 * The fields of an AI transform: each once, a product field (variants and metafields are a flow's
 * business) whose value is plain JSON; those it writes must be writable (SKUs, ids and bindings
 * never are). Fields it reads only may be any known field.
 */
export function aiFieldProblems(fields: string[], at: string, opts: { reading?: boolean } = {}): EditProblem[] {
  const seen = new Set<string>();
  return fields.flatMap((path, i) => {
    const where = `${at}.${i}`;
    const info = resolveField(path);
    if (!info) return [{ path: where, message: `${path} is not a product field` }];
    if (seen.has(info.path)) return [{ path: where, message: `names ${info.path} twice` }];
    seen.add(info.path);
    if (opts.reading) return [];
    if (info.readOnly) return [{ path: where, message: `${path} is read-only` }];
    if (info.scope !== 'product')
      return [
        { path: where, message: `${path}: an AI transform writes product fields, not variant fields or metafields` },
      ];
    const plain =
      MODEL_KINDS.includes(info.kind) || (info.kind === 'list' && MODEL_KINDS.includes(info.itemKind ?? 'any'));
    if (!plain)
      return [
        { path: where, message: `${path} is a structure; name its fields (e.g. title.value, seo.metaTitle) instead` },
      ];
    return [];
  });
}

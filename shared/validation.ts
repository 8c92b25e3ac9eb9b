import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FieldError } from './errors/catalog';

/**
 * ajv instances, one for bodies (types as sent) and one for query strings (whose values arrive as
 * strings and are coerced). Schemas are compiled once, on first use, and kept.
 */
function make(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes,
    useDefaults: true,
    strict: true,
    strictRequired: false,
    allowUnionTypes: true,
    removeAdditional: false,
  });
  addFormats(ajv);
  // RFC 3339 admits a leap second (23:59:60) that a JavaScript Date cannot hold (Invalid Date,
  // stored as 1970): a date-time or date is valid only if it also makes a real Date
  for (const name of ['date-time', 'iso-date-time', 'date'] as const) {
    const rfc = ajv.formats[name] as { validate: (s: string) => boolean; compare?: (a: string, b: string) => number };
    ajv.addFormat(name, { ...rfc, validate: (s: string) => rfc.validate(s) && !Number.isNaN(Date.parse(s)) });
  }
  ajv.addKeyword({ keyword: 'x-note' }); // free text kept beside a schema for the OpenAPI description
  // a query parameter the OpenAPI document lists as required whose absence its handler answers itself
  ajv.addKeyword({ keyword: 'x-required' });
  return ajv;
}

const bodyAjv = make(false);
const queryAjv = make('array' as unknown as boolean);
const compiled = new WeakMap<object, ValidateFunction>();

export type JsonSchema = Record<string, unknown>;

// paging lives in paging.ts; re-exported for the modules that still import it from here
export { MAX_PAGE, PAGE_PARAM } from './paging';

export function compile(schema: JsonSchema, kind: 'body' | 'query' = 'body'): ValidateFunction {
  let fn = compiled.get(schema);
  if (!fn) {
    fn = (kind === 'query' ? queryAjv : bodyAjv).compile(schema);
    compiled.set(schema, fn);
  }
  return fn;
}

function fieldPath(instancePath: string): string {
  return instancePath.replace(/^\//, '').replace(/\//g, '.');
}

/** One failed keyword: the field as the client wrote it, ajv's keyword and params, a message. */
export interface KeywordFailure {
  field: string;
  keyword: string;
  message: string;
  params: Record<string, unknown>;
}

/** ajv's errors, each naming the field the way a client wrote it, once per field and message. */
export function inputFailures(errs: ErrorObject[] | null | undefined, root = ''): KeywordFailure[] {
  const out: KeywordFailure[] = [];
  for (const e of errs ?? []) {
    const base = [root, fieldPath(e.instancePath)].filter(Boolean).join('.');
    const join = (name: string) => (base ? `${base}.${name}` : name);
    const at = { keyword: e.keyword, params: e.params as Record<string, unknown> };
    if (e.keyword === 'required') {
      out.push({ ...at, field: join(String(e.params.missingProperty)), message: 'is required' });
    } else if (e.keyword === 'additionalProperties') {
      out.push({ ...at, field: join(String(e.params.additionalProperty)), message: 'is not a known field' });
    } else if (e.keyword === 'if') {
      continue; // the failing branch reports its own error
    } else {
      out.push({ ...at, field: base || '(body)', message: e.message ?? 'is invalid' });
    }
  }
  const seen = new Set<string>();
  return out.filter((f) => {
    const k = `${f.field}\u0000${f.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** ajv's errors as `{field, message}` pairs that name the field the way a client wrote it. */
export function toFieldErrors(errs: ErrorObject[] | null | undefined, root = ''): FieldError[] {
  return inputFailures(errs, root).map(({ field, message }) => ({ field, message }));
}

export function summarize(fieldErrors: FieldError[]): string {
  return fieldErrors.map((f) => `${f.field} ${f.message}`).join('; ');
}

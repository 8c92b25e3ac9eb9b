import fc from 'fast-check';

/**
 * Request generation from an OpenAPI 3.1 document (the one api/openapi.ts builds from the route
 * declarations): for one operation, path parameters, query strings and JSON bodies that are valid
 * per the declared schemas, near-valid (one keyword broken) or hostile (prototype names, NUL bytes,
 * Infinity, JSON nested thousands deep, 20,000-item arrays, odd Unicode), as fast-check arbitraries
 * for the random part and as a deterministic sweep (`sweepCases`) that puts every hostile class
 * where the schema says it can land, so that each class is tried on every route at every run.
 *
 * Schemas are the subset the document uses (no `$ref`): type (also a list), enum, const, properties,
 * required, additionalProperties, items, min/max(Length|Items|imum), exclusiveMinimum, pattern,
 * format, uniqueItems, minProperties, allOf (merged); if/then/not/propertyNames are left to the
 * server (a generated value may miss them: it is then simply refused, which is still checked).
 */

export type Schema = Record<string, any>;

/** JSON text spliced into a body as is: what JSON.stringify cannot write (1e309, 5,000 levels). */
export class Raw {
  constructor(
    readonly text: string,
    readonly note: string,
  ) {}
}

/** JSON text of a generated value; Raw parts as their text, own `__proto__` keys kept. */
export function jsonText(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : jsonText(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const parts: string[] = [];
    for (const k of Object.keys(value)) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) parts.push(`${JSON.stringify(k)}:${jsonText(v)}`);
    }
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** An object with these own keys, `__proto__` included (a literal or a spread would set the prototype). */
export function objectOf(entries: [string, unknown][]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries)
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

/** Percent-encodes as a client would; a lone surrogate goes as its WTF-8 bytes (which are not UTF-8). */
export function encodePart(text: string): string {
  let out = '';
  for (const ch of text) {
    try {
      out += encodeURIComponent(ch);
    } catch {
      const cu = ch.charCodeAt(0);
      out += [0xe0 | (cu >> 12), 0x80 | ((cu >> 6) & 63), 0x80 | (cu & 63)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Hostile material
// ---------------------------------------------------------------------------------------------

export const PROTO_WORDS = ['__proto__', 'constructor', 'toString'] as const;
export const DEEP_LEVELS = 5000;
export const LONG_ARRAY = 20_000;

export const deepObject = (levels = DEEP_LEVELS) =>
  new Raw(`${'{"d":'.repeat(levels)}1${'}'.repeat(levels)}`, `object nested ${levels} deep`);
export const deepArray = (levels = DEEP_LEVELS) =>
  new Raw(`${'['.repeat(levels)}${']'.repeat(levels)}`, `array nested ${levels} deep`);

export const HOSTILE_STRINGS: string[] = [
  ...PROTO_WORDS,
  'hasOwnProperty',
  'valueOf',
  'prototype',
  '\u0000',
  'a\u0000b',
  '%00',
  '$where',
  '$gt',
  '{"$gt":""}',
  '../../etc/passwd',
  '${7*7}{{7*7}}',
  "'; DROP TABLE x; --",
  '\ud800',
  '\udfff',
  '\u202e\u0301e',
  '\ufeff',
  '😀',
  ' ',
  '',
  'null',
  'NaN',
  'Infinity',
  '1e309',
  '-1',
];
export const LONG_STRINGS = ['x'.repeat(100_000), '😀'.repeat(20_000), 'é'.repeat(70_000)];

/** Numbers JSON can spell but JavaScript (or BSON) cannot hold as they are. */
export const HOSTILE_NUMBERS: Raw[] = [
  '1e309',
  '-1e309',
  '1e400',
  '-0',
  '9007199254740993',
  '1e308',
  '5e-324',
  '-1',
  '0.1e1',
]
  .concat(['123456789012345678901234567890'])
  .map((t) => new Raw(t, t));

export const HOSTILE_QUERY_VALUES = [
  '1e309',
  '-1e309',
  'Infinity',
  'NaN',
  '1e400',
  '9007199254740993',
  '-0',
  '0x10',
  '1_000',
  '',
  ...PROTO_WORDS,
  '\u0000',
  'a\u0000b',
  '\ud800',
  '😀\u202e',
  'x'.repeat(3000),
  '[object Object]',
  '$gt',
  'true',
  'null',
];

export const HOSTILE_PATH_VALUES = [
  ...PROTO_WORDS,
  '\u0000',
  'a\u0000b',
  '..',
  '.',
  ' ',
  '\ud800',
  '😀',
  '\u202e',
  'x'.repeat(3000),
  '$where',
  '{"$gt":""}',
  '1e309',
  '-1',
  '0',
  'null',
  'undefined',
  '000000000000000000000000',
  'ffffffffffffffffffffffff',
];
/** Path segments sent as they are (not encoded again): percent-escapes that decode to odd bytes or do not decode. */
export const RAW_PATH_VALUES = [
  '%00',
  '%2e%2e',
  '%2F',
  '%',
  '%zz',
  '%E0%A4%A',
  '%ED%A0%80',
  '%C0%AE',
  '..%2F..%2Forders',
];

/** Keys that mean something to JavaScript or MongoDB. */
export const HOSTILE_KEYS = [
  ...PROTO_WORDS,
  'prototype',
  'hasOwnProperty',
  '$where',
  '$set',
  'a.b',
  '',
  '\u0000',
  '_bsontype',
];

export const objectId = fc.stringMatching(/^[0-9a-f]{24}$/);

// ---------------------------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------------------------

/** allOf merged into one schema (properties and required joined; other keywords: the last wins). */
export function norm(schema: Schema | undefined): Schema {
  if (!schema || typeof schema !== 'object') return {};
  if (!Array.isArray(schema.allOf)) return schema;
  const { allOf, ...rest } = schema;
  let out: Schema = { ...rest };
  for (const part of allOf as Schema[]) {
    const p = norm(part);
    out = {
      ...out,
      ...p,
      properties: { ...(out.properties ?? {}), ...(p.properties ?? {}) },
      required: [...new Set([...(out.required ?? []), ...(p.required ?? [])])],
    };
  }
  return out;
}

export function typesOf(schema: Schema): string[] {
  const s = norm(schema);
  if (s.const !== undefined) return [jsonType(s.const)];
  if (Array.isArray(s.enum) && s.enum.length) return [...new Set((s.enum as unknown[]).map(jsonType))];
  if (Array.isArray(s.type)) return s.type as string[];
  if (typeof s.type === 'string') return [s.type];
  if (s.properties || s.additionalProperties !== undefined) return ['object'];
  if (s.items) return ['array'];
  return [];
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** A string the schema leaves free (no enum, const, pattern or format): what reaches domain code as sent. */
export const isFreeString = (schema: Schema): boolean => {
  const s = norm(schema);
  return typesOf(s).includes('string') && s.enum === undefined && s.const === undefined && !s.pattern && !s.format;
};
/** An object whose keys the schema does not list: free-form JSON. */
export const isFreeForm = (schema: Schema): boolean => {
  const s = norm(schema);
  const types = typesOf(s);
  return (types.length === 0 || types.includes('object')) && !s.properties && s.additionalProperties !== false;
};
export const isNumeric = (schema: Schema) => typesOf(schema).some((t) => t === 'number' || t === 'integer');

/**
 * Values a description names for a free text (`one of native, shopify, woocommerce`, `selected,
 * filter or all`): not an enum to the validator, but what a valid request sends.
 */
export function suggested(schema: Schema): string[] {
  const d = norm(schema).description;
  if (typeof d !== 'string') return [];
  const m = /^(?:one of )?([A-Za-z0-9_-]+(?:, [A-Za-z0-9_-]+)*(?:,? or [A-Za-z0-9_-]+)?)$/.exec(d.trim());
  if (!m) return [];
  const values = m[1].split(/,? or |, /);
  return values.length > 1 ? values : [];
}

/**
 * The values the document names for each property name, wherever it describes or enumerates them
 * (`selection` described on one route is what another route's undescribed `selection` takes too).
 */
export function namedValues(schemas: unknown[]): Map<string, string[]> {
  const out = new Map<string, Set<string>>();
  const visit = (schema: unknown): void => {
    if (Array.isArray(schema)) return schema.forEach(visit);
    if (!schema || typeof schema !== 'object') return;
    const s = schema as Schema;
    for (const [name, raw] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
      const p = norm(raw);
      const values = [
        ...suggested(p),
        ...((p.enum ?? []) as unknown[]).filter((v): v is string => typeof v === 'string'),
      ];
      if (values.length) out.set(name, new Set([...(out.get(name) ?? []), ...values]));
    }
    for (const [k, v] of Object.entries(s)) if (k !== 'enum' && k !== 'const' && k !== 'default') visit(v);
  };
  schemas.forEach(visit);
  return new Map([...out].map(([k, v]) => [k, [...v]]));
}

/** Whether a text meets a string schema's length and pattern (hints from elsewhere may not). */
function conforms(s: Schema, v: string): boolean {
  if (v.length < (s.minLength ?? 0) || v.length > (s.maxLength ?? Infinity)) return false;
  return !s.pattern || new RegExp(s.pattern as string, 'u').test(v);
}

/** Hints name the kind of value a property or parameter holds, so generators can use the tenant's real ones. */
export type Known = (name: string) => readonly string[];

export interface Gen {
  value: unknown;
  label: string;
}

const MAX_DEPTH = 6;
const label = (path: string, what: string) => (path ? `${path}: ${what}` : what);

// ---------------------------------------------------------------------------------------------
// Valid values
// ---------------------------------------------------------------------------------------------

function stringArb(s: Schema): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = Math.min(s.maxLength ?? min + 24, min + 24);
  if (s.format === 'date-time')
    return fc
      .date({ min: new Date('1990-01-01'), max: new Date('2090-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString());
  if (s.format === 'date')
    return fc
      .date({ min: new Date('1990-01-01'), max: new Date('2090-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10));
  if (s.format === 'email')
    return filtered(fc.emailAddress(), (e) => e.length <= (s.maxLength ?? 320)) ?? fc.emailAddress();
  if (s.format === 'uuid') return fc.uuid();
  if (s.format === 'uri' || s.format === 'url') return fc.webUrl();
  if (s.pattern) {
    const matching = fc.stringMatching(new RegExp(s.pattern as string, 'u'));
    return filtered(matching, (x) => x.length >= min && x.length <= (s.maxLength ?? Infinity)) ?? matching;
  }
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ minLength: min, maxLength: max }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: min, maxLength: max }) },
  );
}

/**
 * `arb` filtered by `keep`, or null when none of a hundred of its values passes: a filter that
 * (almost) nothing passes would make fast-check spin for ever. A rare pass is kept as constants.
 */
function filtered<T>(arb: fc.Arbitrary<T>, keep: (v: T) => boolean): fc.Arbitrary<T> | null {
  const passed = fc.sample(arb, { numRuns: 100, seed: 1 }).filter(keep);
  if (!passed.length) return null;
  return passed.length < 20 ? fc.constantFrom(...passed) : arb.filter(keep);
}

function numberArb(s: Schema, integer: boolean): fc.Arbitrary<number> {
  const lo = s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + (integer ? 1 : 1e-9) : (s.minimum ?? -1_000_000);
  const hi = s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - (integer ? 1 : 1e-9) : (s.maximum ?? 1_000_000);
  const min = Math.ceil(Math.min(lo, hi));
  const max = Math.floor(Math.max(lo, hi));
  if (integer) {
    // edges are where the bugs are: the bounds themselves, and small values
    return fc.oneof(
      fc.integer({ min, max }),
      fc.constantFrom(min, max),
      ...(Math.max(min, -10) <= Math.min(max, 10)
        ? [fc.integer({ min: Math.max(min, -10), max: Math.min(max, 10) })]
        : []),
    );
  }
  return fc.oneof(fc.double({ min: lo, max: hi, noNaN: true, noDefaultInfinity: true }), fc.constantFrom(lo, hi));
}

/** Values the schema accepts (mostly: if/then and not are the server's to enforce). */
export function validArb(schema: Schema, known: Known, name = '', depth = 0): fc.Arbitrary<unknown> {
  const s = norm(schema);
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum) && s.enum.length) return fc.constantFrom(...(s.enum as unknown[]));
  const types = typesOf(s);
  const hinted = known(name);
  const arbs: fc.Arbitrary<unknown>[] = [];
  for (const t of types.length ? types : ['any']) {
    switch (t) {
      case 'string': {
        const real = [...hinted, ...suggested(s)].filter((v) => conforms(s, v));
        arbs.push(real.length ? fc.oneof(fc.constantFrom(...real), stringArb(s)) : stringArb(s));
        break;
      }
      case 'integer':
      case 'number':
        arbs.push(numberArb(s, t === 'integer'));
        break;
      case 'boolean':
        arbs.push(fc.boolean());
        break;
      case 'null':
        arbs.push(fc.constant(null));
        break;
      case 'array': {
        const min = s.minItems ?? 0;
        const max = Math.min(s.maxItems ?? min + 3, min + (depth > 2 ? 1 : 3));
        const item = depth >= MAX_DEPTH ? fc.constant(null) : validArb(s.items ?? {}, known, name, depth + 1);
        arbs.push(
          s.uniqueItems
            ? fc.uniqueArray(item, { minLength: min, maxLength: max, selector: (v) => jsonText(v) })
            : fc.array(item, { minLength: min, maxLength: max }),
        );
        break;
      }
      case 'object':
        arbs.push(objectArb(s, known, depth));
        break;
      default:
        arbs.push(depth >= MAX_DEPTH ? fc.constant(null) : fc.jsonValue({ maxDepth: 2 }));
    }
  }
  return arbs.length === 1 ? arbs[0] : fc.oneof(...arbs);
}

function objectArb(s: Schema, known: Known, depth: number): fc.Arbitrary<unknown> {
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const required = new Set<string>((s.required ?? []) as string[]);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, ps] of Object.entries(props)) {
    if (depth >= MAX_DEPTH && !required.has(k)) continue;
    model[k] = validArb(ps, known, k, depth + 1);
  }
  const requiredKeys = Object.keys(model).filter((k) => required.has(k));
  let base: fc.Arbitrary<Record<string, unknown>> = fc.record(model, { requiredKeys });
  const extra = s.additionalProperties;
  if (!s.properties && extra !== false && depth < MAX_DEPTH) {
    const valueArb = typeof extra === 'object' ? validArb(extra, known, '', depth + 1) : fc.jsonValue({ maxDepth: 1 });
    base = fc.dictionary(fc.stringMatching(/^[a-z][a-zA-Z0-9]{0,8}$/), valueArb, { maxKeys: 3 });
  }
  const minProps = s.minProperties ?? 0;
  if (minProps > 0) {
    const optional = Object.keys(model).filter((k) => !required.has(k));
    return base.chain((o) =>
      Object.keys(o).length >= minProps || !optional.length
        ? fc.constant(o)
        : fc.constantFrom(...optional).chain((k) => model[k].map((v) => ({ ...o, [k]: v }))),
    );
  }
  return base;
}

/**
 * One value the schema accepts, without chance: every hinted string takes a known value (the
 * `cursor` hands them out from the last one, so that two properties of one kind get different
 * values), enums their first value, numbers their lower bound or 1, arrays one item. `full` adds
 * every optional property.
 */
export function validKnown(
  schema: Schema,
  known: Known,
  full: boolean,
  name = '',
  cursor = new Map<string, number>(),
  depth = 0,
): unknown {
  const s = norm(schema);
  if (s.const !== undefined) return s.const;
  if (s.default !== undefined && !full) return s.default;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  const types = typesOf(s);
  const t = types.find((x) => x !== 'null') ?? types[0] ?? 'object';
  switch (t) {
    case 'string': {
      const hinted = known(name).filter((v) => conforms(s, v));
      if (hinted.length) {
        const used = cursor.get(name) ?? 0;
        cursor.set(name, used + 1);
        return hinted[(hinted.length - 1 - (used % hinted.length) + hinted.length) % hinted.length];
      }
      if (suggested(s).length) return suggested(s)[0];
      if (s.format === 'date-time') return '2024-05-06T07:08:09.000Z';
      if (s.format === 'date') return '2024-05-06';
      if (s.format === 'email') return 'fuzz@example.com';
      if (s.format === 'uuid') return '0b9c1d0e-1f2a-4b3c-8d4e-5f6a7b8c9d0e';
      if (s.pattern) return fc.sample(stringArb(s), { numRuns: 1, seed: 42 })[0];
      const min = s.minLength ?? 0;
      return 'fuzz'.padEnd(Math.max(min, 1), 'z').slice(0, s.maxLength ?? 100);
    }
    case 'integer':
    case 'number': {
      if (s.exclusiveMinimum !== undefined) return Math.floor(s.exclusiveMinimum) + 1;
      if (s.minimum !== undefined) return Math.max(s.minimum, Math.min(1, s.maximum ?? 1));
      return Math.min(1, s.maximum ?? 1);
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      if (depth >= MAX_DEPTH) return [];
      const n = Math.max(s.minItems ?? 0, 1);
      return Array.from({ length: Math.min(n, s.maxItems ?? n) }, () =>
        validKnown(s.items ?? {}, known, full, name, cursor, depth + 1),
      );
    }
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, Schema>;
      const required = new Set<string>((s.required ?? []) as string[]);
      const out: Record<string, unknown> = {};
      for (const [k, ps] of Object.entries(props)) {
        if (!required.has(k) && (!full || depth >= MAX_DEPTH)) continue;
        out[k] = validKnown(ps, known, full, k, cursor, depth + 1);
      }
      const missing = (s.minProperties ?? 0) - Object.keys(out).length;
      if (missing > 0)
        for (const k of Object.keys(props)
          .filter((p) => !(p in out))
          .slice(0, missing))
          out[k] = validKnown(props[k], known, true, k, cursor, depth + 1);
      return out;
    }
    default:
      return {};
  }
}

// ---------------------------------------------------------------------------------------------
// Paths into a schema, and values put at them
// ---------------------------------------------------------------------------------------------

/** A place in a body: property names, and `0` for an array's first item. */
export interface Site {
  path: string[];
  schema: Schema;
}

/** Every place a value can go, through object properties and array items, breadth first. */
export function sites(schema: Schema, maxDepth = 4): Site[] {
  const out: Site[] = [];
  const queue: Site[] = [{ path: [], schema: norm(schema) }];
  while (queue.length) {
    const site = queue.shift()!;
    out.push(site);
    if (site.path.length >= maxDepth) continue;
    const s = site.schema;
    const types = typesOf(s);
    if (types.includes('object') && s.properties)
      for (const [k, ps] of Object.entries(s.properties as Record<string, Schema>))
        queue.push({ path: [...site.path, k], schema: norm(ps) });
    if (types.includes('array') && s.items && typeof s.items === 'object')
      queue.push({ path: [...site.path, '0'], schema: norm(s.items) });
  }
  return out;
}

export const pathName = (path: string[]) => path.join('.') || '(body)';

/** The nearest property name of a path (what hints go by): `items.0.sku` → `sku`, `skus.0` → `skus`. */
const nameOf = (path: string[]) => [...path].reverse().find((p) => p !== '0') ?? '';

/**
 * A copy of `base` with `value` at `path`; what is missing on the way is filled with the
 * schema's known-valid values (so the rest of the body stays as valid as it was).
 */
export function putAt(schema: Schema, base: unknown, path: string[], value: unknown, known: Known): unknown {
  if (!path.length) return value;
  const s = norm(schema);
  const [head, ...rest] = path;
  if (head === '0' && typesOf(s).includes('array')) {
    const arr =
      Array.isArray(base) && base.length ? [...base] : [validKnown(s.items ?? {}, known, false, nameOf(path))];
    arr[0] = putAt(s.items ?? {}, arr[0], rest, value, known);
    return arr;
  }
  const obj: Record<string, unknown> =
    base !== null && typeof base === 'object' && !Array.isArray(base) ? objectOf(Object.entries(base)) : {};
  const child = norm((s.properties ?? {})[head] ?? {});
  const current = head in obj ? obj[head] : rest.length ? validKnown(child, known, false, head) : undefined;
  Object.defineProperty(obj, head, {
    value: putAt(child, current, rest, value, known),
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return obj;
}

// ---------------------------------------------------------------------------------------------
// Near-valid values: one keyword broken
// ---------------------------------------------------------------------------------------------

const otherTypeValues: Record<string, unknown[]> = {
  string: ['text', ''],
  integer: [7, 0],
  number: [1.5, -2.25],
  boolean: [true, false],
  null: [null],
  array: [[], ['x']],
  object: [{}, { k: 1 }],
};

/** A change to the object at a site, instead of a value for it: drop a (required) key, or add an unknown one. */
class Patch {
  constructor(
    readonly drop?: string,
    readonly add?: string,
  ) {}
}

/** Values that break exactly one keyword of the schema, at its top. */
function breakHere(s: Schema, path: string): fc.Arbitrary<Gen>[] {
  const out: fc.Arbitrary<Gen>[] = [];
  const types = typesOf(s);
  const wrong = Object.entries(otherTypeValues)
    .filter(([t]) => types.length && !types.includes(t) && !(t === 'integer' && types.includes('number')))
    .flatMap(([, vs]) => vs);
  if (wrong.length)
    out.push(fc.constantFrom(...wrong).map((v) => ({ value: v, label: label(path, `wrong type ${jsonText(v)}`) })));
  if (Array.isArray(s.enum)) {
    const enumValues = s.enum as unknown[];
    const near = enumValues.filter((v) => typeof v === 'string').map((v) => `${(v as string).toUpperCase()} `);
    out.push(
      (near.length ? fc.oneof(fc.constantFrom(...near), fc.string({ maxLength: 12 })) : fc.string({ maxLength: 12 }))
        .filter((v) => !enumValues.includes(v))
        .map((v) => ({ value: v, label: label(path, `not in enum ${JSON.stringify(v)}`) })),
    );
  }
  if (s.const !== undefined)
    out.push(fc.constant({ value: `not-${String(s.const)}`, label: label(path, 'not the const') }));
  if (types.includes('string') && s.enum === undefined) {
    if (s.maxLength !== undefined && s.maxLength < 200_000)
      out.push(
        fc.integer({ min: 1, max: 20 }).map((n) => ({
          value: 'L'.repeat(s.maxLength + n),
          label: label(path, `${s.maxLength + n} characters (max ${s.maxLength})`),
        })),
      );
    if ((s.minLength ?? 0) > 0)
      out.push(fc.constant({ value: 'm'.repeat(s.minLength - 1), label: label(path, `shorter than ${s.minLength}`) }));
    if (s.pattern) {
      const re = new RegExp(s.pattern as string, 'u');
      const candidates = fc.oneof(
        fc.string({ maxLength: 20 }),
        fc.constantFrom('', ' ', 'a b', 'UPPER', '\n', 'é', ',', ','.repeat(150), 'x'.repeat(300), '-', '0'),
      );
      const notMatching = filtered(candidates, (x) => !re.test(x));
      if (notMatching)
        out.push(
          notMatching.map((x) => ({ value: x, label: label(path, `not matching ${s.pattern}: ${JSON.stringify(x)}`) })),
        );
    }
    if (s.format)
      out.push(
        fc.constant({ value: `not-a-${s.format as string}`, label: label(path, `not a ${s.format as string}`) }),
      );
  }
  if (types.includes('integer') || types.includes('number')) {
    if (s.minimum !== undefined)
      out.push(
        fc.constantFrom(1, 0.5, 1000).map((d) => ({
          value: s.minimum - d,
          label: label(path, `below minimum ${s.minimum}: ${s.minimum - d}`),
        })),
      );
    if (s.exclusiveMinimum !== undefined)
      out.push(
        fc.constant({
          value: s.exclusiveMinimum,
          label: label(path, `equal to exclusiveMinimum ${s.exclusiveMinimum}`),
        }),
      );
    if (s.maximum !== undefined)
      out.push(
        fc.constantFrom(1, 0.5, 1e6).map((d) => ({
          value: s.maximum + d,
          label: label(path, `above maximum ${s.maximum}: ${s.maximum + d}`),
        })),
      );
    if (types.includes('integer') && !types.includes('number'))
      out.push(fc.constantFrom(1.5, 2.000001).map((v) => ({ value: v, label: label(path, `not an integer: ${v}`) })));
  }
  if (types.includes('array')) {
    if (s.maxItems !== undefined && s.maxItems <= 1000)
      out.push(
        fc.constant({
          value: Array.from({ length: s.maxItems + 1 }, (_, i) => `i${i}`),
          label: label(path, `${s.maxItems + 1} items (max ${s.maxItems})`),
        }),
      );
    if ((s.minItems ?? 0) > 0) out.push(fc.constant({ value: [], label: label(path, `no items (min ${s.minItems})`) }));
    if (s.uniqueItems) out.push(fc.constant({ value: ['same', 'same'], label: label(path, 'duplicate items') }));
  }
  if (types.includes('object')) {
    if (s.additionalProperties === false)
      out.push(
        fc
          .stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,12}$/)
          .filter((k) => !(k in (s.properties ?? {})))
          .map((k) => ({ value: new Patch(undefined, k), label: label(path, `unknown property ${k}`) })),
      );
    for (const r of (s.required ?? []) as string[])
      out.push(
        fc.constant({
          value: new Patch(r),
          label: label(path && path !== '(body)' ? `${path}.${r}` : r, 'required, missing'),
        }),
      );
    if (s.minProperties)
      out.push(fc.constant({ value: {}, label: label(path, `fewer than ${s.minProperties} properties`) }));
  }
  return out;
}

/**
 * A value valid per the schema but for one keyword, somewhere in it: the site is chosen among
 * every place of the schema; at an object, breaking `required` drops a required property and
 * `additionalProperties` adds an unknown one to an otherwise valid object.
 */
export function nearValidArb(schema: Schema, known: Known): fc.Arbitrary<Gen> {
  const base = validArb(schema, known);
  const choices: fc.Arbitrary<Gen>[] = [];
  for (const site of sites(schema))
    for (const arb of breakHere(site.schema, pathName(site.path)))
      choices.push(
        fc.tuple(base, arb).map(([b, broken]) => ({
          value: applyBroken(schema, b, site, broken.value, known),
          label: `near-valid ${broken.label}`,
        })),
      );
  return choices.length ? fc.oneof(...choices) : fc.constant({ value: {}, label: 'near-valid: nothing to break' });
}

function applyBroken(schema: Schema, base: unknown, site: Site, broken: unknown, known: Known): unknown {
  if (!(broken instanceof Patch)) return putAt(schema, base, site.path, broken, known);
  // an object site: merged into the object there (the known-valid one when the base has none)
  const existing = getAt(base, site.path);
  const obj =
    existing && typeof existing === 'object' && !Array.isArray(existing)
      ? { ...(existing as Record<string, unknown>) }
      : (validKnown(site.schema, known, false) as Record<string, unknown>);
  if (broken.drop) delete obj[broken.drop];
  if (broken.add)
    Object.defineProperty(obj, broken.add, { value: 1, enumerable: true, writable: true, configurable: true });
  return putAt(schema, base, site.path, obj, known);
}

function getAt(value: unknown, path: string[]): unknown {
  let v = value;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[p];
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// Hostile values
// ---------------------------------------------------------------------------------------------

const hostileKeysObject = (inner: unknown = 1) =>
  objectOf(
    HOSTILE_KEYS.map((k) => [k, k === '__proto__' || k === 'constructor' ? objectOf([['polluted', inner]]) : inner]),
  );

/** A hostile value for any place, whatever its schema says. */
export const hostileValue: fc.Arbitrary<Gen> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(...HOSTILE_STRINGS).map((v) => ({ value: v, label: `string ${JSON.stringify(v)}` })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...LONG_STRINGS).map((v) => ({ value: v, label: `string of ${v.length} units` })),
  },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: 'binary', maxLength: 30 })
      .map((v) => ({ value: v, label: `string ${JSON.stringify(v)}` })),
  },
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_NUMBERS).map((v) => ({ value: v, label: `number ${v.text}` })) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(deepObject(), deepArray(), deepObject(1000)).map((v) => ({ value: v, label: v.note })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom<[string, unknown]>(
        ['{$gt: ""}', { $gt: '' }],
        ['{$ne: null}', { $ne: null }],
        ['{$where: "1"}', { $where: '1' }],
        ['{$regex: ".*"}', { $regex: '.*' }],
        ['prototype keys', hostileKeysObject()],
        ['{}', {}],
        ['[]', []],
        ['null', null],
        ['true', true],
        [`${LONG_ARRAY} strings`, Array.from({ length: LONG_ARRAY }, (_, i) => `v${i}`)],
        [`${LONG_ARRAY} numbers`, Array.from({ length: LONG_ARRAY }, (_, i) => i)],
        ['[null]', [null]],
      )
      .map(([l, v]) => ({ value: v, label: l })),
  },
);

/** A valid body with one hostile value somewhere in it (or as the whole body), or hostile keys in one of its objects. */
export function hostileBodyArb(schema: Schema, known: Known): fc.Arbitrary<Gen> {
  const all = sites(schema);
  const objects = all.filter((site) => typesOf(site.schema).includes('object') || isFreeForm(site.schema));
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.tuple(validArb(schema, known), fc.constantFrom(...all), hostileValue).map(([base, site, h]) => ({
        value: putAt(schema, base, site.path, h.value, known),
        label: `hostile ${label(pathName(site.path), h.label)}`,
      })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(validArb(schema, known), fc.constantFrom(...objects)).map(([base, site]) => ({
        value: putAt(schema, base, site.path, mergeKeys(getAt(base, site.path), hostileKeysObject()), known),
        label: `hostile ${label(pathName(site.path), 'prototype and operator keys')}`,
      })),
    },
  );
}

function mergeKeys(base: unknown, extra: Record<string, unknown>): Record<string, unknown> {
  const entries = base && typeof base === 'object' && !Array.isArray(base) ? Object.entries(base) : [];
  return objectOf([...entries, ...Object.keys(extra).map((k): [string, unknown] => [k, extra[k]])]);
}

// ---------------------------------------------------------------------------------------------
// Query strings
// ---------------------------------------------------------------------------------------------

/** One `key=value` of a query string; `raw` parts are sent as written (already percent-encoded). */
export interface QueryPart {
  key: string;
  value: string;
  raw?: boolean;
}

export const queryText = (parts: QueryPart[]): string =>
  parts.length
    ? `?${parts.map((p) => (p.raw ? `${p.key}=${p.value}` : `${encodePart(p.key)}=${encodePart(p.value)}`)).join('&')}`
    : '';

/** A value as a query string carries it: numbers and booleans as text, arrays as repeated keys. */
function queryStrings(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(queryStrings);
  if (value === null || value === undefined) return [''];
  if (typeof value === 'object') return [JSON.stringify(value)];
  return [String(value)];
}

export const toQuery = (values: Record<string, unknown>): QueryPart[] =>
  Object.entries(values).flatMap(([key, v]) => queryStrings(v).map((value) => ({ key, value })));

export function queryValidArb(schema: Schema, known: Known): fc.Arbitrary<Gen> {
  return validArb(schema, known).map((v) => ({ value: toQuery(v as Record<string, unknown>), label: 'valid query' }));
}

/** One parameter broken (wrong type, out of range, too long, not in its enum, unknown, missing). */
export function queryNearValidArb(schema: Schema, known: Known): fc.Arbitrary<Gen> {
  const s = norm(schema);
  type Break = [key: string, value: unknown, label: string];
  const breaks: fc.Arbitrary<Break>[] = [];
  // at the top: an unknown parameter, a required one missing
  if (s.additionalProperties === false)
    breaks.push(
      fc
        .stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,12}$/)
        .filter((k) => !(k in (s.properties ?? {})))
        .map((k): Break => ['', new Patch(undefined, k), `unknown parameter ${k}`]),
    );
  for (const r of (s.required ?? []) as string[])
    breaks.push(fc.constant<Break>(['', new Patch(r), `${r}: required, missing`]));
  for (const [k, raw] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
    const p = norm(raw);
    const types = typesOf(p);
    const list = breakHere(p, k);
    if (types.includes('integer') || types.includes('number'))
      list.push(
        fc
          .constantFrom('abc', '1.5', '', ' 1', '1,2')
          .map((v) => ({ value: v, label: `${k}: not a number ${JSON.stringify(v)}` })),
      );
    if (types.includes('boolean'))
      list.push(
        fc.constantFrom('yes', '2', '').map((v) => ({ value: v, label: `${k}: not a boolean ${JSON.stringify(v)}` })),
      );
    for (const arb of list) breaks.push(arb.map((g): Break => [k, g.value, g.label]));
  }
  if (!breaks.length) return queryValidArb(schema, known);
  return fc.tuple(validArb(schema, known), fc.oneof(...breaks)).map(([base, [k, v, l]]) => {
    const values = { ...(base as Record<string, unknown>) };
    if (v instanceof Patch) {
      if (v.drop) delete values[v.drop];
      if (v.add)
        Object.defineProperty(values, v.add, { value: 'x', enumerable: true, writable: true, configurable: true });
    } else values[k] = v;
    return { value: toQuery(values), label: `near-valid query ${l}` };
  });
}

export function queryHostileArb(schema: Schema, known: Known): fc.Arbitrary<Gen> {
  const names = Object.keys(norm(schema).properties ?? {});
  const hostileKey = fc.constantFrom(...HOSTILE_KEYS.filter(Boolean), 'page[$gt]', 'q[]');
  return fc
    .tuple(validArb(schema, known), fc.constantFrom(...HOSTILE_QUERY_VALUES), fc.nat())
    .chain(([base, hv, pick]) => {
      const values = base as Record<string, unknown>;
      const parts = toQuery(values);
      const options: fc.Arbitrary<Gen>[] = [
        hostileKey.map((k) => ({
          value: [...parts, { key: k, value: hv }],
          label: `hostile query key ${JSON.stringify(k)}=${JSON.stringify(hv.slice(0, 40))}`,
        })),
        fc.constantFrom('%00', '%', '%zz', '%E0%A4%A', '%ED%A0%80').map((raw) => {
          const k = names.length ? names[pick % names.length] : 'q';
          return {
            value: [...parts.filter((p) => p.key !== k), { key: encodePart(k), value: raw, raw: true }],
            label: `hostile query ${k}=${raw} (sent raw)`,
          };
        }),
      ];
      if (names.length) {
        const k = names[pick % names.length];
        options.push(
          fc.constant({
            value: [...parts.filter((p) => p.key !== k), { key: k, value: hv }],
            label: `hostile query ${k}=${JSON.stringify(hv.slice(0, 40))}`,
          }),
          fc.constant({
            value: [...parts.filter((p) => p.key !== k), ...[1, 2, 3].map(() => ({ key: k, value: hv }))],
            label: `hostile query ${k} repeated ×3 as ${JSON.stringify(hv.slice(0, 40))}`,
          }),
          // every parameter at once only with short values: a long one in each would pass the 16 KiB
          // Node's HTTP server takes for the request line and headers (a 431 before the app sees it)
          hv.length <= 200
            ? fc.constant({
                value: names.map((n) => ({ key: n, value: hv })),
                label: `hostile query: every parameter ${JSON.stringify(hv)}`,
              })
            : fc.constant({ value: parts, label: 'valid query' }),
        );
      }
      return fc.oneof(...options);
    });
}

// ---------------------------------------------------------------------------------------------
// Path parameters
// ---------------------------------------------------------------------------------------------

/** A path parameter value; `raw` ones are sent as written. */
export interface PathValue {
  text: string;
  raw?: boolean;
}

export const pathSegment = (v: PathValue) => (v.raw ? v.text : encodePart(v.text));

export function pathValidArb(name: string, known: Known): fc.Arbitrary<PathValue> {
  const real = known(name);
  const made = fc.oneof(objectId, fc.stringMatching(/^[A-Za-z0-9_-]{1,30}$/));
  return (
    real.length ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...real) }, { weight: 1, arbitrary: made }) : made
  ).map((text) => ({ text }));
}

export const pathHostileArb: fc.Arbitrary<PathValue> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_PATH_VALUES).map((text) => ({ text })) },
  { weight: 2, arbitrary: fc.constantFrom(...RAW_PATH_VALUES).map((text) => ({ text, raw: true })) },
  { weight: 1, arbitrary: objectId.map((text) => ({ text })) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map((text) => ({ text })) },
);

// ---------------------------------------------------------------------------------------------
// Operations and cases
// ---------------------------------------------------------------------------------------------

/** One operation of the document, as the generators need it. */
export interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** The document's path, `/orders/{orderId}`. */
  path: string;
  params: string[];
  /** The query parameters as one object schema (unknown parameters counted as a broken keyword). */
  query?: Schema;
  body?: Schema;
  bodyRequired: boolean;
  /** The statuses the operation declares. */
  statuses: number[];
}

export const routeName = (op: Pick<Operation, 'method' | 'path'>) => `${op.method.toUpperCase()} ${op.path}`;
export const isWrite = (op: Pick<Operation, 'method'>) => op.method !== 'get';

/** Every operation of an OpenAPI document, in its order. */
export function operations(doc: any): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const parameters = (op.parameters ?? []) as { name: string; in: string; required?: boolean; schema?: Schema }[];
      const query = parameters.filter((p) => p.in === 'query');
      const body = op.requestBody?.content?.['application/json']?.schema as Schema | undefined;
      out.push({
        method: method as Operation['method'],
        path,
        params: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        query: query.length
          ? {
              type: 'object',
              additionalProperties: false,
              properties: Object.fromEntries(query.map((p) => [p.name, p.schema ?? {}])),
              required: query.filter((p) => p.required).map((p) => p.name),
            }
          : undefined,
        body,
        bodyRequired: Boolean(body && op.requestBody?.required !== false),
        statuses: Object.keys(op.responses ?? {}).map(Number),
      });
    }
  }
  return out;
}

/** The tenant's real values: for a path parameter by name, and for a body or query property by name. */
export interface Hints {
  path: Known;
  value: Known;
}

/** One generated request (sent `concurrency` times at once: see STAGGER_MS). */
export interface FuzzCase {
  label: string;
  params: Record<string, PathValue>;
  query: QueryPart[];
  /** JSON text, or another body sent as `contentType`; absent: no body. */
  body?: { text: string; contentType?: string };
  concurrency: number;
  /** `/v1` serves every route too. */
  prefix: '' | '/v1';
}

/**
 * When the copies of a concurrent case leave, in ms after the first: races are lost in the window
 * between one request's first write and its last (a job record before its workflow, say), so the
 * copies are spread over it rather than all sent in the same tick.
 */
export const STAGGER_MS = [0, 1, 2, 3, 5, 8, 12, 17, 23, 30];
/** Copies of the sweep's race cases (the random ones send 3). */
const RACE_COPIES = STAGGER_MS.length;

export const requestPath = (op: Operation, c: Pick<FuzzCase, 'params' | 'query' | 'prefix'>) =>
  c.prefix + op.path.replace(/\{([^}]+)\}/g, (_, name: string) => pathSegment(c.params[name])) + queryText(c.query);

const jsonBody = (value: unknown) => ({ text: jsonText(value) });

/** Whole bodies that are not the schema's shape at all, or not JSON. */
const hostileWholeBody: fc.Arbitrary<{ body?: FuzzCase['body']; label: string }> = fc.constantFrom(
  { body: { text: deepObject().text }, label: `body: ${deepObject().note}` },
  { body: { text: deepArray().text }, label: `body: ${deepArray().note}` },
  { body: { text: jsonText(hostileKeysObject()) }, label: 'body: prototype and operator keys' },
  { body: { text: 'null' }, label: 'body: null' },
  { body: { text: '[]' }, label: 'body: []' },
  { body: { text: '"__proto__"' }, label: 'body: "__proto__"' },
  { body: { text: '1e309' }, label: 'body: 1e309' },
  { body: { text: '{"a":1}{"b":2}' }, label: 'body: two JSON texts' },
  { body: { text: '{' }, label: 'body: truncated JSON' },
  { body: { text: '\ufeff{}' }, label: 'body: BOM then {}' },
  { body: { text: '{"a":"\\ud800"}' }, label: 'body: escaped lone surrogate' },
  { body: { text: 'a,b\n1,2', contentType: 'text/csv' }, label: 'body: text/csv' },
  { body: undefined, label: 'no body' },
);

export interface CaseOptions {
  /** Weight of cases sent several times at once (write routes). */
  concurrent: boolean;
}

/** Random cases: valid, near-valid (one keyword broken in one part) or hostile (in one part). */
export function caseArb(op: Operation, hints: Hints, options: CaseOptions): fc.Arbitrary<FuzzCase> {
  const params = (arb: (name: string) => fc.Arbitrary<PathValue>) =>
    op.params.length
      ? fc.record(Object.fromEntries(op.params.map((p) => [p, arb(p)])) as Record<string, fc.Arbitrary<PathValue>>)
      : fc.constant({} as Record<string, PathValue>);
  const validParams = params((p) => pathValidArb(p, hints.path));
  const validQuery = op.query ? queryValidArb(op.query, hints.value) : fc.constant({ value: [], label: '' });
  const validBody: fc.Arbitrary<{ body?: FuzzCase['body']; label: string }> = op.body
    ? fc.oneof(
        {
          weight: 5,
          arbitrary: validArb(op.body, hints.value).map((v) => ({ body: jsonBody(v), label: 'valid body' })),
        },
        ...(op.bodyRequired ? [] : [{ weight: 1, arbitrary: fc.constant({ body: undefined, label: 'no body' }) }]),
      )
    : fc.constant({ body: undefined, label: '' });
  const concurrency = options.concurrent
    ? fc.oneof({ weight: 5, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.constant(3) })
    : fc.constant(1);
  const prefix = fc.oneof(
    { weight: 9, arbitrary: fc.constant('' as const) },
    { weight: 1, arbitrary: fc.constant('/v1' as const) },
  );

  type Parts = [Record<string, PathValue>, Gen, { body?: FuzzCase['body']; label: string }, string];
  const compose = (parts: fc.Arbitrary<Parts>) =>
    fc.tuple(parts, concurrency, prefix).map(([[p, q, b, focus], n, pre]): FuzzCase => ({
      label: [focus, q.label, b.label].filter(Boolean).join('; ') || 'valid',
      params: p,
      query: q.value as QueryPart[],
      body: b.body,
      concurrency: n,
      prefix: pre,
    }));
  const kinds: { weight: number; arbitrary: fc.Arbitrary<FuzzCase> }[] = [
    {
      weight: 4,
      arbitrary: compose(fc.tuple(validParams, validQuery, validBody, fc.constant('valid'))),
    },
  ];
  if (op.params.length) {
    const one = fc.constantFrom(...op.params);
    kinds.push({
      weight: 2,
      arbitrary: compose(
        fc
          .tuple(validParams, one, pathHostileArb, validQuery, validBody)
          .map(([p, name, h, q, b]): Parts => [
            { ...p, [name]: h },
            q,
            b,
            `hostile path ${name}=${JSON.stringify(h.text.slice(0, 60))}${h.raw ? ' (sent raw)' : ''}`,
          ]),
      ),
    });
  }
  if (op.query) {
    kinds.push(
      {
        weight: 2,
        arbitrary: compose(fc.tuple(validParams, queryNearValidArb(op.query, hints.value), validBody, fc.constant(''))),
      },
      {
        weight: 2,
        arbitrary: compose(fc.tuple(validParams, queryHostileArb(op.query, hints.value), validBody, fc.constant(''))),
      },
    );
  }
  if (op.body) {
    const body = op.body;
    kinds.push(
      {
        weight: 3,
        arbitrary: compose(
          fc.tuple(
            validParams,
            validQuery,
            nearValidArb(body, hints.value).map((g) => ({ body: jsonBody(g.value), label: g.label })),
            fc.constant(''),
          ),
        ),
      },
      {
        weight: 3,
        arbitrary: compose(
          fc.tuple(
            validParams,
            validQuery,
            hostileBodyArb(body, hints.value).map((g) => ({ body: jsonBody(g.value), label: g.label })),
            fc.constant(''),
          ),
        ),
      },
      { weight: 1, arbitrary: compose(fc.tuple(validParams, validQuery, hostileWholeBody, fc.constant('hostile'))) },
    );
  }
  return fc.oneof(...kinds);
}

/**
 * The deterministic part: every hostile class at every place the schema gives it, so that each is
 * tried on every route at every run (chance alone would leave most of them to luck):
 *   - valid with the tenant's real values: once with only the required properties (on a write
 *     route sent RACE_COPIES times a few ms apart, and again on up to four more real values
 *     of the first path parameter), once with every property;
 *   - path: every parameter with a NUL byte after its real value; every parameter `__proto__`;
 *     a valid-looking ObjectId;
 *   - query: each numeric parameter (up to 6) `1e309` (Infinity), each free text one (up to 6)
 *     with a NUL byte, one at a time (a range check on another would answer first); every free
 *     text parameter `constructor`; prototype names as parameter names;
 *   - body: each free text property (up to 16) `__proto__`, `toString` or `constructor` in turn;
 *     every free text property with a NUL byte, then odd Unicode; each array (up to 6) with
 *     20,000 items; each number (up to 8) `1e309`, then all of them; JSON nested 5,000 deep as
 *     the whole body and in each free-form property (up to 3); prototype keys in the top object.
 * Free texts are strings without enum, const, pattern or format; the values they start from are
 * the tenant's real ones (hints) or those their description names (`one of native, shopify, …`).
 */
export function sweepCases(op: Operation, hints: Hints, options: CaseOptions): FuzzCase[] {
  const out: FuzzCase[] = [];
  const realParams = () =>
    Object.fromEntries(op.params.map((p) => [p, { text: hints.path(p)[0] ?? 'ffffffffffffffffffffffff' }])) as Record<
      string,
      PathValue
    >;
  const baseQuery = (full: boolean) =>
    op.query ? (validKnown(op.query, hints.value, full) as Record<string, unknown>) : {};
  const baseBody = (full: boolean) => (op.body ? validKnown(op.body, hints.value, full) : undefined);
  const add = (label: string, parts: Partial<FuzzCase> & { bodyValue?: unknown }) => {
    const { bodyValue, ...rest } = parts;
    out.push({
      label: `sweep: ${label}`,
      params: realParams(),
      query: toQuery(baseQuery(false)),
      body: bodyValue !== undefined ? jsonBody(bodyValue) : op.body ? jsonBody(baseBody(false)) : undefined,
      concurrency: 1,
      prefix: '',
      ...rest,
    });
  };

  add('valid, required properties, real values', { concurrency: options.concurrent ? RACE_COPIES : 1 });
  // more races on the other real resources of the first path parameter (a race is won or lost on
  // timing; and the first resource may be spent: deleted, rolled back, moved on)
  if (options.concurrent && op.params.length)
    for (const other of hints.path(op.params[0]).slice(1, 5))
      add(`valid, required properties, ${op.params[0]} ${other}`, {
        concurrency: RACE_COPIES,
        params: { ...realParams(), [op.params[0]]: { text: other } },
      });
  add('valid, every property, real values', { query: toQuery(baseQuery(true)), bodyValue: baseBody(true) });

  if (op.params.length) {
    const withNul = Object.fromEntries(op.params.map((p) => [p, { text: `${hints.path(p)[0] ?? 'x'}\u0000` }]));
    add('every path parameter + NUL', { params: withNul });
    add('every path parameter __proto__', {
      params: Object.fromEntries(op.params.map((p) => [p, { text: '__proto__' }])),
    });
    add('every path parameter an unknown ObjectId', {
      params: Object.fromEntries(op.params.map((p) => [p, { text: '0123456789abcdef01234567' }])),
    });
  }

  if (op.query) {
    const props = Object.entries((norm(op.query).properties ?? {}) as Record<string, Schema>);
    const numeric = props.filter(([, s]) => isNumeric(s)).map(([k]) => k);
    const free = props.filter(([, s]) => isFreeString(s)).map(([k]) => k);
    const q = baseQuery(false);
    const set = (keys: string[], value: string) =>
      toQuery({ ...q, ...Object.fromEntries(keys.map((k) => [k, value])) });
    // one parameter at a time: a range check on another would answer first
    for (const k of numeric.slice(0, 6)) add(`query ${k}=1e309`, { query: set([k], '1e309') });
    for (const k of free.slice(0, 6)) add(`query ${k} with a NUL byte`, { query: set([k], 'linen\u0000') });
    if (free.length) add(`query ${free.join(', ')} = constructor`, { query: set(free, 'constructor') });
    add('query keys __proto__, constructor, toString', {
      query: [...toQuery(q), ...PROTO_WORDS.map((k) => ({ key: k, value: 'x' }))],
    });
  }

  if (op.body) {
    const schema = op.body;
    const all = sites(schema);
    const base = baseBody(false);
    const at = (site: Site, value: unknown) => putAt(schema, base, site.path, value, hints.value);
    const atAll = (list: Site[], value: (s: Site) => unknown) =>
      list.reduce<unknown>((b, site) => putAt(schema, b, site.path, value(site), hints.value), base);
    const free = all.filter((site) => site.path.length && isFreeString(site.schema)).slice(0, 16);
    free.forEach((site, i) => {
      const word = PROTO_WORDS[i % PROTO_WORDS.length];
      add(`body ${pathName(site.path)} = ${word}`, { bodyValue: at(site, word) });
    });
    if (free.length) {
      add('every free text with a NUL byte', { bodyValue: atAll(free, () => 'a\u0000b') });
      add('every free text odd Unicode', { bodyValue: atAll(free, () => '\ud800😀\u202ee\u0301\ufeff') });
    }
    const arrays = all.filter((site) => site.path.length && typesOf(site.schema).includes('array')).slice(0, 6);
    for (const site of arrays) {
      const item = validKnown(site.schema.items ?? {}, hints.value, false, site.path[site.path.length - 1]);
      const items =
        typeof item === 'string'
          ? Array.from({ length: LONG_ARRAY }, (_, i) => `${item}${i}`)
          : Array.from({ length: Math.min(LONG_ARRAY, Math.floor(800_000 / jsonText(item).length)) }, () => item);
      add(`body ${pathName(site.path)} with ${items.length} items`, { bodyValue: at(site, items) });
    }
    // one number at a time (a range check on another would answer first), then all of them
    const numbers = all.filter((site) => site.path.length && isNumeric(site.schema));
    for (const site of numbers.slice(0, 8))
      add(`body ${pathName(site.path)} = 1e309`, { bodyValue: at(site, new Raw('1e309', '1e309')) });
    if (numbers.length > 1)
      add('every number 1e309', { bodyValue: atAll(numbers.slice(0, 16), () => new Raw('1e309', '1e309')) });
    add(`body: ${deepObject().note}`, { body: { text: deepObject().text } });
    add(`body: ${deepArray().note}`, { body: { text: deepArray().text } });
    const freeForm = all.filter((site) => site.path.length && isFreeForm(site.schema)).slice(0, 3);
    for (const site of freeForm.length ? freeForm : all.filter((s) => s.path.length === 1).slice(0, 1))
      add(`body ${pathName(site.path)} = ${deepObject().note}`, { bodyValue: at(site, deepObject()) });
    add('prototype and operator keys in the body', {
      bodyValue: mergeKeys(base, hostileKeysObject()),
    });
  }
  return out;
}

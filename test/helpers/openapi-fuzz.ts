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
const isNumeric = (schema: Schema) => typesOf(schema).some((t) => t === 'number' || t === 'integer');

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
  if (s.format === 'email') return fc.emailAddress().filter((e) => e.length <= (s.maxLength ?? 320));
  if (s.format === 'uuid') return fc.uuid();
  if (s.format === 'uri' || s.format === 'url') return fc.webUrl();
  if (s.pattern) {
    const re = new RegExp(s.pattern as string, 'u');
    return fc
      .stringMatching(re)
      .filter((x) => x.length >= min && x.length <= (s.maxLength ?? Infinity))
      .noShrink();
  }
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ minLength: min, maxLength: max }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: min, maxLength: max }) },
  );
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
      fc.integer({ min: Math.max(min, -10), max: Math.min(max, 10) }).filter((n) => n >= min && n <= max),
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
      case 'string':
        arbs.push(hinted.length ? fc.oneof(fc.constantFrom(...hinted), stringArb(s)) : stringArb(s));
        break;
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
      const hinted = known(name);
      if (hinted.length) {
        const used = cursor.get(name) ?? 0;
        cursor.set(name, used + 1);
        return hinted[(hinted.length - 1 - (used % hinted.length) + hinted.length) % hinted.length];
      }
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
      out.push(
        fc
          .string({ maxLength: 20 })
          .filter((x) => !re.test(x))
          .map((x) => ({ value: x, label: label(path, `not matching ${s.pattern}: ${JSON.stringify(x)}`) })),
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
      out.push(fc.constant({ value: new Patch(r), label: label(path ? `${path}.${r}` : r, 'required, missing') }));
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
  if (broken.add) obj[broken.add] = 1;
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
  for (const arb of breakHere(s, ''))
    breaks.push(arb.filter((g) => g.value instanceof Patch).map((g): Break => ['', g.value, g.label]));
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
      if (v.add) values[v.add] = 'x';
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
          fc.constant({
            value: names.map((n) => ({ key: n, value: hv })),
            label: `hostile query: every parameter ${JSON.stringify(hv.slice(0, 40))}`,
          }),
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

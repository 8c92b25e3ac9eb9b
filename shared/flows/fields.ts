import { productInputSchema, variantSchema } from '../products/schema';
import type { JsonSchema } from '../validation';

/**
 * Field paths: what a flow (or an AI transform) may name, typed by walking the product's JSON
 * schema (productProperties), and how such a field is read, written and cleared.
 *
 * - A stored field by its name and nested path through objects: `price`, `seo.metaTitle`,
 *   `shipping.dimensions.length`. Paths do not go through lists (there is no `media.src`), except:
 * - `variants.<path>`: the field on every variant (variantSchema).
 * - `metafields.<namespace>.<key>`: the value of the metafield with that namespace and key. The
 *   namespace is the text up to the first dot and the key is the rest (a key may hold dots); a
 *   metafield without a namespace is addressed with the namespace `default`.
 * - A translated text (`{value, translations[]}`) named alone means its value: `title` is
 *   `title.value`, `variants.title` is `variants.title.value`.
 */

export type FieldKind = 'text' | 'number' | 'boolean' | 'date' | 'list' | 'structure' | 'any';

/** What clearing a field does. */
export type ClearMode =
  | 'delete' // an optional field without default: removed
  | 'default' // a field with a default: back to it
  | 'empty' // a list: emptied
  | 'delete-parent' // the value of an optional translated text: the text goes, translations with it
  | 'refuse'; // a required field: clearing is a validation error

export interface FieldInfo {
  /** The canonical path (`title` → `title.value`). */
  path: string;
  /** Where the value lives: on the product, on each variant, or in a metafield. */
  scope: 'product' | 'variant' | 'metafield';
  /** Property names from the product (scope product) or from a variant (scope variant). */
  segments: string[];
  /** The object schema that holds each segment: `parents[i].properties[segments[i]]`. */
  parents: JsonSchema[];
  metafield?: { namespace: string; key: string };
  /** The JSON schema of the value (`{}` for a metafield, whose type is the product's business). */
  schema: JsonSchema;
  kind: FieldKind;
  /** For a list: the kind of its items. */
  itemKind?: FieldKind;
  readOnly: boolean;
  clear: ClearMode;
}

type Obj = Record<string, unknown>;

/** Fields the server manages: readable in conditions, never written by a flow. */
const SERVER_FIELDS: Record<string, JsonSchema> = {
  _id: { type: 'string' },
  id: { type: 'string' },
  tenantId: { type: 'string' },
  version: { type: 'integer' },
  createdAt: { type: 'string', format: 'date-time' },
  updatedAt: { type: 'string', format: 'date-time' },
};
/** SKUs change only through product writes; bindings belong to publication; variants carry their SKUs. */
const READ_ONLY_PRODUCT = new Set(['sku', 'bindings', 'variants', ...Object.keys(SERVER_FIELDS)]);
const READ_ONLY_VARIANT = new Set(['sku', 'bindings', 'id', 'parentSku', 'productSku']);
const MAX_PATH = 300;
const DEFAULT_NAMESPACE = 'default';

export function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** The schema's types, `null` left out (a nullable number is a number). */
function typesOf(schema: JsonSchema): string[] {
  const t = schema.type;
  return (Array.isArray(t) ? (t as string[]) : typeof t === 'string' ? [t] : []).filter((x) => x !== 'null');
}

export function kindOf(schema: JsonSchema): FieldKind {
  const types = typesOf(schema);
  if (types.length !== 1) return types.length === 0 && schema.properties ? 'structure' : 'any';
  switch (types[0]) {
    case 'string':
      return schema.format === 'date-time' || schema.format === 'date' ? 'date' : 'text';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array': {
      const items = kindOf((schema.items as JsonSchema | undefined) ?? {});
      return items === 'text' || items === 'number' || items === 'boolean' ? 'list' : 'structure';
    }
    default:
      return 'structure';
  }
}

function isTranslated(schema: JsonSchema): boolean {
  const props = schema.properties as Record<string, JsonSchema> | undefined;
  return typesOf(schema)[0] === 'object' && !!props?.value && !!props?.translations;
}

const propsOf = (schema: JsonSchema) => (schema.properties ?? {}) as Record<string, JsonSchema>;
const requires = (schema: JsonSchema, name: string) => ((schema.required as string[] | undefined) ?? []).includes(name);

function clearModeOf(schema: JsonSchema, kind: FieldKind, segments: string[], parents: JsonSchema[]): ClearMode {
  if (kind === 'list' || typesOf(schema)[0] === 'array') return 'empty';
  if ('default' in schema) return 'default';
  const last = segments.length - 1;
  if (!requires(parents[last], segments[last])) return 'delete';
  // `description.value` is required inside description, but description itself is optional
  if (
    last > 0 &&
    segments[last] === 'value' &&
    isTranslated(parents[last]) &&
    !requires(parents[last - 1], segments[last - 1])
  )
    return 'delete-parent';
  return 'refuse';
}

/** Walks object schemas from `root` along `segments`; null when a step is not a property of an object. */
function walk(
  root: JsonSchema,
  names: string[],
): { schema: JsonSchema; segments: string[]; parents: JsonSchema[] } | null {
  let parent = root;
  let schema: JsonSchema | undefined;
  const parents: JsonSchema[] = [];
  for (const [i, name] of names.entries()) {
    if (i > 0) {
      if (typesOf(schema!)[0] !== 'object') return null;
      parent = schema!;
    }
    const props = propsOf(parent);
    if (!Object.hasOwn(props, name)) return null;
    parents.push(parent);
    schema = props[name];
  }
  const segments = [...names];
  if (isTranslated(schema!)) {
    parents.push(schema!);
    segments.push('value');
    schema = propsOf(schema!).value;
  }
  return { schema: schema!, segments, parents };
}

function resolveUncached(path: string): FieldInfo | null {
  if (!path || path.length > MAX_PATH) return null;
  const names = path.split('.');
  if (names.some((n) => n === '')) return null;
  if (names[0] === 'metafields' && names.length >= 3) {
    const namespace = names[1];
    const key = names.slice(2).join('.');
    if (namespace.length > 100 || key.length > 200) return null;
    return {
      path,
      scope: 'metafield',
      segments: [],
      parents: [],
      metafield: { namespace, key },
      schema: {},
      kind: 'any',
      readOnly: false,
      clear: 'delete',
    };
  }
  if (names.length === 1 && Object.hasOwn(SERVER_FIELDS, names[0])) {
    const schema = SERVER_FIELDS[names[0]];
    const kind = kindOf(schema);
    return { path, scope: 'product', segments: names, parents: [{}], schema, kind, readOnly: true, clear: 'refuse' };
  }
  const inVariant = names[0] === 'variants' && names.length > 1;
  const found = inVariant ? walk(variantSchema, names.slice(1)) : walk(productInputSchema, names);
  if (!found) return null;
  const { schema, segments, parents } = found;
  const kind = kindOf(schema);
  const readOnly = (inVariant ? READ_ONLY_VARIANT : READ_ONLY_PRODUCT).has(segments[0]);
  return {
    path: (inVariant ? ['variants', ...segments] : segments).join('.'),
    scope: inVariant ? 'variant' : 'product',
    segments,
    parents,
    schema,
    kind,
    ...(kind === 'list' ? { itemKind: kindOf(schema.items as JsonSchema) } : {}),
    readOnly,
    clear: clearModeOf(schema, kind, segments, parents),
  };
}

// Resolution walks schemas; a flow run resolves the same few paths for every product. Bounded,
// because paths come from clients.
const resolved = new Map<string, FieldInfo | null>();

/** The field a path names, typed; null for a path that names no field. Treat the answer as read-only. */
export function resolveField(path: string): FieldInfo | null {
  if (resolved.has(path)) return resolved.get(path)!;
  const info = resolveUncached(path);
  if (resolved.size >= 2000) resolved.clear();
  resolved.set(path, info);
  return info;
}

/** Why a path names no field, for an error message. */
export function unknownFieldMessage(path: string): string {
  const names = path.split('.');
  if (names[0] === 'metafields' && names.length === 2)
    return `unknown field "${path}": a metafield is metafields.<namespace>.<key> (namespace "default" for none)`;
  return `unknown field "${path}"`;
}

/** The JSON schema of the value at a path (`title` → the schema of title.value); null for an unknown path. */
export function fieldSchemaAt(path: string): JsonSchema | null {
  return resolveField(path)?.schema ?? null;
}

export function isWritableField(path: string): boolean {
  const info = resolveField(path);
  return !!info && !info.readOnly;
}

// ---------------------------------------------------------------------------------------------
// Reading and writing one resolved field. A variant field is read and written on the variant
// object passed as `variant`; the product-level exports below apply it to every variant.

const sameNamespace = (m: Obj, namespace: string) =>
  ((m.namespace as string | undefined) || DEFAULT_NAMESPACE) === namespace;

function metafieldIndex(product: Obj, { namespace, key }: { namespace: string; key: string }): number {
  const list = product.metafields;
  return Array.isArray(list) ? list.findIndex((m) => isObject(m) && m.key === key && sameNamespace(m, namespace)) : -1;
}

/** The metafield type a new metafield gets from its value. */
export function metafieldTypeOf(value: unknown): string {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return 'number_decimal';
  if (typeof value === 'boolean') return 'boolean';
  return 'json';
}

function holderOf(product: Obj, info: FieldInfo, variant: Obj | undefined): Obj {
  if (info.scope !== 'variant') return product;
  if (!variant) throw new Error(`${info.path} is a variant field: read it on a variant`);
  return variant;
}

export function readAt(product: Obj, info: FieldInfo, variant?: Obj): unknown {
  if (info.scope === 'metafield') {
    const i = metafieldIndex(product, info.metafield!);
    return i < 0 ? undefined : ((product.metafields as Obj[])[i].value as unknown);
  }
  let at: unknown = holderOf(product, info, variant);
  for (const name of info.segments) {
    if (!isObject(at) || !Object.hasOwn(at, name)) return undefined;
    at = at[name];
  }
  return at;
}

/** A new object for a schema, with the defaults of its properties (a new category gets `channels: []`). */
function newObject(schema: JsonSchema): Obj {
  const out: Obj = {};
  for (const [name, prop] of Object.entries(propsOf(schema)))
    if ('default' in prop) out[name] = structuredCopy(prop.default);
  return out;
}

/** The object that holds the last segment, created (with defaults) where missing when `create`. */
function parentObject(holder: Obj, info: FieldInfo, create: boolean): Obj | null {
  let at = holder;
  for (let i = 0; i < info.segments.length - 1; i++) {
    const name = info.segments[i];
    if (!isObject(at[name])) {
      if (!create) return null;
      if (at[name] !== undefined && at[name] !== null)
        throw new FlowFieldError(`${info.path}: ${info.segments.slice(0, i + 1).join('.')} is not an object`);
      at[name] = newObject(info.parents[i + 1]);
    }
    at = at[name] as Obj;
  }
  return at;
}

export function writeAt(product: Obj, info: FieldInfo, value: unknown, variant?: Obj): void {
  if (info.scope === 'metafield') {
    const i = metafieldIndex(product, info.metafield!);
    if (i >= 0) {
      // the metafield keeps its type; a value that does not fit it is the product rules' to refuse
      (product.metafields as Obj[])[i].value = value;
      return;
    }
    if (product.metafields !== undefined && !Array.isArray(product.metafields))
      throw new FlowFieldError('metafields is not a list');
    const { namespace, key } = info.metafield!;
    product.metafields = [
      ...((product.metafields as Obj[] | undefined) ?? []),
      { namespace, key, type: metafieldTypeOf(value), value },
    ];
    return;
  }
  const parent = parentObject(holderOf(product, info, variant), info, true)!;
  parent[info.segments[info.segments.length - 1]] = value;
}

export function clearAt(product: Obj, info: FieldInfo, variant?: Obj): void {
  if (info.scope === 'metafield') {
    if (Array.isArray(product.metafields))
      product.metafields = product.metafields.filter(
        (m) => !(isObject(m) && m.key === info.metafield!.key && sameNamespace(m, info.metafield!.namespace)),
      );
    return;
  }
  const holder = holderOf(product, info, variant);
  const last = info.segments[info.segments.length - 1];
  switch (info.clear) {
    case 'refuse':
      throw new FlowFieldError(`${info.path} is required and cannot be cleared`);
    case 'empty':
      parentObject(holder, info, true)![last] = [];
      return;
    case 'default':
      parentObject(holder, info, true)![last] = structuredCopy(info.schema.default);
      return;
    case 'delete': {
      const parent = parentObject(holder, info, false);
      if (parent) delete parent[last];
      return;
    }
    case 'delete-parent': {
      const text = { ...info, segments: info.segments.slice(0, -1) };
      const parent = parentObject(holder, text, false);
      if (parent) delete parent[text.segments[text.segments.length - 1]];
      return;
    }
  }
}

/** A problem with a product's data met while reading or writing a field (not with the flow). */
export class FlowFieldError extends Error {
  override name = 'FlowFieldError';
}

function resolveOrThrow(path: string, forWrite: boolean): FieldInfo {
  const info = resolveField(path);
  if (!info) throw new Error(unknownFieldMessage(path));
  if (forWrite && info.readOnly) throw new Error(`${path} is read-only`);
  return info;
}

export const variantsOf = (product: Obj): Obj[] =>
  Array.isArray(product.variants) ? product.variants.filter(isObject) : [];

/** The value at a path; for a variant field, the list of every variant's value. Undefined for an unknown path. */
export function readField(product: Obj, path: string): unknown {
  const info = resolveField(path);
  if (!info) return undefined;
  if (info.scope === 'variant') return variantsOf(product).map((v) => readAt(product, info, v));
  return readAt(product, info);
}

/**
 * Sets the value at a path (every variant's, for a variant field; a product without variants is
 * left as it is), creating missing parent objects. Throws for an unknown or read-only path. The
 * value is not checked: the product rules validate the result.
 */
export function writeField(product: Obj, path: string, value: unknown): void {
  const info = resolveOrThrow(path, true);
  if (info.scope === 'variant') for (const v of variantsOf(product)) writeAt(product, info, structuredCopy(value), v);
  else writeAt(product, info, value);
}

/** Clears a field as the `clear` action does (see ClearMode); throws for an unknown, read-only or required path. */
export function clearField(product: Obj, path: string): void {
  const info = resolveOrThrow(path, true);
  if (info.scope === 'variant') for (const v of variantsOf(product)) clearAt(product, info, v);
  else clearAt(product, info);
}

/**
 * A deep copy of plain data (objects, arrays, Dates); other objects (an ObjectId) are shared, being
 * immutable. Not structuredClone: it is not in every sandbox this code may run in, and it would
 * turn an ObjectId into a plain object.
 */
export function structuredCopy<T>(value: T): T {
  if (Array.isArray(value)) return value.map(structuredCopy) as T;
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (isObject(value) && isPlain(value)) {
    const out: Obj = {};
    for (const [k, v] of Object.entries(value)) {
      // JSON.parse makes `__proto__` an own key; assigned, it would set the copy's prototype
      if (k === '__proto__')
        Object.defineProperty(out, k, {
          value: structuredCopy(v),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      else out[k] = structuredCopy(v);
    }
    return out as T;
  }
  return value;
}

export function isPlain(v: Obj): boolean {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

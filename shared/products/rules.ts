import { AppError, type FieldError } from '../errors/catalog';
import { compile, inputFailures, summarize, type KeywordFailure } from '../validation';
import { productInputSchema, sku as skuSchema, STATUSES } from './schema';
import type { ProductInput } from './types';

/**
 * Where data lives instead, for fields a client library may send but the product does not store,
 * and for fields the service computes. Sending any of them is a 400 that says so.
 */
const ELSEWHERE: Record<string, string> = {
  inventoryQuantity:
    'is not stored on the product: stock lives in the inventory service (PUT /inventory/location/{id}/product/{sku} or POST /inventory/bulk-update)',
  stock:
    'is not stored on the product: stock lives in the inventory service (PUT /inventory/location/{id}/product/{sku}); responses show it as variants.stock',
  categoryString: 'is not stored: send category {id, name, path}',
  attributeGroups: 'is not stored: send attributes [{name, value, unit?}]',
  warranty: 'is not stored: send it as an attribute ({name: "warranty", value}) or a metafield',
  preparationTime: 'is not stored: send billOfMaterials.prepTimeMinutes',
  localization: 'is not stored: translations live in each translated field ({value, translations[{locale, value}]})',
  marketplaceCategories:
    'is not supported: assign them with POST /products/marketplace-categories (stored in metafields, namespace mkt_category)',
  inventoryCost: 'is read-only: it is derived from the lot system',
  inventoryCostMethod: 'is read-only: it is derived from the lot system',
  embeddings: 'is read-only: embeddings are computed by the service',
  embeddingMetadata: 'is read-only: embeddings are computed by the service',
  calculatedCost: 'is read-only: the service computes it from the components',
};
const TOP_LEVEL_ONLY: Record<string, string> = {
  type: 'is not a product field: send productType (physical, digital, service, bundle, supply, material); a product has variants when variants[] is not empty',
  id: 'is server-managed: the id is in the path (PUT /products/{id}); remove it from the body',
  tenantId: 'is server-managed: the key decides the tenant; remove it from the body',
  createdAt: 'is server-managed; remove it from the body',
  updatedAt: 'is server-managed; remove it from the body',
};

/** A better message than ajv's for some failures: where the data lives instead, what to send. */
function explain(f: KeywordFailure): string | null {
  if (f.keyword === 'additionalProperties') {
    const name = String(f.params.additionalProperty);
    if (f.field === name && TOP_LEVEL_ONLY[name]) return TOP_LEVEL_ONLY[name];
    return ELSEWHERE[name] ?? null;
  }
  if (f.keyword === 'enum' && f.field.split('.').pop() === 'productType') {
    return 'must be one of physical, digital, service, bundle, supply, material ("simple" and "variable" are not storable: a product has variants when variants[] is not empty)';
  }
  if (f.field === '(body)' && f.keyword === 'type') return 'must be a JSON object';
  return null;
}

/** A status the product does not have: its own code, as the spec gives it. */
export function invalidStatus(got?: unknown): AppError {
  const message = `status must be one of ${STATUSES.join(', ')} (inactive and out_of_stock are not product statuses)`;
  return new AppError(400, 'invalid-status', got === undefined ? message : `${message}; got ${JSON.stringify(got)}`, {
    field: 'status',
  });
}

/**
 * The answer to a product body the schema refused (productInputSchema, as ajv reported it): a bad
 * status is `invalid-status`; anything else one `validation-error` naming every field, with the
 * explanations above where there is one.
 */
export function productInputRefusal(failures: KeywordFailure[], status?: unknown): AppError {
  if (failures.some((f) => f.field === 'status')) return invalidStatus(status);
  // a field with an explanation gets it instead of each of ajv's messages about it
  const explained = new Map<string, string>();
  for (const f of failures) {
    const why = explain(f);
    if (why) explained.set(f.field, why);
  }
  const seen = new Set<string>();
  const fieldErrors = failures
    .map(({ field, message }) => ({ field, message: explained.get(field) ?? message }))
    .filter((fe) => {
      const k = `${fe.field}\u0000${fe.message}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
  return validationError(fieldErrors);
}

export function validationError(fieldErrors: FieldError[]): AppError {
  return new AppError(400, 'validation-error', `Invalid product: ${summarize(fieldErrors)}`, {
    field: fieldErrors[0]?.field,
    fieldErrors,
  });
}

/**
 * What a document store cannot keep as sent: keys starting with `$` or containing `.` or NUL
 * (free-form fields such as fitmentConfig take any JSON, but not those), strings that are not
 * well-formed Unicode (a lone surrogate would come back as U+FFFD) and numbers that are not
 * finite. Refused rather than altered.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed = (text: string) => !LONE_SURROGATE.test(text);
/** Names of Object.prototype members, and the BSON serializer's type tag: refused as keys anywhere. */
const RESERVED_KEYS = new Set(Object.getOwnPropertyNames(Object.prototype).concat('prototype', '_bsontype'));

export function storabilityErrors(value: unknown, path = ''): FieldError[] {
  const here = path || '(body)';
  // JSON's 1e309 parses to Infinity, which the store refuses: free-form fields (fitmentConfig, a json metafield) too
  if (typeof value === 'number')
    return Number.isFinite(value) ? [] : [{ field: here, message: 'must be a finite number' }];
  if (typeof value === 'string')
    return wellFormed(value) ? [] : [{ field: here, message: 'is not well-formed Unicode (lone surrogate)' }];
  if (Array.isArray(value)) {
    // FerretDB 1.x cannot store an array directly inside an array
    if (value.some(Array.isArray))
      return [{ field: here, message: 'nests an array directly in an array, which the store cannot keep' }];
    return value.flatMap((v, i) => storabilityErrors(v, path ? `${path}.${i}` : String(i)));
  }
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => {
      const field = path ? `${path}.${k}` : k;
      if (
        RESERVED_KEYS.has(k) ||
        k === '' ||
        k.startsWith('$') ||
        k.includes('.') ||
        k.includes('\0') ||
        !wellFormed(k)
      ) {
        return [
          {
            field,
            message:
              'is not a storable key (keys may not be empty, name an Object.prototype member, start with $ or contain "." or NUL)',
          },
        ];
      }
      return storabilityErrors(v, field);
    });
  }
  return [];
}

/**
 * A product body from outside the API (a CSV row): the schema with the messages above, then what
 * the store cannot keep; fills defaults in place. Throws a 400. The API validates its bodies with
 * the same schema and productInputRefusal before they reach the catalog.
 */
export function validateProductInput(body: unknown): ProductInput {
  const validate = compile(productInputSchema);
  const failures = validate(body) ? [] : inputFailures(validate.errors);
  const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
  if (isObject && failures.some((f) => f.field === 'status'))
    throw invalidStatus((body as { status?: unknown }).status);
  const unstorable = isObject ? storabilityErrors(body) : [];
  if (unstorable.length) throw validationError(unstorable);
  if (failures.length) throw productInputRefusal(failures);
  return body as ProductInput;
}

/**
 * The rules a schema cannot express, on a body that has the schema's shape: what the store cannot
 * keep, then the rules between fields (crossFieldErrors).
 */
export function productRuleErrors(input: ProductInput): FieldError[] {
  const unstorable = [...storabilityErrors(input), ...skuLengthErrors(input)];
  return unstorable.length ? unstorable : crossFieldErrors(input);
}

/** The longest SKU, as stored (upper-cased): the schema's bound. */
const MAX_SKU = skuSchema.maxLength as number;

/**
 * A SKU is stored upper-cased, and some letters grow so (ß is SS): one that would be longer than
 * a SKU may be is refused as sent, or the product could never be written back from its own read.
 */
function skuLengthErrors(input: ProductInput): FieldError[] {
  const long = (sku: unknown) => typeof sku === 'string' && sku.trim().toUpperCase().length > MAX_SKU;
  const message = `must not be longer than ${MAX_SKU} characters once upper-cased (as it is stored)`;
  return [
    ...(long(input.sku) ? [{ field: 'sku', message }] : []),
    ...(input.variants ?? []).flatMap((v, i) => (long(v.sku) ? [{ field: `variants.${i}.sku`, message }] : [])),
  ];
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Whether text starts with a calendar date that exists: Date.parse rolls 2024-02-31 over to March. */
function realDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d); // Date.UTC reads years 0–99 as 1900–1999
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

function metafieldValueOk(type: string, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number_integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number_decimal':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'date':
      return typeof value === 'string' && DATE.test(value) && realDate(value);
    case 'date_time':
      return (
        typeof value === 'string' &&
        /^\d{4}-\d{2}-\d{2}T/.test(value) &&
        realDate(value) &&
        !Number.isNaN(Date.parse(value))
      );
    case 'url':
      return typeof value === 'string' && /^https?:\/\/\S+$/.test(value);
    case 'json':
      return value !== undefined;
    default:
      return false;
  }
}

/**
 * SKUs that a product or variant cannot have: `/products/{sku}/bom` and `/products/{sku}/modifiers`
 * with one of them would be another route's path (`/products/materials/{sku}`, `/products/export/{jobId}`,
 * `/products/by-variant/{sku}`). test/unit/route-collisions.test.ts derives the list from the routes.
 */
export const RESERVED_PRODUCT_SKUS: readonly string[] = ['BY-VARIANT', 'EXPORT', 'MATERIALS', 'SUPPLIES'];

function reservedSkuErrors(p: ProductInput): FieldError[] {
  const reserved = (sku: string) => RESERVED_PRODUCT_SKUS.includes(sku.trim().toUpperCase());
  const message = (sku: string) =>
    `${sku.toUpperCase()} cannot be a product or variant SKU: /products/${sku.toLowerCase()}/… is another route`;
  return [
    ...(reserved(p.sku) ? [{ field: 'sku', message: message(p.sku) }] : []),
    ...(p.variants ?? []).flatMap((v, i) =>
      reserved(v.sku) ? [{ field: `variants.${i}.sku`, message: message(v.sku) }] : [],
    ),
  ];
}

/**
 * White space, control characters (Cc: U+0001) and format characters (Cf: zero-width space, soft
 * hyphen, word joiner, the byte order mark): text made only of these shows nothing.
 */
const INVISIBLE = /^[\s\p{Cc}\p{Cf}]*$/u;
const blank = (text: string | undefined) => typeof text === 'string' && INVISIBLE.test(text);

/** `<list>.<i>.id` for each item whose id an earlier item already has. */
function repeatedIds(items: { id?: string }[], list: string, what: string): FieldError[] {
  const seen = new Map<string, number>();
  return items.flatMap((item, i) => {
    if (!item.id) return [];
    if (!seen.has(item.id)) {
      seen.set(item.id, i);
      return [];
    }
    return [{ field: `${list}.${i}.id`, message: `duplicates ${list}.${seen.get(item.id)}.id (${what} ${item.id})` }];
  });
}

/**
 * The rules between fields that a schema cannot express. Pure: SKU existence (bundle components)
 * and uniqueness across the tenant are checked by the catalog against the database.
 */
export function crossFieldErrors(p: ProductInput): FieldError[] {
  const errs: FieldError[] = reservedSkuErrors(p);
  const sku = p.sku.toUpperCase();
  if (p.compareAtPrice !== undefined && !(p.compareAtPrice > p.price)) {
    errs.push({ field: 'compareAtPrice', message: `must be greater than price (${p.price})` });
  }
  if (p.bundleConfig && p.productType !== 'bundle') {
    errs.push({
      field: 'bundleConfig',
      message: `is allowed only when productType is bundle (productType is ${p.productType})`,
    });
  }
  const optionIds = new Set((p.options ?? []).map((o) => o.id).filter(Boolean));
  const optionIdsSeen = new Set<string>();
  (p.options ?? []).forEach((o, i) => {
    if (o.id && optionIdsSeen.has(o.id))
      errs.push({ field: `options.${i}.id`, message: `duplicates option id ${o.id}` });
    if (o.id) optionIdsSeen.add(o.id);
  });
  if (blank(p.title?.value)) errs.push({ field: 'title.value', message: 'must not be blank' });
  errs.push(
    ...repeatedIds(p.media ?? [], 'media', 'media id'),
    ...repeatedIds(p.variants ?? [], 'variants', 'variant id'),
  );
  const mediaIds = new Set((p.media ?? []).map((m) => m.id).filter(Boolean));
  const variantSkus = new Map<string, number>();
  (p.variants ?? []).forEach((v, i) => {
    if (v.title && blank(v.title.value))
      errs.push({ field: `variants.${i}.title.value`, message: 'must not be blank' });
    const vs = v.sku.toUpperCase();
    if (vs === sku) errs.push({ field: `variants.${i}.sku`, message: `equals the product's own SKU ${sku}` });
    if (variantSkus.has(vs))
      errs.push({ field: `variants.${i}.sku`, message: `duplicates variants.${variantSkus.get(vs)}.sku (${vs})` });
    variantSkus.set(vs, i);
    for (const key of ['parentSku', 'productSku'] as const) {
      if (v[key] !== undefined && v[key]!.toUpperCase() !== sku)
        errs.push({
          field: `variants.${i}.${key}`,
          message: `is set by the server to the product SKU ${sku}; got ${v[key]}`,
        });
    }
    (v.options ?? []).forEach((o, j) => {
      if (!optionIds.has(o.id))
        errs.push({
          field: `variants.${i}.options.${j}.id`,
          message: `references no product option id (known: ${[...optionIds].join(', ') || 'none'})`,
        });
    });
    if (v.imageId !== undefined && !mediaIds.has(v.imageId))
      errs.push({ field: `variants.${i}.imageId`, message: `references no media id of the product` });
  });
  (p.metafields ?? []).forEach((m, i) => {
    if (!metafieldValueOk(m.type ?? 'string', m.value))
      errs.push({ field: `metafields.${i}.value`, message: `is not a valid ${m.type ?? 'string'} value` });
  });
  const componentSkus = new Map<string, number>();
  (p.bundleConfig?.components ?? []).forEach((c, i) => {
    const cs = c.productSku.trim().toUpperCase();
    if (cs === sku || variantSkus.has(cs))
      errs.push({
        field: `bundleConfig.components.${i}.productSku`,
        message: `is the bundle itself (${cs}); a bundle may not contain itself`,
      });
    // an order sells each entry, the shown stock counts the SKU once: one entry carries the quantity
    if (componentSkus.has(cs))
      errs.push({
        field: `bundleConfig.components.${i}.productSku`,
        message: `names ${cs} again (bundleConfig.components.${componentSkus.get(cs)}): give one component its whole quantity`,
      });
    else componentSkus.set(cs, i);
  });
  (p.modifiersConfig?.groups ?? []).forEach((g, i) => {
    const r = g.selectionRule;
    if (r.maxSelections < r.minSelections)
      errs.push({
        field: `modifiersConfig.groups.${i}.selectionRule.maxSelections`,
        message: 'must be at least minSelections',
      });
    if (r.exactlyOne && (r.minSelections > 1 || r.maxSelections < 1))
      errs.push({
        field: `modifiersConfig.groups.${i}.selectionRule.exactlyOne`,
        message: 'contradicts minSelections/maxSelections',
      });
  });
  return errs;
}

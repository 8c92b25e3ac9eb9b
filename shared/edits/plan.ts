import { isDeepStrictEqual } from 'node:util';
import { AppError, type FieldError } from '../errors/catalog';
import type { Catalog } from '../products/catalog';
import { skusOf } from '../products/normalize';
import { contentOf } from '../products/content';
import type { ProductDoc, ProductInput } from '../products/types';
import type { FieldDiff } from './summary-rules';

/** The write that turns a product into the planned one: top-level fields set and removed. */
export interface Patch {
  set: Record<string, unknown>;
  unset: string[];
}

/** What an engine planned for one product, as stored with a preview and answered per product. */
export type PlannedOutcome =
  | { kind: 'change'; patch: Patch }
  | { kind: 'unchanged' }
  | { kind: 'invalid'; message: string; fieldErrors: FieldError[] }
  | { kind: 'failed'; code: string; message: string; retryable: boolean };

/** What an engine (a flow, a model) proposes for one product, before the product rules see it. */
export type Proposal =
  | { kind: 'proposed'; product: Record<string, unknown> }
  | { kind: 'invalid'; message: string; fieldErrors: FieldError[] }
  | { kind: 'failed'; code: string; message: string; retryable: boolean };

/** One engine's way to plan a product: the same for a preview and an apply, so the two agree. */
export interface Planner {
  propose(current: ProductDoc): Promise<Proposal>;
}

const plain = (v: unknown): unknown => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

/** The fields two contents differ in: objects are followed down, lists and values compared whole. */
export function diffContent(before: Record<string, unknown>, after: Record<string, unknown>, at = ''): FieldDiff[] {
  const out: FieldDiff[] = [];
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const b = before[key];
    const a = after[key];
    if (isDeepStrictEqual(b, a)) continue;
    const field = at ? `${at}.${key}` : key;
    const isObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
    if (isObject(b) && isObject(a))
      out.push(...diffContent(b as Record<string, unknown>, a as Record<string, unknown>, field));
    else out.push({ field, before: b ?? null, after: a ?? null });
  }
  return out;
}

/** The top-level write from `before` to `after` (both plain JSON contents). */
export function patchBetween(before: Record<string, unknown>, after: Record<string, unknown>): Patch {
  const set: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(after)) if (!isDeepStrictEqual(before[k], v)) set[k] = v;
  return { set, unset: Object.keys(before).filter((k) => !(k in after)) };
}

/** The product's content once a patch is applied. */
export function applyPatch(content: Record<string, unknown>, patch: Patch): Record<string, unknown> {
  const out = { ...content, ...structuredClone(patch.set) };
  for (const k of patch.unset) delete out[k];
  return out;
}

function fieldErrorsOf(err: AppError): FieldError[] {
  return (
    (err.extra.fieldErrors as FieldError[] | undefined) ??
    (err.extra.field ? [{ field: String(err.extra.field), message: err.message }] : [])
  );
}

/**
 * The planned product with the bindings (its own and each variant's) as they are stored: an edit
 * never changes them. They are the channels' record of the product (a publication writes them, at
 * times without the ids the product rules give a new binding), so the rules' copy of them may
 * differ from the stored one for no change at all.
 */
function withStoredBindings(product: ProductInput, current: ProductDoc): ProductInput {
  // an edit keeps every SKU (planProposal refuses it otherwise): each variant is found by its SKU
  const stored = new Map((current.variants ?? []).map((v) => [v.sku, v]));
  return {
    ...product,
    // a binding list the stored product lacks stays absent (plain JSON drops undefined)
    variants: product.variants.map((v) => {
      const was = stored.get(v.sku);
      return was ? { ...v, bindings: was.bindings } : v;
    }),
    bindings: current.bindings,
  };
}

/**
 * Checks a proposal with the very rules of a product write (the schema, then Catalog.prepareInput:
 * the rules between fields, bundle and BOM references) and says what it would change. An edit may
 * not change SKUs: they are the catalog's keys, changed only by a product write of its own; and
 * its patch never holds bindings: they stay as stored.
 */
export async function planProposal(catalog: Catalog, current: ProductDoc, proposal: Proposal): Promise<PlannedOutcome> {
  if (proposal.kind !== 'proposed') return proposal;
  let product: ProductInput;
  try {
    product = await catalog.prepare(structuredClone(proposal.product), current);
  } catch (err) {
    if (!(err instanceof AppError) || err.status >= 500) throw err;
    return { kind: 'invalid', message: err.message, fieldErrors: fieldErrorsOf(err) };
  }
  const sameSkus = isDeepStrictEqual(
    skusOf(current)
      .map((s) => `${s.kind}:${s.sku}`)
      .sort(),
    skusOf(product)
      .map((s) => `${s.kind}:${s.sku}`)
      .sort(),
  );
  if (!sameSkus)
    return {
      kind: 'invalid',
      message: 'Invalid product: a bulk edit may not change SKUs',
      fieldErrors: [{ field: 'sku', message: 'may not be changed by a bulk edit' }],
    };
  const before = plain(contentOf(current)) as Record<string, unknown>;
  const after = plain(withStoredBindings(product, current)) as Record<string, unknown>;
  const patch = patchBetween(before, after);
  return Object.keys(patch.set).length || patch.unset.length ? { kind: 'change', patch } : { kind: 'unchanged' };
}

/** The field diffs of a change, from the product as it was planned from. */
export function diffsOf(current: ProductDoc, patch: Patch): FieldDiff[] {
  const before = plain(contentOf(current)) as Record<string, unknown>;
  return diffContent(before, applyPatch(before, patch));
}

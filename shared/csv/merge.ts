import { contentOf } from '../products/content';
import type { ProductDoc } from '../products/types';
import type { Carried, ParsedProduct } from './layout';
import { layoutFor } from './layouts/index';
import { GRAMS_PER, MILLIMETRES_PER, mediaId, ownEntry, withinMeasureRounding } from './layouts/values';
import { deletePath, getPath, isObj, setPath } from './paths';

/**
 * How an import merges a parsed product with the stored one it updates (docs/csv.md): the
 * fields the file carries replace the stored ones, the rest stay. One rule for every layout,
 * driven by what the layout says the file carries (`ParsedProduct.carried`):
 *
 * - a field the body holds replaces the stored one in the parts the file carries; the parts it
 *   has no column for (a title's translations, a category's id) stay;
 * - a variant matched by SKU, and a media item matched by src, keep what the file does not carry
 *   (their ids, a variant's country of origin, a media item's name), so a layout that cannot
 *   carry everything does not wipe it;
 * - what a layout makes up (media ids and names, Shopify's variant title from option values) is
 *   no change: it stays stored unless what it is made from changed;
 * - shipping given in other units (WooCommerce's lb and in, Shopify's grams) that is the stored
 *   value once converted and rounded as the export writes it keeps the stored value and unit.
 *
 * So exporting a product in a layout and importing it again in that layout changes nothing,
 * while a file that changes a carried field still changes it.
 */

type Obj = Record<string, any>;

/**
 * The import's body over the stored product: the fields the file carries (or only those in
 * fieldsToUpdate) replace the stored ones; the rest stay. A stored variant with one of
 * `refusedSkus` (rows of the file the layout refused) is kept even though the body lacks it.
 */
export function mergeWithStored(
  current: ProductDoc,
  p: ParsedProduct,
  fieldsToUpdate?: string[],
  refusedSkus: ReadonlySet<string> = new Set(),
): Obj {
  const body = p.body!;
  const carried = p.carried;
  const stored = contentOf(current) as Obj;
  const merged = { ...stored }; // (nested members are copied before they are changed: see keepStored)
  const wanted = (k: string) => !fieldsToUpdate || fieldsToUpdate.includes(k) || k === 'sku';
  const fields = Object.keys(body).filter(wanted);
  for (const k of fields) merged[k] = mergeField(k, merged[k], body, carried);
  // a product's commerce columns left blank clear what is stored, as a variant's do (the
  // platforms' exports write a blank for "no compare-at price", "no barcode")
  if (carried?.blankClears)
    for (const path of carried.cleared ?? [])
      if (wanted(path[0]) && getPath(body, path) === undefined) keepStored(merged, {}, [path]);
  if (fields.includes('shipping')) merged.shipping = withStoredUnits(merged.shipping, current.shipping);

  // media first: the file's variants name their images by the ids the file's media had
  const media = Array.isArray(body.media) ? mergeMedia(current.media ?? [], body.media, carried) : undefined;
  if (media && fields.includes('media')) merged.media = media.items;
  // (an element that is not an object is left for the product rules to refuse, naming it)
  if (Array.isArray(merged.variants) && fields.includes('variants')) {
    const imageIds = media?.ids ?? new Map<string, string>();
    merged.variants = (merged.variants as unknown[]).map((v) =>
      isObj(v) ? mergeVariant(withImageIds(v, imageIds), current, body, carried) : v,
    );
    if (carried?.positionsFromOrder) keepStoredPositions(merged.variants as unknown[], current);
    // a variant whose row the import refused is not one the file leaves out: it stays as stored
    const given = new Set((merged.variants as unknown[]).map((v) => (isObj(v) ? String(v.sku).toUpperCase() : '')));
    for (const old of current.variants)
      if (refusedSkus.has(old.sku) && !given.has(old.sku)) (merged.variants as unknown[]).push(old);
  }
  const lossy = carried?.lossy;
  const cells = lossy && layoutFor(lossy.format).lossyCells;
  if (lossy && cells && cells.product(stored) === cells.product(body))
    keepStored(
      merged,
      stored,
      lossy.paths.filter((path) => wanted(path[0])),
    );
  keepLineEnds(merged, stored);
  return merged;
}

/**
 * `out` with `from`'s values (or their absence) at `paths`. A nested member of `out` is copied
 * first: it may be the stored product's own, which the import compares with afterwards.
 */
function keepStored(out: Obj, from: Obj, paths: string[][]): void {
  for (const path of paths) {
    if (path.length > 1 && isObj(out[path[0]])) out[path[0]] = structuredClone(out[path[0]]);
    const v = getPath(from, path);
    if (v === undefined) deletePath(out, path);
    else setPath(out, path, structuredClone(v));
  }
}

/**
 * Texts (a title, a description) that differ from the stored ones only in their line ends keep
 * the stored ones: a layout or a spreadsheet may rewrite CRLF as LF (WooCommerce's literal \n
 * is read back as LF), and that is no edit.
 */
function keepLineEnds(merged: Obj, stored: Obj): void {
  const lf = (text: string) => text.replace(/\r\n?/g, '\n');
  for (const [k, v] of Object.entries(merged)) {
    const was = stored[k];
    if (!isObj(v) || !isObj(was) || typeof v.value !== 'string' || typeof was.value !== 'string') continue;
    if (v.value !== was.value && lf(v.value) === lf(was.value)) merged[k] = { ...v, value: was.value };
  }
}

/**
 * Variant positions a layout makes up from the order of its rows (0, 1, …) are no change while
 * that order is the stored one: every variant of the file matched by SKU keeps its stored
 * position (which may start elsewhere than 0, or skip numbers). A file that reorders them, or
 * adds one, gives its positions.
 */
function keepStoredPositions(variants: unknown[], current: ProductDoc): void {
  const storedOf = variants.map((v) =>
    isObj(v) ? current.variants.find((o) => o.sku === String(v.sku).toUpperCase()) : undefined,
  );
  if (storedOf.some((o) => o === undefined)) return;
  const order = (position: (i: number) => number) =>
    variants
      .map((_, i) => i)
      .sort((a, b) => position(a) - position(b) || a - b)
      .join(',');
  const sent = (i: number) => Number((variants[i] as Obj).position ?? 0);
  const was = (i: number) => storedOf[i]!.position ?? 0;
  if (order(sent) !== order(was)) return;
  variants.forEach((v, i) => ((v as Obj).position = storedOf[i]!.position));
}

/** One top-level field of the body over the stored one: the parts the file carries of it replace the stored ones. */
function mergeField(key: string, stored: unknown, body: Obj, carried: Carried | undefined): unknown {
  const nested = carried?.product.filter((path) => path[0] === key && path.length > 1);
  if (!nested?.length || !isObj(body[key])) return body[key];
  return withCarried({ [key]: stored }, body, nested, carried?.blankClears)[key];
}

/**
 * `stored` with the parts of `sent` at `paths`: what a file made of separate columns changes of
 * one field, of one variant or of one media item. A part `sent` does not hold is not carried
 * (the stored one stays), unless `blankClears`: then the file's blank clears it.
 */
function withCarried(stored: unknown, sent: Obj, paths: string[][], blankClears = false): Obj {
  const out: Obj = isObj(stored) ? structuredClone(stored) : {};
  for (const p of paths) {
    const v = getPath(sent, p);
    if (v !== undefined) setPath(out, p, v);
    else if (blankClears) deletePath(out, p);
  }
  return out;
}

/** A variant of the file over the stored variant with its SKU (none: the file's variant as it is). */
function mergeVariant(sent: Obj, current: ProductDoc, body: Obj, carried: Carried | undefined): Obj {
  const old = current.variants.find((o) => o.sku === String(sent.sku).toUpperCase());
  if (!old) return sent;
  if (!carried) return sent.id === undefined ? { ...sent, id: old.id } : sent;
  // a variant the file names keeps what its columns do not carry (its id among them)
  let kept = withCarried(old, sent, [['sku'], ...carried.variant], carried.blankClears);
  // a part made up from option values follows them only when they change
  if (carried.fromOptions?.length && !sameOptionValues(sent.options, old.options))
    kept = withCarried(kept, sent, carried.fromOptions);
  if (kept.shipping !== undefined) kept.shipping = withStoredUnits(kept.shipping, old.shipping);
  const lossy = carried.lossy;
  const cells = lossy && layoutFor(lossy.format).lossyCells;
  if (lossy && cells && cells.variant(old, current) === cells.variant(sent, body)) keepStored(kept, old, lossy.paths);
  return kept;
}

/** Whether two variants' option values are the same (what a title made up from them is made of). */
function sameOptionValues(a: unknown, b: unknown): boolean {
  const values = (options: unknown) =>
    (Array.isArray(options) ? options : [])
      .map((o) => (isObj(o) ? String(o.value) : ''))
      .sort()
      .join('\n');
  return values(a) === values(b);
}

/** The variant with its image named by the id its media item ends with. */
function withImageIds(variant: Obj, ids: Map<string, string>): Obj {
  const id = typeof variant.imageId === 'string' ? ids.get(variant.imageId) : undefined;
  return id === undefined || id === variant.imageId ? variant : { ...variant, imageId: id };
}

/**
 * The file's media over the stored media, matched by src, and the id each file's item ends with
 * (by the id the file gave it). Without `carried.media` (native, whose media column is the whole
 * list as JSON) a matched item keeps its stored id when the file gives none; with it, a matched
 * item keeps every stored part the file does not carry, and an unmatched one gets a fresh id
 * when the one the layout made up is taken by a kept item.
 */
function mergeMedia(
  stored: Obj[],
  sent: unknown[],
  carried: Carried | undefined,
): { items: unknown[]; ids: Map<string, string> } {
  const matched = sent.map((m) => (isObj(m) ? stored.find((o) => o.src === m.src) : undefined));
  const items = sent.map((m, i) => {
    const old = matched[i];
    if (!isObj(m) || !old) return m;
    if (!carried?.media) return m.id === undefined ? { ...m, id: old.id } : m;
    return withCarried(old, m, carried.media, carried.blankClears);
  });
  if (carried?.media) {
    const kept = new Set(items.flatMap((m, i) => (matched[i] && isObj(m) ? [m.id] : [])));
    const taken = new Set(items.map((m) => (isObj(m) ? m.id : undefined)));
    items.forEach((m, i) => {
      if (matched[i] || !isObj(m) || !kept.has(m.id)) return;
      const id = freshMediaId(taken);
      taken.add(id);
      items[i] = { ...m, id };
    });
  }
  const ids = new Map<string, string>();
  sent.forEach((m, i) => {
    const final = items[i];
    if (isObj(m) && typeof m.id === 'string' && isObj(final) && typeof final.id === 'string') ids.set(m.id, final.id);
  });
  return { items, ids };
}

/** The first layout media id (`img-N`) not taken. */
function freshMediaId(taken: Set<unknown>): string {
  let n = 0;
  while (taken.has(mediaId(n))) n++;
  return mediaId(n);
}

type Measure = [value: unknown, unit: unknown];

/**
 * Whether a measure the file gives is the stored one, converted to the file's unit and rounded
 * as the exports write it. Both absent counts as the same; a unit neither table knows only
 * matches itself.
 */
function sameMeasure(
  units: Readonly<Record<string, number>>,
  [value, unit]: Measure,
  [was, wasUnit]: Measure,
): boolean {
  if (value === undefined || was === undefined) return value === was;
  if (typeof value !== 'number' || typeof was !== 'number') return false;
  const from = typeof wasUnit === 'string' ? ownEntry(units, wasUnit) : undefined;
  const to = typeof unit === 'string' ? ownEntry(units, unit) : undefined;
  if (from === undefined || to === undefined) return value === was && unit === wasUnit;
  return withinMeasureRounding((was * from) / to, value);
}

const SIDES = ['length', 'width', 'height'] as const;

/**
 * The shipping to write, keeping the stored weight (and its unit), and the stored dimensions
 * (and their unit), where the file's are the same measures in other units: a WooCommerce export
 * writes 1.5 kg as 3.306934 lb, and reading that back must not rewrite the product in pounds.
 */
function withStoredUnits(shipping: unknown, stored: unknown): unknown {
  if (!isObj(shipping) || !isObj(stored)) return shipping;
  const out: Obj = { ...shipping };
  const weight: Measure = [shipping.weight, shipping.weightUnit];
  if (shipping.weight !== undefined && sameMeasure(GRAMS_PER, weight, [stored.weight, stored.weightUnit])) {
    out.weight = stored.weight;
    out.weightUnit = stored.weightUnit;
  }
  const dims = shipping.dimensions;
  const storedDims = stored.dimensions;
  if (
    isObj(dims) &&
    isObj(storedDims) &&
    SIDES.every((side) => sameMeasure(MILLIMETRES_PER, [dims[side], dims.unit], [storedDims[side], storedDims.unit]))
  ) {
    out.dimensions = { ...dims, unit: storedDims.unit };
    for (const side of SIDES) if (storedDims[side] !== undefined) out.dimensions[side] = storedDims[side];
  }
  return out;
}

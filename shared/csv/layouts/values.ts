import type { Carried } from '../layout';

/**
 * Cell-level helpers shared by the third-party CSV layouts (Shopify, WooCommerce): booleans,
 * money and numbers, WooCommerce's `\,`-escaped lists and literal `\n`, `A > B` category paths,
 * spreadsheet-formula un-prefixing, and deterministic SKUs, handles and media names.
 *
 * Pure (no Node built-ins): layouts run in activities and may be imported by workflow code.
 * Parsers throw `CellError`; a layout catches it and reports it against the column.
 */

export class CellError extends Error {}

/** A cell's text, trimmed; a missing cell (short record) is blank. */
export function cell(values: Record<string, string | undefined>, column: string | undefined): string {
  if (column === undefined) return '';
  const v = values[column];
  return typeof v === 'string' ? v.trim() : '';
}

/**
 * A table's entry for a name read from a file (a unit in a header, a stored unit): its own
 * entries only, so `constructor` or `__proto__` find nothing rather than what every object inherits.
 */
export function ownEntry<T>(table: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

/** The column names of these records, in the order first seen. */
export function columnsOf(records: { values: Record<string, unknown> }[]): string[] {
  const seen = new Set<string>();
  for (const r of records) for (const k of Object.keys(r.values)) seen.add(k);
  return [...seen];
}

const TRUE = new Set(['true', '1', '-1', 'yes', 'y']);
const FALSE = new Set(['false', '0', 'no', 'n']);

/** TRUE/true/1/-1/yes → true, FALSE/false/0/no → false, blank → undefined; anything else throws. */
export function parseBool(text: string): boolean | undefined {
  const t = text.trim().toLowerCase();
  if (t === '') return undefined;
  if (TRUE.has(t)) return true;
  if (FALSE.has(t)) return false;
  throw new CellError(`is not a yes/no value (TRUE, FALSE, 1, 0): ${JSON.stringify(text)}`);
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
const THOUSANDS = /^\d{1,3}(,\d{3})+(\.\d+)?$/;

/** A plain decimal number (`.5`, `19.99`, `1,234.50`); blank → undefined; anything else throws. */
export function parseNumber(text: string): number | undefined {
  let t = text.trim().replace(/\s+/g, '');
  if (t === '') return undefined;
  if (THOUSANDS.test(t)) t = t.replace(/,/g, '');
  if (!NUMBER.test(t)) throw new CellError(`is not a number: ${JSON.stringify(text)}`);
  const n = Number(t);
  if (!Number.isFinite(n)) throw new CellError(`is not a number: ${JSON.stringify(text)}`);
  return n;
}

/** A non-negative number (weights, dimensions). */
export function parseMeasure(text: string): number | undefined {
  const n = parseNumber(text);
  if (n !== undefined && n < 0) throw new CellError(`must not be negative: ${JSON.stringify(text)}`);
  return n;
}

/** A price: a non-negative number, optionally with a leading currency sign (`$19.99`). */
export function parseMoney(text: string): number | undefined {
  const t = text.trim().replace(/^[$€£¥]\s*/, '');
  const n = parseNumber(t);
  if (n !== undefined && n < 0) throw new CellError(`must not be negative: ${JSON.stringify(text)}`);
  return n === undefined ? undefined : Math.round(n * 1e6) / 1e6;
}

/** A non-negative integer (positions). */
export function parseIndex(text: string): number | undefined {
  const n = parseNumber(text);
  if (n === undefined) return undefined;
  if (!Number.isInteger(n) || n < 0) throw new CellError(`is not a whole number ≥ 0: ${JSON.stringify(text)}`);
  return n;
}

/** A converted measure as the exports write it: to 6 decimals (3.306934 lb for 1.5 kg). */
export function roundMeasure(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

/**
 * Whether `written` is what an export writes for the measure `exact`: within half the last
 * decimal it writes (and a hair more, for the float error of converting `exact`).
 */
export function withinMeasureRounding(exact: number, written: number): boolean {
  return Math.abs(exact - written) <= 0.5e-6 * (1 + 1e-9) + Number.EPSILON * Math.abs(written);
}

/** Grams in one of each weight unit the product schema knows. */
export const GRAMS_PER: Readonly<Record<string, number>> = { g: 1, kg: 1000, lb: 453.59237, oz: 28.349523125 };

/** Millimetres in one of each length unit the product schema knows. */
export const MILLIMETRES_PER: Readonly<Record<string, number>> = { mm: 1, cm: 10, m: 1000, in: 25.4 };

/** A number as a cell: `19.99`, `0.5`, blank for undefined. */
export function formatNumber(n: number | undefined | null): string {
  if (n === undefined || n === null || !Number.isFinite(n)) return '';
  return String(n);
}

// ---------------------------------------------------------------------------------------------
// WooCommerce lists, text and formula escaping
// ---------------------------------------------------------------------------------------------

/**
 * A WooCommerce list cell (`Blue, Green`, `A\, B, C`): split at every comma not escaped as `\,`,
 * each item trimmed and unescaped, blanks dropped (WC_Product_CSV_Importer::explode_values).
 */
export function splitWooList(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && text[i + 1] === ',') {
      cur += ',';
      i++;
    } else if (c === ',') {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out.map((s) => s.trim()).filter((s) => s !== '');
}

/** The inverse of splitWooList: commas inside an item escaped as `\,`, items joined with ", ". */
export function joinWooList(items: readonly string[]): string {
  return items.map((s) => s.replace(/,/g, '\\,')).join(', ');
}

/**
 * WooCommerce's exporter writes a newline as a literal `\n` and an existing literal `\n` as `\\n`
 * (filter_description_field); its importer reverses that (parse_description_field). Real
 * newlines in a hand-written file are kept; CRLF and CR become LF.
 */
export function decodeWooText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\\\\n')
    .map((part) => part.replace(/\\n/g, '\n'))
    .join('\\n');
}

export function encodeWooText(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(/\\n/g, '\\\\n').replace(/\n/g, '\\n');
}

const FORMULA_TRIGGERS = ['=', '+', '-', '@', '\t', '\r'];

/** WooCommerce exports prefix a value that starts with = + - @ (tab, CR) with `'`; undo that. */
export function unprefixFormula(text: string): string {
  return text.length > 1 && text[0] === "'" && FORMULA_TRIGGERS.includes(text[1]) ? text.slice(1) : text;
}

/** Prefix a value that a spreadsheet would run as a formula with `'` (WC_CSV_Exporter::escape_data). */
export function prefixFormula(text: string): string {
  return text !== '' && FORMULA_TRIGGERS.includes(text[0]) ? `'${text}` : text;
}

// ---------------------------------------------------------------------------------------------
// Categories, tags
// ---------------------------------------------------------------------------------------------

/** `Clothing > Tshirts` (any spacing around `>`) → {name: 'Tshirts', path: 'Clothing > Tshirts'}. */
export function parseCategoryPath(text: string): { name: string; path: string } | undefined {
  const segments = text
    .split('>')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (!segments.length) return undefined;
  return { name: segments[segments.length - 1], path: segments.join(' > ') };
}

/** Shopify tags: comma-separated (a tag cannot hold a comma), trimmed, blanks and repeats dropped. */
export function splitTags(text: string): string[] {
  return unique(
    text
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  );
}

export function unique<T>(items: readonly T[]): T[] {
  return [...new Set(items)];
}

// ---------------------------------------------------------------------------------------------
// Handles, SKUs, media
// ---------------------------------------------------------------------------------------------

/** A URL slug: lower-case ASCII letters, digits and single hyphens (accents folded). */
export function slugify(text: string): string {
  return text
    .replace(/ß/g, 'ss')
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** 32-bit FNV-1a, base 36: a short deterministic fingerprint for text with no slug-able characters. */
export function fingerprint(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(36).toUpperCase();
}

const SKU_MAX = 100;

/** A SKU the schema accepts: upper-case, no whitespace (runs become `-`), at most 100 characters. */
export function toSku(text: string): string {
  return text.trim().replace(/\s+/g, '-').toUpperCase().slice(0, SKU_MAX);
}

/**
 * A deterministic SKU from parts (a handle or parent SKU, then option values): each part slugged,
 * joined with `-`, upper-case. Parts with nothing slug-able contribute a fingerprint instead.
 */
export function deriveSku(...parts: string[]): string {
  const pieces = parts
    .filter((p) => p.trim() !== '')
    .map((p) => {
      const s = slugify(p);
      return s || fingerprint(p).toLowerCase();
    });
  const joined = pieces.join('-').toUpperCase();
  if (joined.length <= SKU_MAX) return joined;
  const tail = `-${fingerprint(joined)}`;
  return joined.slice(0, SKU_MAX - tail.length) + tail;
}

/** `base`, or `base-2`, `base-3`, … : the first not in `taken` (which it then joins). */
export function claimSku(base: string, taken: Set<string>): string {
  let sku = base;
  for (let n = 2; taken.has(sku); n++) {
    const suffix = `-${n}`;
    sku = base.slice(0, SKU_MAX - suffix.length) + suffix;
  }
  taken.add(sku);
  return sku;
}

/** A media src the schema accepts: http(s), no whitespace (spaces percent-encoded). Throws otherwise. */
export function mediaSrc(text: string): string {
  const src = text.trim().replace(/\s/g, '%20');
  if (!/^https?:\/\/\S+$/i.test(src)) throw new CellError(`is not an http:// or https:// URL: ${JSON.stringify(text)}`);
  if (src.length > 2000) throw new CellError('is longer than 2000 characters');
  return src;
}

/** A media name: the URL's file name (decoded, no query), else `image-<n>`. */
export function mediaName(src: string, n: number): string {
  const path = src.replace(/[?#].*$/, '');
  let last = path.slice(path.lastIndexOf('/') + 1);
  try {
    last = decodeURIComponent(last);
  } catch {
    // keep it encoded
  }
  last = last.trim().slice(0, 300);
  return last || `image-${n}`;
}

/** Media ids the layouts assign: `img-1`, `img-2`, … in media order (ids the schema accepts). */
export function mediaId(index: number): string {
  return `img-${index + 1}`;
}

/** Product option ids the layouts assign: `option1`, `option2`, … (Shopify's own names). */
export function optionId(index: number): string {
  return `option${index + 1}`;
}

// ---------------------------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------------------------

/** Drops undefined members, so a body carries only what the rows gave. */
export function compact<T extends Record<string, unknown>>(obj: T): T {
  for (const k of Object.keys(obj)) if (obj[k] === undefined) delete obj[k];
  return obj;
}

/**
 * What a platform layout's file carries (ParsedProduct.carried), from dotted paths. A blank cell
 * clears: these layouts' exports write a blank for "none" (no compare-at price, no barcode).
 */
export function carriedPaths(dotted: {
  product: string[];
  variant: string[];
  media: string[];
  fromOptions: string[];
  cleared: string[];
  lossy: { format: NonNullable<Carried['lossy']>['format']; paths: string[] };
  positionsFromOrder?: boolean;
}): Carried {
  const split = (paths: string[]) => paths.map((p) => p.split('.'));
  return {
    product: split(dotted.product),
    variant: split(dotted.variant),
    media: split(dotted.media),
    fromOptions: split(dotted.fromOptions),
    cleared: split(dotted.cleared),
    lossy: { ...dotted.lossy, paths: split(dotted.lossy.paths) },
    positionsFromOrder: dotted.positionsFromOrder,
    blankClears: true,
  };
}

/** Collects "<column>: <problem>" messages while reading cells; a failed read yields undefined. */
export class Problems {
  readonly list: string[] = [];
  read<T>(column: string, fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      if (err instanceof CellError) {
        this.add(`${column}: ${err.message}`);
        return undefined;
      }
      throw err;
    }
  }
  /** Adds a message once (a cell read twice reports once). */
  add(message: string): void {
    if (!this.list.includes(message)) this.list.push(message);
  }
}

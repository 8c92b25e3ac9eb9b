import type { CsvRecord, Layout, ParsedProduct } from './layout';
import type { Readable } from 'node:stream';
import { parseCsvStream, parseCsvText } from './parse';

/** Keys that would reach an object's prototype: refused in mappings (ajv schemas also refuse them). */
export const FORBIDDEN_KEYS = ['__proto__', 'constructor', 'prototype'];

/** Renames columns as `mappings` says (CSV column → the layout's column), before the layout reads them. */
export function applyMappings(records: CsvRecord[], mappings: Record<string, string> | undefined): CsvRecord[] {
  const rename = renamer(mappings);
  return rename ? records.map(rename) : records;
}

/** One record's columns renamed as `mappings` says; null when it renames nothing. */
export function renamer(mappings: Record<string, string> | undefined): ((r: CsvRecord) => CsvRecord) | null {
  const pairs = Object.entries(mappings ?? {}).filter(([from, to]) => from !== to);
  if (!pairs.length) return null;
  return (r) => {
    const values: Record<string, string> = Object.create(null);
    for (const [k, v] of Object.entries(r.values)) values[k] = v;
    for (const [from, to] of pairs) {
      if (from in values) {
        values[to] = values[from];
        delete values[from];
      }
    }
    return { row: r.row, values };
  };
}

/** The header after `mappings`: renamed columns take the place of the ones they rename. */
export function mappedHeader(header: string[], mappings: Record<string, string> | undefined): string[] {
  const rename = renamer(mappings);
  if (!rename) return header;
  return Object.keys(rename({ row: 0, values: Object.fromEntries(header.map((h) => [h, ''])) }).values);
}

/** CSV text → the products it describes, in the given layout. */
export function readProducts(
  text: string,
  layout: Layout,
  mappings?: Record<string, string>,
): { parsed: ParsedProduct[]; rows: number } {
  const { records } = parseCsvText(text);
  const parsed = layout.parse(applyMappings(records, mappings));
  return { parsed, rows: records.length };
}

/** The same, from a stream (an uploaded object), without holding the file's text. */
export async function readProductsFrom(
  input: Readable,
  layout: Layout,
  mappings?: Record<string, string>,
): Promise<{ parsed: ParsedProduct[]; rows: number }> {
  const { records } = await parseCsvStream(input);
  const parsed = layout.parse(applyMappings(records, mappings));
  return { parsed, rows: records.length };
}

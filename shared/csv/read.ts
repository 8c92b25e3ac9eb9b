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

/**
 * One record's columns renamed as `mappings` says, all at once (a column renamed to the name of
 * another that is renamed in turn keeps its own value: `{Name: 'title', title: 'brand'}`, or a
 * swap); null when it renames nothing. A renamed column wins over one already named as its target.
 */
export function renamer(mappings: Record<string, string> | undefined): ((r: CsvRecord) => CsvRecord) | null {
  const to = new Map(Object.entries(mappings ?? {}).filter(([from, target]) => from !== target));
  if (!to.size) return null;
  return (r) => {
    const out = new Map<string, { value: string; renamed: boolean }>();
    for (const [column, value] of Object.entries(r.values)) {
      const target = to.get(column);
      const name = target ?? column;
      if (!target && out.get(name)?.renamed) continue;
      out.set(name, { value, renamed: target !== undefined });
    }
    const values: Record<string, string> = Object.create(null);
    for (const [name, { value }] of out) values[name] = value;
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
  return { parsed, rows: rowsOf(parsed) };
}

/** The rows that make products: a row of empty cells makes nothing and is counted nowhere. */
function rowsOf(parsed: ParsedProduct[]): number {
  return parsed.reduce((n, p) => n + p.rows.length, 0);
}

/** The same, from a stream (an uploaded object), without holding the file's text. */
export async function readProductsFrom(
  input: Readable,
  layout: Layout,
  mappings?: Record<string, string>,
): Promise<{ parsed: ParsedProduct[]; rows: number; records: number }> {
  const { records } = await parseCsvStream(input);
  const parsed = layout.parse(applyMappings(records, mappings));
  // records: every row the file holds, as the async import's row cap counts them (stage.ts)
  return { parsed, rows: rowsOf(parsed), records: records.length };
}

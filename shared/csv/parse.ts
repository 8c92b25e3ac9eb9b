import type { Readable } from 'node:stream';
import { parse as parseStream } from 'csv-parse';
import { parse } from 'csv-parse/sync';
import { AppError } from '../errors/catalog';
import type { CsvRecord } from './layout';
import { csvHeader, csvLine } from './lines';

/** csv-parse options for every layout: BOM stripped, CRLF or LF, ragged rows tolerated, records (not lines) counted. */
export const PARSE_OPTIONS = {
  bom: true,
  columns: true,
  skip_empty_lines: true,
  relax_column_count: true,
  trim: false,
} as const;

/** What csv-parse gives for a record with `info: true`. */
interface ParsedRecord {
  record: Record<string, string>;
  info: { records: number; empty_lines: number };
}

/**
 * A record's row as a spreadsheet shows it (header row 1): the empty lines the parser skipped
 * before it count, a record whose quoted cell spans lines is one row.
 */
const rowOf = ({ info }: ParsedRecord) => info.records + 1 + info.empty_lines;

/** Parses CSV text into records numbered as a spreadsheet shows them (header row 1). */
export function parseCsvText(text: string): { columns: string[]; records: CsvRecord[] } {
  let rows: ParsedRecord[];
  try {
    rows = parse(text, { ...PARSE_OPTIONS, info: true }) as unknown as ParsedRecord[];
  } catch (err) {
    throw new AppError(400, 'bad-request/invalid-import-file', `Not a valid CSV file: ${(err as Error).message}`);
  }
  const columns = rows.length ? Object.keys(rows[0].record) : headerOf(text);
  return { columns, records: rows.map((r) => ({ row: rowOf(r), values: r.record })) };
}

/**
 * Parses a CSV stream (an S3 object's body) record by record, so the file itself is never held
 * in memory, only its records.
 */
export async function parseCsvStream(input: Readable): Promise<{ records: CsvRecord[] }> {
  const records: CsvRecord[] = [];
  for await (const record of csvRecords(input)) records.push(record);
  return { records };
}

/** The records of a CSV stream, one at a time; `header` is called with the header row first. */
export async function* csvRecords(input: Readable, header?: (columns: string[]) => void): AsyncGenerator<CsvRecord> {
  const parser = input.pipe(
    parseStream({
      ...PARSE_OPTIONS,
      info: true,
      columns: (columns: string[]) => {
        header?.(columns);
        return columns;
      },
    }),
  );
  input.on('error', (err) => parser.destroy(err));
  try {
    for await (const r of parser as AsyncIterable<ParsedRecord>) yield { row: rowOf(r), values: r.record };
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith('CSV_'))
      throw new AppError(400, 'bad-request/invalid-import-file', `Not a valid CSV file: ${(err as Error).message}`);
    throw err;
  } finally {
    input.destroy(); // a reader that stops early releases the connection
  }
}

function headerOf(text: string): string[] {
  const [first] = parse(text, { bom: true, to_line: 1 }) as string[][];
  return first ?? [];
}

/** CSV text of records under the given columns (header first; CRLF as spreadsheets expect). */
export function toCsvText(columns: string[], records: Record<string, string>[]): string {
  return csvHeader(columns) + records.map((r) => csvLine(columns, r)).join('');
}

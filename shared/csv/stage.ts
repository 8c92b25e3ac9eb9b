import type { Readable } from 'node:stream';
import type { CsvRecord, Layout, ParsedProduct } from './layout';
import { csvRecords } from './parse';
import { mappedHeader, renamer } from './read';

/**
 * Reads a large CSV object into products in two passes, holding neither the file nor all of its
 * records: memory stays flat whatever the file's size.
 *
 * 1. Every record, cut down to the layout's key columns, is parsed as a whole file: that says
 *    which rows make each product (rows of one product need not be adjacent; a variation may
 *    come before its parent) and which SKUs the file gives.
 * 2. The object is read again; the rows of each product are gathered as they pass and, once its
 *    last row is in, the product is parsed from its whole records. Products come out in the
 *    order a whole-file parse gives (by first row), so derived SKUs come out the same too.
 *
 * A file's layout may group rows far apart; then the products waiting for a late row are held
 * until it comes.
 */

/** Set on a cut-down record whose other cells are not all blank (a layout skips blank records). */
const HAS_OTHER_CELLS = '\u0000other';

export interface StreamedFile {
  /** Records in the file (the header aside). */
  rows: number;
  /**
   * Records that make a product or a refused row: `rows` without the blank ones (a spreadsheet's
   * row of empty cells), which make nothing and are counted nowhere, as in a sync import.
   */
  productRows: number;
  /** Products (or refused rows) handed to `sink`. */
  products: number;
  exceedsRowCap: boolean;
  exceedsVariantCap: boolean;
}

export interface StreamLimits {
  maxRows: number;
  maxVariantsPerProduct: number;
}

/** How many records are read between two calls of `alive`. */
const ALIVE_EVERY = 1000;

/**
 * The products of the object `open` returns (called once per pass), handed to `sink` in file
 * order, `batchSize` at a time with the index of the first. Over a cap, no product is handed on.
 * `alive` is called every thousand records of either pass: a reader that heartbeats there is
 * seen alive through a first pass that hands nothing on.
 */
export async function streamProducts(
  open: () => Promise<Readable>,
  layout: Layout,
  mappings: Record<string, string> | undefined,
  limits: StreamLimits,
  sink: (batch: ParsedProduct[], firstIndex: number) => Promise<void>,
  batchSize = 500,
  alive?: (recordsRead: number) => void,
): Promise<StreamedFile> {
  let read = 0;
  const tick = () => {
    if (++read % ALIVE_EVERY === 0) alive?.(read);
  };
  const rename = renamer(mappings);

  // pass 1: key columns only
  let keys: string[] = [];
  const cut: CsvRecord[] = [];
  let rows = 0;
  for await (const raw of csvRecords(
    await open(),
    (header) => (keys = layout.keyColumns(mappedHeader(header, mappings))),
  )) {
    rows++;
    tick();
    if (rows > limits.maxRows) continue; // only counted from here: the file will not be imported
    const record = rename ? rename(raw) : raw;
    // no prototype: a column's name is the file's text
    const values: Record<string, string> = Object.create(null);
    for (const k of keys) if (record.values[k] !== undefined) values[k] = record.values[k];
    if (Object.entries(record.values).some(([k, v]) => !keys.includes(k) && typeof v === 'string' && v.trim() !== ''))
      values[HAS_OTHER_CELLS] = 'x';
    cut.push({ row: record.row, values });
  }
  if (rows > limits.maxRows)
    return { rows, productRows: rows, products: 0, exceedsRowCap: true, exceedsVariantCap: false };
  const groups = layout.parse(cut).map((p) => p.rows);
  const productRows = groups.reduce((sum, g) => sum + g.length, 0);
  const taken = layout.givenSkus(cut);
  cut.length = 0;
  if (groups.some((g) => g.length > limits.maxVariantsPerProduct))
    return { rows, productRows, products: 0, exceedsRowCap: false, exceedsVariantCap: true };

  // pass 2: whole records, one product at a time
  // rows are numbered as a spreadsheet shows them: empty lines leave gaps, so by row, not by index
  const groupOfRow = new Map<number, number>();
  const missing = new Int32Array(groups.length);
  groups.forEach((g, i) => {
    for (const row of g) groupOfRow.set(row, i);
    missing[i] = g.length;
  });
  const gathering = new Map<number, CsvRecord[]>();
  const complete = new Map<number, CsvRecord[]>();
  let next = 0; // the next group to parse, in file order
  let batch: ParsedProduct[] = [];
  let handed = 0;
  const flush = async () => {
    if (!batch.length) return;
    const b = batch;
    batch = [];
    await sink(b, handed);
    handed += b.length;
  };
  for await (const raw of csvRecords(await open())) {
    tick();
    const g = groupOfRow.get(raw.row) ?? -1;
    if (g < 0) continue; // a blank record: it makes nothing
    const records = gathering.get(g) ?? [];
    records.push(rename ? rename(raw) : raw);
    if (--missing[g] > 0) {
      gathering.set(g, records);
      continue;
    }
    gathering.delete(g);
    complete.set(g, records);
    for (let ready = complete.get(next); ready; ready = complete.get(next)) {
      complete.delete(next++);
      batch.push(...layout.parse(ready, taken));
      if (batch.length >= batchSize) await flush();
    }
  }
  if (next < groups.length)
    throw new Error(`the object changed between reads: ${groups.length - next} products lack rows`);
  await flush();
  return { rows, productRows, products: handed, exceedsRowCap: false, exceedsVariantCap: false };
}

import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { csvHeader, csvLine } from '../../shared/csv/lines';

/**
 * The exports write CSV lines by hand (shared/csv/lines.ts). Every line must be what csv-stringify
 * writes with our options and line breaks quoted (`quote_record_delimiter`), and read back as
 * the values it was made of.
 */
const columns = ['a', 'b', 'c'];
const options = { columns, record_delimiter: '\r\n', quote_record_delimiter: true };
const cell = fc.oneof(
  fc.string(),
  fc.constantFrom('', '"', '""', ',', '\r', '\n', '\r\n', 'a\r', ' x ', '=1+2', 'a"b,c\r\nd', '\t'),
  fc.constant(undefined),
);
const record = fc.record({ a: cell, b: cell, c: cell }, { requiredKeys: [] });

test('a line is what csv-stringify writes, for any values', () => {
  fc.assert(
    fc.property(record, (r) => {
      expect(csvLine(columns, r)).toBe(stringify([r], options));
    }),
    { numRuns: 2000 },
  );
});

test('a file of lines reads back as the values written, line breaks in cells included', () => {
  fc.assert(
    fc.property(fc.array(record, { minLength: 1, maxLength: 5 }), (records) => {
      const text = csvHeader(columns) + records.map((r) => csvLine(columns, r)).join('');
      const read = parse(text, { columns: true, relax_column_count: true }) as Record<string, string>[];
      expect(read).toEqual(records.map((r) => ({ a: r.a ?? '', b: r.b ?? '', c: r.c ?? '' })));
    }),
    { numRuns: 500 },
  );
});

test('quotes only what needs them, doubling quotes inside', () => {
  expect(csvLine(columns, { a: 'plain', b: 'x,"y"', c: 'two\nlines' })).toBe('plain,"x,""y""","two\nlines"\r\n');
  expect(csvLine(['a', 'b'], {})).toBe(',\r\n');
  expect(csvHeader(['sku', 'variant.sku'])).toBe('sku,variant.sku\r\n');
});

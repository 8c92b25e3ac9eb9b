/** A cell needs quotes when it holds a quote, a comma or a line break. */
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One CSV line (CRLF-terminated) of `record`'s values under `columns`: comma-separated, a cell
 * quoted when it holds a quote (doubled inside), a comma or a line break, an empty or missing
 * value as nothing. csv-stringify with our options wrote the same, except that it left a lone
 * \n or \r unquoted (it quotes only its record delimiter, \r\n), which split a description's
 * line into a new row for every reader. Hand-written also because csv-stringify's generic path
 * cost about 20 µs a line, a tenth of a 100,000-row export.
 */
export function csvLine(columns: readonly string[], record: Readonly<Record<string, string | undefined>>): string {
  let line = '';
  for (let i = 0; i < columns.length; i++) {
    const value = record[columns[i]] ?? '';
    if (i > 0) line += ',';
    line += NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
  }
  return `${line}\r\n`;
}

/** The header line: the column names as a line. */
export function csvHeader(columns: readonly string[]): string {
  return csvLine(columns, Object.fromEntries(columns.map((c) => [c, c])));
}

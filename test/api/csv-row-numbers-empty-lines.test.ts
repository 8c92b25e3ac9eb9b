import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A row is numbered as a spreadsheet shows it (header row 1): an empty line of the file is a row
 * there, as a row of commas is, and a record whose quoted cell spans lines is one row. Sync
 * import, validate and the async import name the same rows; a row of empty cells makes nothing
 * and is counted nowhere (docs/csv.md), validate included. Before, the parser skipped empty lines
 * and numbered what was left, so after one every error named the row above the bad one; and
 * validate counted a row of empty cells (rows 3, validRows 3 for an import of 2 rows).
 */
let deps: TestDeps;
let api: ApiClient;
let n = 0;
const P = () => `ROW${Date.now().toString(36).toUpperCase()}${++n}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'csv row numbers')).key);
});
afterAll(() => deps.close());

async function upload(content: string): Promise<string> {
  const res = await api.post('/products/bulk/csv/upload-url');
  expect(res.status).toBe(200);
  const form = new FormData();
  for (const [name, value] of Object.entries(res.body.fields as Record<string, string>)) form.append(name, value);
  form.append('file', new Blob([content]), 'products.csv');
  const put = await fetch(res.body.url, { method: 'POST', body: form });
  expect(put.status).toBeLessThan(300);
  return res.body.s3Key;
}

async function finished(jobId: string) {
  for (let i = 0; i < 300; i++) {
    const res = await api.get(`/products/bulk/csv/import/${jobId}`);
    if (['completed', 'failed'].includes(res.body.status)) return res.body;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`job ${jobId} did not finish`);
}

/** Rows: 1 header, 2 good, 3 empty line, 4 good with a two-line description, 5 and 6 empty, 7 bad, 8 commas, 9 bad. */
const file = (p: string) =>
  `sku,title,price,description\r\n${p}1,One,5,\r\n\r\n${p}2,Two,6,"line one\r\nline two"\r\n\r\n\r\n` +
  `${p}3,Three,x,\r\n,,,\r\n${p}4,Four,y,\r\n`;
const bad = (p: string) => [
  { row: 7, sku: `${p}3`, message: expect.stringContaining('price') },
  { row: 9, sku: `${p}4`, message: expect.stringContaining('price') },
];

test('the sync import names the rows a spreadsheet shows, empty lines counted', async () => {
  const p = P();
  const res = await api.post('/products/bulk/csv/import', { content: file(p), createIfNotExists: true });
  expect(res.status).toBe(207);
  expect(res.body.errors).toEqual(bad(p));
  expect(res.body).toMatchObject({ created: 2, totalProcessed: 4 });
});

test('validate and the async import name the same rows, and count the rows the import counts', async () => {
  const p = P();
  const s3Key = await upload(file(p));
  const validation = await api.post('/products/bulk/csv/validate', { s3Key, config: { createIfNotExists: true } });
  expect(validation.status).toBe(200);
  expect(validation.body).toMatchObject({ rows: 4, validRows: 2 });
  expect(validation.body.invalidRows.map((r: { row: number }) => r.row)).toEqual([7, 9]);

  const job = await api.post('/products/bulk/csv/import', { s3Key, config: { createIfNotExists: true } });
  expect(job.status).toBe(202);
  const status = await finished(job.body.jobId);
  expect(status).toMatchObject({ totalRows: 4, processedRows: 4, created: 2, failed: 2 });
  // every good row after the empty lines was imported
  for (const sku of [`${p}1`, `${p}2`]) expect((await api.get(`/products/sku/${sku}/exists`)).body.exists).toBe(true);
  const report = await (await fetch(status.errorReportUrl)).text();
  expect(
    report
      .split('\r\n')
      .slice(1, 3)
      .map((line) => line.split(',')[0]),
  ).toEqual(['7', '9']);
});

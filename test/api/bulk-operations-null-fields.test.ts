import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A bulk operation answers operationName, rollbackOf and rolledBackBy, null when unset, by id and
 * in the list. Before, they were missing: BulkOperations.start makes the record with an upsert's
 * $setOnInsert, which the embedded FerretDB applied without its null and [] values (MongoDB sets
 * them). The server build now sets them, and the presenter answers null for a record stored
 * without them.
 */
let deps: TestDeps;
let api: ApiClient;
const P = `FSN${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'ferret setOnInsert null');
  api = new ApiClient(t.key);
});
afterAll(() => deps.close());

test('a bulk operation started without a name answers operationName, rollbackOf and rolledBackBy null', async () => {
  const content = toCsvText(nativeLayout.columns, [{ sku: `${P}-A`, title: 'Linen shirt', price: '10' }]);
  const res = await api.post('/products/bulk/csv/import', { content, createIfNotExists: true });
  expect(res.status).toBe(200);
  const operationId = res.body.operationId as string;
  expect(operationId).toMatch(/^bop_/);

  const op = await api.get(`/products/bulk/operations/${operationId}`);
  expect(op.status).toBe(200);
  expect(op.body).toHaveProperty('operationName', null);
  expect(op.body).toHaveProperty('rollbackOf', null);
  expect(op.body).toHaveProperty('rolledBackBy', null);

  const list = await api.get('/products/bulk/operations', { query: { type: 'csv-import' } });
  const listed = list.body.operations.find((o: { id: string }) => o.id === operationId);
  expect(listed).toHaveProperty('operationName', null);
  expect(listed).toHaveProperty('rollbackOf', null);
  expect(listed).toHaveProperty('rolledBackBy', null);
});

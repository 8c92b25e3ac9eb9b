import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';

/**
 * A sync import that changed nothing records no bulk operation (`operationId` null), also when
 * every write it tried lost to a concurrent import of the same new SKU.
 */
let deps: TestDeps;
let api: ApiClient;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'sync import no-op operation')).key);
});
afterAll(() => deps.close());

test('a sync import all of whose writes failed records no bulk operation', async () => {
  const lost: { status: number; body: Record<string, any> }[] = [];
  for (let round = 0; round < 10 && lost.length === 0; round++) {
    const sku = `SINO${Date.now().toString(36).toUpperCase()}${round}`;
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        api.post('/products/bulk/csv/import', {
          content: toCsvText(nativeLayout.columns, [{ sku, title: `Racer ${i}`, price: String(i + 1) }]),
          createIfNotExists: true,
        }),
      ),
    );
    for (const a of answers) expect([200, 207]).toContain(a.status);
    lost.push(...answers.filter((a) => a.body.created + a.body.updated === 0 && a.body.errors.length > 0));
  }
  expect(lost.length).toBeGreaterThan(0);
  const history = (await api.get('/products/bulk/operations', { query: { type: 'csv-import', limit: 200 } })).body;
  for (const a of lost) {
    const recorded = a.body.operationId
      ? (await api.get(`/products/bulk/operations/${a.body.operationId}`)).body
      : null;
    expect({ operationId: a.body.operationId, recorded }).toEqual({ operationId: null, recorded: null });
    expect(history.operations.map((o: { id: string }) => o.id)).not.toContain(a.body.operationId);
  }
});

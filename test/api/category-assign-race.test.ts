import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A client retrying POST /products/marketplace-categories while its first attempt still runs (a
 * timeout, a double click) sends the same request twice at once. The product ends up with the
 * category once; the attempt that changed nothing must say so and record nothing.
 *
 * docs/publication.md: "records the request as one bulk operation (type marketplace-category)
 * that rollback undoes; repeating it changes nothing." The route's description
 * (api/categories/routes.ts): "The change is one bulk operation (type `marketplace-category`;
 * `operationId`, null when nothing changed)". shared/edits/apply.ts closeOperation: "a run that
 * changes nothing records no operation."
 */
const P = `CR${Date.now().toString(36).toUpperCase()}`;
let deps: TestDeps;
let api: ApiClient;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey(undefined, 'category assign race')).key);
});
afterAll(() => deps.close());

test('the same assignment sent several times at once: answers that assigned nothing carry no operationId, and the history holds one operation', async () => {
  const ch = (
    await api.post('/channels', {
      name: `Race ${P}`,
      type: 'mercadolibre',
      settings: { endpointUrl: 'https://channel.example.com/api' },
      secret: 'test-signing-secret-0123456789',
    })
  ).body.id as string;
  const seen: { assigned: number; unchanged: number; operationId: string | null }[] = [];
  for (let round = 0; round < 6; round++) {
    const skus: string[] = [];
    for (let i = 0; i < 5; i++) {
      const sku = `${P}-${++n}`;
      const res = await api.post('/products', { sku, title: { value: `Race ${n}` }, price: 10 });
      expect(res.status).toBe(201);
      skus.push(sku);
    }
    const body = { skus, channelId: ch, category: { id: `MLM${round}`, name: 'Phones' } };
    const answers = await Promise.all([1, 2, 3, 4, 5, 6].map(() => api.post('/products/marketplace-categories', body)));
    for (const a of answers) {
      expect(a.status).toBe(200);
      seen.push({ assigned: a.body.assigned, unchanged: a.body.unchanged, operationId: a.body.operationId });
    }
  }
  // every answer that changed nothing says so with operationId null
  expect(seen.filter((s) => s.assigned === 0 && s.operationId !== null)).toEqual([]);
  // and the history holds no operation that changed nothing
  const ops = await api.get('/products/bulk/operations', { query: { type: 'marketplace-category', limit: 200 } });
  expect(ops.status).toBe(200);
  const mine = ops.body.operations.filter((o: any) => o.source?.channelId === ch);
  const empty = mine.filter((o: any) => (o.counts?.updated ?? o.updated ?? 0) === 0);
  expect(empty.map((o: any) => ({ id: o.id, counts: o.counts }))).toEqual([]);
});

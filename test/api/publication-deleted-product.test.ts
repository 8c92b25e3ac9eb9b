import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { waitFor } from '../../scripts/stack/process';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';
import { TenantDb } from '../../shared/db/tenant-db';
import { isFinished } from '../../shared/jobs/collection';
import { products } from '../../shared/products/collections';

/**
 * A product of a publication deleted before its batch is read is skipped (PRODUCT_NOT_FOUND) and
 * counted so: published, failed and skipped add up to the job's total.
 */
const SECRET = 'deleted-signing-secret-0123456789';
const N = 251;
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let server: ChannelServer;
const P = `RDP${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'publication deleted product');
  api = new ApiClient(t.key);
  tenantId = t.tenantId;
  server = await new ChannelServer(SECRET).start();
});
afterAll(async () => {
  await server.close();
  await deps.close();
});

test('a selected product deleted before its batch runs is still accounted for in the job counts', async () => {
  const skus = Array.from({ length: N }, (_, i) => `${P}-${String(i).padStart(3, '0')}`);
  const imp = await api.post('/products/bulk/csv/import', {
    format: 'native',
    content: toCsvText(
      nativeLayout.columns,
      skus.map((sku) => ({ sku, title: `T ${sku}`, price: '5' })),
    ),
    createIfNotExists: true,
  });
  expect(imp.status).toBe(200);
  expect(imp.body.created).toBe(N);
  const ch = await api.post('/channels', {
    name: 'Shop',
    type: 'custom',
    settings: { endpointUrl: server.url, concurrency: 1 },
    secret: SECRET,
  });
  expect(ch.status).toBe(201);

  server.hold();
  const res = await api.post('/products/export', {
    channelId: ch.body.id,
    mode: 'selected',
    productIds: skus,
    options: { enableCategorization: false },
  });
  expect(res.status).toBe(202);
  await waitFor('a send held by the channel', async () => server.received.some((r) => r.sku.startsWith(P)), {
    timeoutMs: 60_000,
  });
  // the last product is in the second batch: delete it while the first batch runs
  const last = await new TenantDb(deps.db, tenantId).collection(products).findOne({ sku: skus[N - 1] });
  expect((await api.delete(`/products/${last!._id.toHexString()}`)).status).toBe(200);
  server.release();

  let job: any;
  for (let i = 0; i < 600; i++) {
    job = (await api.get(`/products/export/${res.body.jobId}`)).body;
    if (isFinished(job.status)) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  expect(job).toMatchObject({ status: 'completed', total: N, published: N - 1, percent: 100 });
  expect({ failed: job.failed, skipped: job.skipped }).toEqual({ failed: 0, skipped: 1 });
  expect(job.published + job.failed + job.skipped).toBe(job.total);
  expect(job.processed).toBe(job.total);
}, 180_000);

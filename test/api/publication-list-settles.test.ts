import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { waitFor } from '../../scripts/stack/process';
import { TenantDb } from '../../shared/db/tenant-db';
import { jobs } from '../../shared/jobs/collection';

/**
 * GET /products/export, the tenant's recent publications, shows each job as GET
 * /products/export/{jobId} does: a job whose workflow was terminated (in the Temporal UI) is
 * listed failed, without a read by id first, so a client polling the list sees it end.
 */
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let server: ChannelServer;
const P = `PLS${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'publication list settles');
  tenantId = t.tenantId;
  api = new ApiClient(t.key);
  server = await new ChannelServer(SECRET).start();
});
afterAll(async () => {
  server.release();
  await server.close();
  await deps.close();
});

test('the publication list shows a job whose workflow was terminated as failed, like the read by id', async () => {
  const ch = await api.post('/channels', {
    name: `List ${P}`,
    type: 'custom',
    settings: { endpointUrl: server.url, timeoutMs: 120_000 },
    secret: SECRET,
  });
  expect(ch.status).toBe(201);
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) {
    const res = await api.post('/products', {
      sku: `${P}-${i}`,
      title: { value: `Item ${i}` },
      price: 10,
      status: 'active',
      brand: 'Acme',
      category: { name: 'Tools', path: 'Home > Tools' },
      media: [{ src: 'https://img.example.com/1.jpg', name: 'front', alt: { value: 'front' }, position: 0 }],
    });
    expect(res.status).toBe(201);
    ids.push(res.body.id);
  }
  server.hold(); // the sends hang, so the job is still running when its workflow is terminated
  const started = await api.post('/products/export', { channelId: ch.body.id, mode: 'selected', productIds: ids });
  expect(started.status).toBe(202);
  const jobId = started.body.jobId as string;
  await waitFor('a send held by the channel', async () => server.received.some((r) => r.sku.startsWith(P)), {
    timeoutMs: 60_000,
  });
  const job = await new TenantDb(deps.db, tenantId).collection(jobs).findOne({ _id: jobId });
  await deps.temporal.workflow.getHandle(job!.workflowId).terminate('operator: channel stuck');

  const listed = (await api.get('/products/export')).body.jobs.find((j: { jobId: string }) => j.jobId === jobId);
  expect(listed).toBeDefined();
  expect(listed.status).toBe('failed');
  expect(listed.finishedAt).not.toBeNull();
  const read = await api.get(`/products/export/${jobId}`);
  expect(read.body.status).toBe('failed');
});

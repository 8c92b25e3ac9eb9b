import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { waitFor } from '../../scripts/stack/process';
import { TenantDb } from '../../shared/db/tenant-db';
import { isFinished, jobs } from '../../shared/jobs/collection';

/**
 * The categories a publication suggested stay reversible when its workflow is terminated.
 *
 * docs/publication.md: "During a publication (enableCategorization, default true) a product
 * without a category for the channel's key gets the predictor's first suggestion (source
 * suggested) before it is sent, recorded in one bulk operation per job (bop_<jobId>, reversible)";
 * and "A job whose workflow ended without recording it (terminated in the Temporal UI, timed out)
 * is recorded failed when next read, and frees its channel lock". Spec: GET
 * /products/bulk/operations/{id} → "full operation plus canRollback".
 */
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let server: ChannelServer;
const P = `CPT${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'publication terminated categories');
  tenantId = t.tenantId;
  api = new ApiClient(t.key);
  server = await new ChannelServer(SECRET).start();
  server.predictor = () => [
    { categoryId: 'MLM1001', categoryName: 'Taladros', domainId: 'MLM-D', domainName: 'Taladros' },
  ];
});
afterAll(async () => {
  server.release();
  await server.close();
  await deps.close();
});

test('a publication terminated by an operator after suggesting categories: its job is failed, and bop_<jobId> is ended and can be rolled back', async () => {
  const ch = (
    await api.post('/channels', {
      name: `Terminated ${P}`,
      type: 'mercadolibre',
      // a send held past the checks below: it must not time out and write its outcome meanwhile
      settings: { endpointUrl: server.url, timeoutMs: 120_000 },
      secret: SECRET,
    })
  ).body.id as string;
  const items: { id: string; sku: string }[] = [];
  for (let i = 0; i < 30; i++) {
    const res = await api.post('/products', {
      sku: `${P}-${i}`,
      title: { value: `Taladro ${i}` },
      price: 10,
      status: 'active',
      brand: 'Acme',
      media: [{ src: `https://img.example.com/${i}.jpg`, name: 'front', alt: { value: 'front' }, position: 0 }],
    });
    expect(res.status).toBe(201);
    items.push(res.body);
  }
  server.hold(); // the sends hang: the channel is stuck, the predictor still answers
  let jobId: string;
  {
    const res = await api.post('/products/export', {
      channelId: ch,
      mode: 'selected',
      productIds: items.map((i) => i.id),
    });
    expect(res.status).toBe(202);
    jobId = res.body.jobId;
    await waitFor('a send held by the channel', async () => server.received.some((r) => r.sku.startsWith(P)), {
      timeoutMs: 60_000,
    });
    const job = await new TenantDb(deps.db, tenantId).collection(jobs).findOne({ _id: jobId });
    await deps.temporal.workflow.getHandle(job!.workflowId).terminate('operator: channel stuck');
  }
  // (the held send stays held until afterAll: released now, the terminated workflow's activity,
  // still running on the worker, would write its binding and change the products after the
  // operation, which a rollback then rightly refuses)
  // the job is recorded failed when next read
  await waitFor('job settled', async () => isFinished((await api.get(`/products/export/${jobId}`)).body.status), {
    timeoutMs: 30_000,
  });
  // its counts are its items' (none: every send was held), not a finished job's 100 % (as before)
  expect((await api.get(`/products/export/${jobId}`)).body).toMatchObject({
    status: 'failed',
    total: 30,
    processed: 0,
    published: 0,
    percent: 0,
  });
  expect((await api.get('/products/export')).body.jobs.find((j: { jobId: string }) => j.jobId === jobId)).toMatchObject(
    {
      status: 'failed',
      percent: 0,
    },
  );
  // what it suggested was written before the sends
  const withCategory = [];
  for (const it of items) {
    const p = (await api.get(`/products/${it.id}`)).body;
    if ((p.metafields ?? []).some((m: any) => m.namespace === 'mkt_category' && m.value?.source === 'suggested'))
      withCategory.push(it.sku);
  }
  expect(withCategory.length).toBeGreaterThan(0);
  // and is recorded in a reversible operation, not one left processing for ever
  let op = await api.get(`/products/bulk/operations/bop_${jobId}`);
  for (const until = Date.now() + 15_000; op.body?.status === 'processing' && Date.now() < until;) {
    await new Promise((r) => setTimeout(r, 500));
    op = await api.get(`/products/bulk/operations/bop_${jobId}`);
  }
  expect(op.status).toBe(200);
  expect({ status: op.body.status, canRollback: op.body.canRollback, reason: op.body.reason ?? null }).toMatchObject({
    status: 'completed',
    canRollback: true,
  });
});

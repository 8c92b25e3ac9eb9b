import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { waitFor } from '../../scripts/stack/process';
import { TenantDb } from '../../shared/db/tenant-db';
import { isFinished, jobs } from '../../shared/jobs/collection';

/**
 * A publication's cancel is recorded on the job, then signalled to its workflow. A batch that
 * reads the record first (the signal late, or never sent: the API died between the two) stops
 * before its next product, and the job ends cancelled, not failed.
 */
const SECRET = 'test-signing-secret-0123456789';
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let server: ChannelServer;
const P = `PCR${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey();
  api = new ApiClient(t.key);
  tenantId = t.tenantId;
  server = await new ChannelServer(SECRET).start();
});
afterAll(async () => {
  await server.close();
  await deps.close();
});

async function setup(count: number) {
  const ch = await api.post('/channels', {
    name: `C${++n}`,
    type: 'custom',
    settings: { endpointUrl: server.url },
    secret: SECRET,
  });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await api.post('/products', {
      sku: `${P}-${++n}`,
      title: { value: 'Product' },
      price: 10,
      status: 'active',
      brand: 'Acme',
      media: [{ src: 'https://img.example.com/1.jpg', name: 'front', alt: { value: 'front' }, position: 0 }],
    });
    ids.push(res.body.id);
  }
  return { ch: ch.body.id as string, ids };
}

async function finished(jobId: string) {
  for (let i = 0; i < 600; i++) {
    const res = await api.get(`/products/export/${jobId}`);
    if (isFinished(res.body.status)) return res.body;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('not finished');
}

test('the API dies after recording a cancel and before signalling it: the job ends cancelled', async () => {
  const { ch, ids } = await setup(40);
  server.delayMs = 100;
  const res = await api.post('/products/export', { channelId: ch, mode: 'selected', productIds: ids });
  expect(res.status).toBe(202);
  await waitFor('sending', async () => server.received.length > 4, { timeoutMs: 60_000 });
  // the cancel's first write, and no signal after it
  await new TenantDb(deps.db, tenantId)
    .collection(jobs)
    .updateOne({ _id: res.body.jobId, cancelRequestedAt: null } as never, { $set: { cancelRequestedAt: new Date() } });
  const job = await finished(res.body.jobId);
  server.delayMs = 0;
  expect(job.status).toBe('cancelled');
  expect(job.processed).toBeLessThan(ids.length);
});

import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { TenantDb } from '../../shared/db/tenant-db';
import { jobs } from '../../shared/jobs/collection';
import { editPatches } from '../../shared/edits/collections';
import { dropExpiredPreviews } from '../../shared/edits/cleanup';
import { PREVIEW_TTL_MS } from '../../shared/edits/runs';
import { products } from '../../shared/products/collections';

/**
 * A preview's lifetime: within it, an apply writes its plans; past it, the apply is refused (410
 * preview-expired) and the periodic sweep deletes the plans, other previews' plans untouched.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantDb: TenantDb;
const P = `PV${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  api = new ApiClient(tenant.key);
  tenantDb = new TenantDb(deps.db, tenant.tenantId);
  for (const i of [1, 2])
    expect((await api.post('/products', { sku: `${P}-${i}`, title: { value: `Mug ${i}` }, price: 8 })).status).toBe(
      201,
    );
});
afterAll(() => deps.close());

const flow = (tag: string) => ({
  selection: { skus: [`${P}-1`, `${P}-2`] },
  rules: [{ actions: [{ type: 'add', field: 'tags', values: [tag] }] }],
});

async function preview(tag: string): Promise<string> {
  const res = await api.post('/products/bulk/flow/preview', flow(tag));
  expect(res.status).toBe(200);
  expect(res.body.counts).toMatchObject({ matched: 2, changed: 2 });
  expect(Date.parse(res.body.expiresAt) - Date.parse(res.body.createdAt)).toBe(PREVIEW_TTL_MS);
  return res.body.previewId;
}

test('an expired preview is refused, and the sweep deletes its plans only', async () => {
  const old = await preview('old');
  const fresh = await preview('fresh');
  const plans = tenantDb.collection(editPatches);
  expect(await plans.countDocuments({ previewId: old })).toBe(2);

  // the preview (its job) and its plans a day and a minute old
  const past = new Date(Date.now() - PREVIEW_TTL_MS - 60_000);
  await tenantDb.collection(jobs).updateOne({ _id: old }, { $set: { createdAt: past } });
  await plans.updateMany({ previewId: old }, { $set: { createdAt: past } });

  const refused = await api.post('/products/bulk/flow/execute', { previewId: old });
  expect(refused.status).toBe(410);
  expect(refused.body).toMatchObject({ code: 'preview-expired', field: 'previewId' });

  expect(await dropExpiredPreviews(deps.db)).toBeGreaterThanOrEqual(2);
  expect(await plans.countDocuments({ previewId: old })).toBe(0);
  expect(await plans.countDocuments({ previewId: fresh })).toBe(2);

  // the fresh one still applies, exactly as planned
  const applied = await api.post('/products/bulk/flow/execute', { previewId: fresh });
  expect(applied.status).toBe(200);
  expect(applied.body.counts).toMatchObject({ matched: 2, changed: 2 });
  const stored = await tenantDb
    .collection(products)
    .find({ sku: { $in: [`${P}-1`, `${P}-2`] } })
    .toArray();
  expect(stored.map((p) => p.tags)).toEqual([['fresh'], ['fresh']]);
});

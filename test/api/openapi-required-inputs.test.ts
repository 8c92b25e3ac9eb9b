import { ApiClient, type HttpResult } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * What GET /openapi.json says a request must carry is what the API requires: a query parameter
 * whose absence is refused is declared required, and so is a body with required fields.
 */
let deps: TestDeps;
let api: ApiClient;
let doc: any;
let sysId: string;
let adjustmentId: string;
let countId: string;
const P = `ORR${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'openapi required inputs');
  api = new ApiClient(t.key);
  const res = await api.get('/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
  const list = await api.get('/locations');
  sysId = list.body.locations.find((l: { isSystem: boolean }) => l.isSystem).id;
  expect(
    (await api.post('/products', { sku: `${P}-A`, title: { value: 'A' }, price: 10, status: 'active' })).status,
  ).toBe(201);
  expect((await api.put(`/inventory/location/${sysId}/product/${P}-A`, { stock: 5 })).status).toBe(200);
  const adj = await api.post('/inventory/adjustments', {
    locationId: sysId,
    sku: `${P}-A`,
    newQuantity: 7,
    reason: 'found',
  });
  expect(adj.status).toBe(201);
  adjustmentId = adj.body.id;
  const count = await api.post('/inventory/counts', { name: 'Cycle', locationId: sysId, countType: 'cycle' });
  expect(count.status).toBe(201);
  countId = count.body.id;
});
afterAll(async () => {
  await deps.close();
});

const op = (method: string, template: string) => {
  const o = doc.paths[template]?.[method.toLowerCase()];
  if (!o) throw new Error(`${method} ${template} is not in /openapi.json`);
  return o;
};

/** A refusal of a request the document calls complete: a 400 while the document says `required: false`. */
function contradiction(declaredRequired: boolean, res: HttpResult) {
  return { declaredRequired, refusedWithout: res.status === 400, answer: res.status === 400 ? res.body : undefined };
}

test('GET /products/inventory: locationId, refused when absent, is declared required', async () => {
  const param = op('GET', '/products/inventory').parameters.find(
    (p: { name: string; in: string }) => p.in === 'query' && p.name === 'locationId',
  );
  expect(param).toBeDefined();
  const res = await api.get('/products/inventory');
  const c = contradiction(param.required, res);
  const seen = { ...c, ok: c.declaredRequired || !c.refusedWithout };
  // either the document says required, or the API accepts the request without it
  expect(seen).toEqual({ ...seen, ok: true });
});

const bodies: [string, string, () => string][] = [
  ['POST', '/inventory/adjustments/{id}/reject', () => `/inventory/adjustments/${adjustmentId}/reject`],
  ['PUT', '/inventory/counts/{id}/items', () => `/inventory/counts/${countId}/items`],
  ['POST', '/locations', () => '/locations'],
  ['POST', '/locations/{id}/zones', () => `/locations/${sysId}/zones`],
  ['POST', '/products/export', () => '/products/export'],
  ['POST', '/products/export/validate', () => '/products/export/validate'],
];

test.each(bodies)('%s %s: a body refused when absent is declared required', async (method, template, path) => {
  const rb = op(method, template).requestBody;
  expect(rb).toBeDefined();
  const res = await api.request(method, path());
  const c = contradiction(rb.required, res);
  const seen = { route: `${method} ${template}`, ...c, ok: c.declaredRequired || !c.refusedWithout };
  // either the document says required, or the API accepts the request without a body
  expect(seen).toEqual({ ...seen, ok: true });
});

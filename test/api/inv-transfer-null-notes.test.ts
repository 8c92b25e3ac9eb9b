import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';

/**
 * Guards that POST /inventory/transfers takes `notes: null` as "no notes", as adjustments and
 * counts do and as a transfer answers it. Before, the route declared notes `{type: 'string'}`
 * alone, so a client sending the optional field as null, as the API itself shows it, was refused
 * 400 bad-request "notes must be a text of at most 2,000 characters".
 */
let deps: TestDeps;
let api: ApiClient;
let main: string;
const P = `ITNN${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey();
  api = new ApiClient(t.key);
  main = systemLocationId(t.tenantId);
});
afterAll(() => deps.close());

test('a transfer created with notes: null is created without notes, as adjustments and counts are', async () => {
  const sku = `${P}-A`;
  expect((await api.post('/products', { sku, title: { value: 'A' }, price: 1 })).status).toBe(201);
  const L = (await api.post('/locations', { name: `Shop ${P}`, type: 'location' })).body.id as string;
  const adj = await api.post('/inventory/adjustments', {
    sku,
    locationId: main,
    newQuantity: 1,
    reason: 'found',
    notes: null,
  });
  expect(adj.status).toBe(201);

  const res = await api.post('/inventory/transfers', {
    originId: main,
    destinationId: L,
    productsList: [{ sku, quantity: 1 }],
    notes: null,
  });
  expect({ status: res.status, notes: res.body.notes }).toEqual({ status: 201, notes: null });
});

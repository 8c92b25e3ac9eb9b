import { ApiClient } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { Held } from '../helpers/held-tenant-db';
import { TestDeps } from '../helpers/stack';
import { systemLocationId } from '../../shared/locations/locations';
import { StockService } from '../../shared/materials/service';

/**
 * A material record's delete and unit change racing a receipt made through the API: this process
 * runs the delete or the update with one database call held, and the receipt goes through the API
 * process in between. No stock is lost, revived, or counted in two precisions.
 */
let deps: TestDeps;
let api: ApiClient;
let tenantId: string;
let A: string;
const P = `MR${Date.now().toString(36).toUpperCase()}`;
let n = 0;

beforeAll(async () => {
  deps = await TestDeps.open();
  const tenant = await deps.tenantWithKey();
  tenantId = tenant.tenantId;
  api = new ApiClient(tenant.key);
  A = systemLocationId(tenantId);
});
afterAll(() => deps.close());

const kg = { code: 'kg', name: 'Kilogram', precision: 3 };
async function material(tag: string): Promise<string> {
  const sku = `${P}-${tag}-${++n}`.toUpperCase();
  const res = await api.post('/products/materials', { sku, title: `Material ${tag}`, baseUnit: kg });
  if (res.status !== 201) throw new Error(`${res.status} ${res.text}`);
  return sku;
}
const receive = (sku: string, quantity: number) =>
  api.post(`/products/materials/${sku}/stock/${A}`, { quantity, lot: { costPerUnit: 2 } });

test('a receipt landing while its material is deleted is refused (404), and the SKU created again starts empty', async () => {
  const sku = await material('DEL');
  // the delete has retired the stock and waits just before it removes the record
  const held = new Held(deps.db, tenantId, { collection: 'materials', method: 'deleteOne', call: 1 });
  const deleting = new StockService(held, 'material').delete(sku);
  await held.reached;
  const receipt = await receive(sku, 5);
  held.release();
  await deleting;
  expectError(receipt, 404, 'not-found');
  expect((await api.get(`/products/materials/${sku}`)).status).toBe(404);
  expect((await api.post('/products/materials', { sku, title: 'again', baseUnit: kg })).status).toBe(201);
  expect((await api.get(`/products/materials/${sku}/stock`)).body.totalQuantity).toBe(0);
  // and the new record takes stock as any other
  expect((await receive(sku, 2)).status).toBe(200);
  expect((await api.get(`/products/materials/${sku}/stock`)).body.totalQuantity).toBe(2);
});

test('a precision change racing the first receipt is refused once the receipt counted first: balances stay in one precision', async () => {
  const sku = await material('PREC');
  // the update has found no stock and waits just before writing the record
  const held = new Held(deps.db, tenantId, { collection: 'materials', method: 'findOneAndUpdate', call: 1 });
  const updating = new StockService(held, 'material').update(sku, { baseUnit: { precision: 0 } }).then(
    () => null,
    (e: unknown) => e as { status: number; code: string },
  );
  await held.reached;
  expect((await receive(sku, 1)).status).toBe(200); // 1 kg at precision 3
  held.release();
  expect(await updating).toMatchObject({ status: 400, code: 'validation-error' });
  expect((await receive(sku, 1.5)).status).toBe(200);
  expect((await api.get(`/products/materials/${sku}/stock/${A}`)).body.quantity).toBe(2.5);
  expect((await api.get(`/products/materials/${sku}`)).body.baseUnit).toMatchObject({ code: 'kg', precision: 3 });
});

test('a precision change made before any stock holds for the receipts after it', async () => {
  const sku = await material('PREC0');
  expect((await api.patch(`/products/materials/${sku}`, { baseUnit: { precision: 0 } })).status).toBe(200);
  expect((await receive(sku, 1.4)).status).toBe(200); // rounds to 1 kg at precision 0
  expect((await api.get(`/products/materials/${sku}/stock/${A}`)).body.quantity).toBe(1);
  expectError(await api.patch(`/products/materials/${sku}`, { baseUnit: { precision: 3 } }), 400, 'validation-error');
});

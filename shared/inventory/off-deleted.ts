import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { Locations } from '../locations/locations';
import { decidedSkuStanding } from '../products/sku-marks';
import { Ledger } from './ledger';
import { skuNotFound } from './skus';

/**
 * Stock a write added is read against its location and its SKU after the write (a location's
 * delete marks the location, a product's delete or rename marks the SKU's claim, before either
 * looks for stock): a delete still deciding is waited for, and refused, it leaves the stock where
 * it came. Stock that arrived at a location or under a SKU that is gone (the delete looked before
 * it landed) is taken back out, keyed by the movement, so once (a retry replays the undo), and the
 * request is 404; a delete that does not decide in time is taken as gone (409).
 */
export async function keepOffDeleted(
  tenantDb: TenantDb,
  movement: { sku: string; locationId: string; delta: number; idempotencyKey: string },
  actor: string,
): Promise<void> {
  if (movement.delta <= 0) return;
  const [location, sku] = await Promise.all([
    new Locations(tenantDb).decidedStanding(movement.locationId),
    decidedSkuStanding(tenantDb, movement.sku),
  ]);
  if (location === 'ok' && sku === 'ok') return;
  const ledger = new Ledger(tenantDb);
  await ledger.apply({
    sku: movement.sku,
    locationId: movement.locationId,
    delta: -movement.delta,
    reason: 'correction',
    reference:
      location === 'ok'
        ? { type: 'sku-deleted', id: movement.sku }
        : { type: 'location-deleted', id: movement.locationId },
    actor,
    idempotencyKey: `undo:${movement.idempotencyKey}`,
  });
  // a receipt taken back is no lot, and weighs nothing in a valuation
  await ledger.markUndone(movement.idempotencyKey, `undo:${movement.idempotencyKey}`);
  if (location === 'gone')
    throw new AppError(404, 'not-found/location', `No location ${movement.locationId}`, { field: 'locationId' });
  if (sku === 'gone') throw skuNotFound(movement.sku);
  if (location === 'deleting')
    throw new AppError(409, 'conflict', `Location ${movement.locationId} is being deleted; retry`, {
      field: 'locationId',
    });
  throw new AppError(409, 'conflict', `The product holding ${movement.sku} is being deleted or renamed; retry`, {
    field: 'sku',
  });
}

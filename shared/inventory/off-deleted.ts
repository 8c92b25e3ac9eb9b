import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { Locations } from '../locations/locations';
import { Ledger } from './ledger';

/**
 * Stock a write added at a location is read against the location after the write (a delete marks
 * the location before it looks for stock): a delete still deciding is waited for, and refused,
 * it leaves the stock where it came. Stock that arrived at a location that is gone (the delete
 * looked before it landed) is taken back out, keyed by the movement, so once (a retry replays the
 * undo), and the request is 404; a delete that does not decide in time is taken as gone (409).
 */
export async function keepOffDeleted(
  tenantDb: TenantDb,
  movement: { sku: string; locationId: string; delta: number; idempotencyKey: string },
  actor: string,
): Promise<void> {
  if (movement.delta <= 0) return;
  const standing = await new Locations(tenantDb).decidedStanding(movement.locationId);
  if (standing === 'ok') return;
  const ledger = new Ledger(tenantDb);
  await ledger.apply({
    sku: movement.sku,
    locationId: movement.locationId,
    delta: -movement.delta,
    reason: 'correction',
    reference: { type: 'location-deleted', id: movement.locationId },
    actor,
    idempotencyKey: `undo:${movement.idempotencyKey}`,
  });
  // a receipt taken back is no lot, and weighs nothing in a valuation
  await ledger.markUndone(movement.idempotencyKey, `undo:${movement.idempotencyKey}`);
  if (standing === 'gone')
    throw new AppError(404, 'not-found/location', `No location ${movement.locationId}`, { field: 'locationId' });
  throw new AppError(409, 'conflict', `Location ${movement.locationId} is being deleted; retry`, {
    field: 'locationId',
  });
}

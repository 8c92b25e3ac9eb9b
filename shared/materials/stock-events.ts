import type { TenantDb } from '../db/tenant-db';
import { recordEvent } from '../webhooks/events';
import type { JournalEntry, StockAlert, StockDoc } from './collections';
import { presentAlert } from './present';
import { fromMinor } from './quantity';

/**
 * The webhook events of a material's or supply's stock. Its stock has its own path (one document
 * per SKU, stock.ts), not the product ledger, but it is stock of a SKU at a location all the same
 * (the tenant has one SKU space), so every movement is announced as stock.changed too, with
 * `kind` saying whose stock it is; and an alert opening or closing as material.alert_* or
 * supply.alert_*. They are recorded once the document holding the change is written.
 */

/** One movement as applied: the document before and after it, and `seq` (the document's movement count after it). */
export interface AppliedStep {
  before: StockDoc;
  after: StockDoc;
  movement: JournalEntry;
  seq: number;
}

/** How a movement changed each location it touched (a transfer: two), in base units. */
function deltasOf(m: JournalEntry): { locationId: string; delta: number }[] {
  if (m.voided) return [];
  if (m.type === 'transfer' && m.toLocationId)
    return [
      { locationId: m.locationId, delta: -m.quantity },
      { locationId: m.toLocationId, delta: m.quantity },
    ];
  return [{ locationId: m.locationId, delta: m.type === 'consumption' ? -m.quantity : m.quantity }];
}

/** stock.changed for each location the movement touched: the balance there after it. */
async function announceBalances(tenantDb: TenantDb, step: AppliedStep): Promise<void> {
  const { after, movement: m } = step;
  for (const { locationId, delta } of deltasOf(m)) {
    const loc = after.locations.find((l) => l.locationId === locationId);
    if (!loc) continue;
    const id = `${locationId}:${after.sku}`;
    await recordEvent(tenantDb, {
      type: 'stock.changed',
      key: `stock:${after.kind}:${m.movementId}:${locationId}`,
      id,
      sequence: step.seq,
      resource: {
        id,
        kind: after.kind,
        sku: after.sku,
        locationId,
        onHand: fromMinor(loc.quantity, after.precision),
        unit: after.unit,
        movement: {
          id: m.movementId,
          delta,
          reason: m.reason ?? m.type,
          reference: m.consumption?.reference ?? null,
        },
      },
      at: m.at,
    });
  }
}

/** The alerts a movement opened and closed (one pruned as it closed is announced from what it was). */
function alertChanges(step: AppliedStep): { alert: StockAlert; change: 'opened' | 'closed' }[] {
  const before = new Map(step.before.alerts.map((a) => [a.id, a]));
  const after = new Map(step.after.alerts.map((a) => [a.id, a]));
  const out: { alert: StockAlert; change: 'opened' | 'closed' }[] = [];
  for (const a of step.after.alerts)
    if (a.status === 'open' && !before.has(a.id)) out.push({ alert: a, change: 'opened' });
  for (const a of before.values()) {
    if (a.status !== 'open') continue;
    const now = after.get(a.id);
    if (now?.status === 'closed') out.push({ alert: now, change: 'closed' });
    else if (!now) out.push({ alert: { ...a, status: 'closed', closedAt: step.movement.at }, change: 'closed' });
  }
  return out;
}

async function announceAlerts(tenantDb: TenantDb, step: AppliedStep): Promise<void> {
  for (const { alert, change } of alertChanges(step)) await announceAlert(tenantDb, alert, change, step.movement.at);
}

async function announceAlert(
  tenantDb: TenantDb,
  alert: StockAlert,
  change: 'opened' | 'closed',
  fallbackAt: Date,
): Promise<void> {
  await recordEvent(tenantDb, {
    type: `${alert.kind}.alert_${change}`,
    key: `alert:${alert.id}:${change}`,
    id: alert.id,
    // an alert opens once and closes once
    sequence: change === 'opened' ? 1 : 2,
    resource: presentAlert(alert),
    at: change === 'opened' ? alert.openedAt : (alert.closedAt ?? fallbackAt),
  });
}

/** The open alerts of a record being deleted close with it (its stock document keeps none). */
export async function announceAlertsRetired(tenantDb: TenantDb, retired: StockDoc, at: Date): Promise<void> {
  for (const a of retired.alerts.filter((x) => x.status === 'open'))
    await announceAlert(tenantDb, { ...a, status: 'closed', closedAt: at }, 'closed', at);
}

/** Announces what the applied movements of one write did, in the order they were applied. */
export async function announceStockSteps(tenantDb: TenantDb, steps: AppliedStep[]): Promise<void> {
  for (const step of steps) {
    await announceBalances(tenantDb, step);
    await announceAlerts(tenantDb, step);
  }
}

/**
 * A movement answered as a replay (applied by an earlier attempt, maybe one that stopped before it
 * announced it): its balances and the alert it opened are announced again, from the document as
 * it is now, under the same keys: recorded before, they are the same events; if not, they are
 * now. (An alert it closed is not named after it and cannot be told from the document.)
 */
export async function announceReplay(tenantDb: TenantDb, doc: StockDoc, movement: JournalEntry): Promise<void> {
  await announceBalances(tenantDb, { before: doc, after: doc, movement, seq: doc.seq ?? 1 });
  const opened = doc.alerts.filter((a) => a.id.startsWith(`alr_${movement.movementId.replace(/^mmv_/, '')}_`));
  for (const alert of opened)
    await announceAlert(
      tenantDb,
      { ...alert, status: 'open', closedAt: null, availableAtClose: null },
      'opened',
      alert.openedAt,
    );
}

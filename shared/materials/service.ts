import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { slicePage } from '../paging';
import {
  KIND_LABEL,
  materialStock,
  type JournalEntry,
  type StockAlert,
  type StockDoc,
  type StockKind,
} from './collections';
import { Locations } from '../locations/locations';
import { pageOf, presentAlert, presentLocation, presentMovement, presentRecord, presentTotal } from './present';
import { isMaterial, type ListQuery, type StockRecord } from './records';
import { StockStore, type Actor, type ReceiptRequest, type TransferRequest } from './stock';

/** The record of one location's stock; 404 when the SKU has none there. */
function presentAt(doc: StockDoc | null, record: StockRecord, locationId: string) {
  const loc = doc?.locations.find((l) => l.locationId === locationId);
  if (!doc || !loc)
    throw new AppError(404, 'not-found', `No stock record of ${record.sku} at location ${locationId}`, {
      field: 'locationId',
    });
  return presentLocation(doc, loc, record);
}

/** The use cases of the materials and supplies routes, answered as the REST surface shows them. */
export class StockService {
  private readonly store: StockStore;

  constructor(
    private readonly tenantDb: TenantDb,
    private readonly kind: StockKind,
  ) {
    this.store = new StockStore(tenantDb, kind);
  }

  private get records() {
    return this.store.records;
  }

  async list(q: ListQuery) {
    const { docs, total } = await this.records.list(q);
    const stocks =
      this.kind === 'material' && docs.length
        ? await this.tenantDb
            .collection(materialStock)
            // the locations' lots price the current cost (costNow), as the single read does
            .find({ _id: { $in: docs.map((d) => d._id) } }, { projection: { journal: 0, alerts: 0 } })
            .toArray()
        : [];
    const byId = new Map(stocks.map((s) => [s._id, s as StockDoc]));
    return pageOf(
      docs.map((d) => presentRecord(d, byId.get(d._id) ?? null)),
      total,
      q,
    );
  }

  async get(sku: string) {
    const record = await this.records.get(sku);
    return presentRecord(record, isMaterial(record) ? await this.store.stockOf(record.sku) : null);
  }

  async create(body: Record<string, unknown>, run?: string) {
    return presentRecord(await this.records.create(body, run), null);
  }

  async update(sku: string, body: Record<string, unknown>) {
    const updated = await this.records.update(sku, body, (s, unit, precision) =>
      this.store.claimUnits(s, unit, precision),
    );
    if (body.costingMethod !== undefined || body.initialCost !== undefined) await this.store.recost(updated.sku);
    return this.get(updated.sku);
  }

  async delete(sku: string) {
    const record = await this.records.get(sku);
    await this.records.delete(record.sku, (s, createdAt) => this.store.retire(s, createdAt));
    return { success: true, message: `${KIND_LABEL[this.kind]} ${record.sku} deleted` };
  }

  /**
   * Stock that arrived at a location a delete removed before this write was seen (the delete
   * looked for stock there before it landed) is taken back out, newest lots first (the ones it
   * brought), under ids derived from the movement, so once (a retry replays it), and the request
   * is 404. A delete still deciding is waited for (it decides in milliseconds): refused, it leaves
   * the stock where it came; one that does not decide is taken as gone (409, retry).
   */
  private async keepOffDeleted(movement: JournalEntry, locationId: string, actor: string): Promise<void> {
    const standing = await new Locations(this.tenantDb).decidedStanding(locationId);
    if (standing === 'ok') return;
    await this.store.consume(movement.sku, {
      actor,
      movementId: `${movement.movementId}-undo`,
      returnId: `${movement.movementId}-undo-return`,
      consumption: {
        id: `location-deleted:${movement.movementId}`,
        reference: { type: 'location-deleted', id: locationId },
      },
      locationId,
      minor: movement.quantityMinor,
      method: 'lifo',
    });
    if (standing === 'gone') throw new AppError(404, 'not-found', `No location ${locationId}`, { field: 'locationId' });
    throw new AppError(409, 'conflict', `Location ${locationId} is being deleted; retry`, { field: 'locationId' });
  }

  async total(sku: string) {
    const record = await this.records.get(sku);
    return presentTotal(await this.store.stockOf(record.sku), record);
  }

  async atLocation(sku: string, locationId: string) {
    const record = await this.records.get(sku);
    return presentAt(await this.store.stockOf(record.sku), record, locationId);
  }

  /**
   * The stock record where the receipt went, and the receipt itself: a retry under its
   * Idempotency-Key names the first receipt (`replayed: true`, what it received, where), the
   * record being the stock as it stands, since other movements may have come since.
   */
  async receive(sku: string, req: ReceiptRequest) {
    const { doc, record, movement, replayed } = await this.store.receive(sku, req);
    await this.keepOffDeleted(movement, movement.locationId, req.actor);
    // a replay answers where the first request received (its key may come back with another location)
    return {
      ...presentAt(doc, record, movement.locationId),
      movementId: movement.movementId,
      received: { quantity: movement.quantity, unit: movement.unit },
      replayed,
    };
  }

  async transfer(req: TransferRequest) {
    const { movement, replayed } = await this.store.transfer(req);
    await this.keepOffDeleted(movement, movement.toLocationId!, req.actor);
    return {
      success: true,
      message: `Moved ${movement.quantity} ${movement.unit} of ${movement.sku} from ${movement.locationId} to ${movement.toLocationId}`,
      movementId: movement.movementId,
      replayed,
      [this.kind === 'material' ? 'materialSku' : 'supplySku']: movement.sku,
      fromLocationId: movement.locationId,
      toLocationId: movement.toLocationId,
      quantity: movement.quantity,
      unit: movement.unit,
      ...(this.kind === 'material' ? { lots: movement.lots } : {}),
    };
  }

  async movements(sku: string, q: { page: number; limit: number }) {
    const { docs, total } = await this.store.movements(sku, q);
    return pageOf(docs.map(presentMovement), total, q);
  }

  /** Alerts of every material (or supply), newest first: open ones, and the latest closed ones of each location. */
  async alerts(q: { page: number; limit: number; status: 'open' | 'closed' | 'all'; locationId?: string }) {
    const all: StockAlert[] = (await this.store.withAlerts()).flatMap((d) => d.alerts);
    const picked = all
      .filter((a) => (q.status === 'all' || a.status === q.status) && (!q.locationId || a.locationId === q.locationId))
      .sort((a, b) => b.openedAt.getTime() - a.openedAt.getTime() || a.id.localeCompare(b.id));
    return pageOf(slicePage(picked, { page: q.page + 1, limit: q.limit }).map(presentAlert), picked.length, q);
  }
}

export type { Actor };

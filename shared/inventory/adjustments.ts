import { createHash } from 'node:crypto';
import { defineCollection } from '../db/collection';
import { isDuplicateKeyError } from '../db/duplicate-key';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { reused } from '../idempotency/keys';
import { newId } from '../ids';
import { pageWindow, type PageRequest } from '../paging';
import { Locations } from '../locations/locations';
import { assertManualEdit } from './handlers';
import { knownSku } from './skus';
import { keepOffDeleted } from './off-deleted';
import { Ledger } from './ledger';
import { lotCosts, recordLotCost } from './lots';
import { recordAround, recordEvent, type EventData } from '../webhooks/events';

/**
 * Manual stock adjustments: a request to set one SKU's balance at one location to a new quantity,
 * for a reason. Created pending; approving applies it through the ledger (a set to newQuantity,
 * exactly once under the key `adj:<id>`); rejecting closes it and moves nothing.
 *
 *   pending → approved (stock set) | rejected (nothing moves); anything else is 409
 *   `conflict/adjustment-<current status>`.
 *
 * The state change is one guarded update (`{_id, status: 'pending'}`), so of concurrent approves
 * exactly one wins; the ledger key makes the stock change exactly-once even if the winner is
 * retried. The winner holds a short lease while it applies: an approval whose request died before
 * the ledger answered (`applied: false`, lease over) is finished by the next approve.
 */
export const ADJUSTMENT_REASONS = [
  'count_correction',
  'damage',
  'theft',
  'expired',
  'found',
  'return',
  'supplier_error',
  'restock',
  'shrinkage',
  'sample',
  'other',
] as const;
export type AdjustmentReason = (typeof ADJUSTMENT_REASONS)[number];
export type AdjustmentStatus = 'pending' | 'approved' | 'rejected';
export const ADJUSTMENT_STATUSES: AdjustmentStatus[] = ['pending', 'approved', 'rejected'];

/** Largest quantity accepted in a stock field. */
export const MAX_QUANTITY = 1_000_000_000;
const APPLY_LEASE_MS = 30_000;

export interface AdjustmentDoc {
  _id: string; // adj_…
  tenantId: string;
  locationId: string;
  sku: string;
  /** The balance when the adjustment was created (for a count: when the SKU was counted). */
  currentQuantity: number;
  newQuantity: number;
  difference: number;
  reason: AdjustmentReason;
  notes: string | null;
  /** What made it: a count (its corrections), or null for a manual adjustment. */
  reference: { type: 'count'; id: string } | null;
  /** The ledger's idempotency key of its movement: `adj:<id>`, or `cnt:<countId>:<sku>` for a count's. */
  ledgerKey: string;
  status: AdjustmentStatus;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
  approvedBy: string | null;
  approvedAt: Date | null;
  rejectedBy: string | null;
  rejectedAt: Date | null;
  rejectionReason: string | null;
  /** True once the ledger applied it (approved only). */
  applied: boolean;
  /** While an approval applies it: others leave it alone until then. */
  applyingUntil: Date | null;
  /** The movement the approval made (null when the balance already was newQuantity), its delta and the balance after. */
  movementId: string | null;
  appliedDelta: number | null;
  quantityAfter: number | null;
  /** A count's: when its SKU was counted (the correction is measured from then). */
  countedAt?: Date;
  /** A count's correction left undone: the key of a later correction of the same balance. */
  supersededBy?: string | null;
}

export const adjustments = defineCollection<AdjustmentDoc>({
  name: 'inventory_adjustments',
  scope: 'tenant',
  indexes: [
    { key: { tenantId: 1, createdAt: -1 } },
    { key: { tenantId: 1, status: 1, createdAt: -1 } },
    { key: { tenantId: 1, sku: 1, createdAt: -1 } },
  ],
});

/** A refusal of a request the schema let through (a rule between fields, a state of the data). */
export function badRequest(code: string, message: string, field?: string): AppError {
  return new AppError(400, code, message, field ? { field } : {});
}

/** An id derived from a name (a retried create, a count's correction): the same name, the same id. */
export function derivedId(prefix: string, name: string): string {
  const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  const digest = createHash('sha256').update(name).digest();
  let out = '';
  for (let i = 0; i < 26; i++) out += CROCKFORD[digest[i] % 32];
  return `${prefix}_${out}`;
}

// ---------------------------------------------------------------------------------------------

/** A create request as the API's schema lets it through (createAdjustmentBody in input-schemas.ts). */
export interface CreateAdjustmentInput {
  locationId: string;
  sku: string;
  newQuantity: number;
  reason: AdjustmentReason;
  notes?: string | null;
}

export function adjustmentNotFound(id: string): AppError {
  return new AppError(404, 'not-found', `No adjustment ${id}`);
}

export function adjustmentConflict(id: string, status: AdjustmentStatus): AppError {
  return new AppError(
    409,
    `conflict/adjustment-${status}`,
    `Adjustment ${id} is ${status}; only a pending adjustment can be approved or rejected`,
    { details: { status } },
  );
}

export function presentAdjustment(a: AdjustmentDoc) {
  return {
    id: a._id,
    locationId: a.locationId,
    sku: a.sku,
    currentQuantity: a.currentQuantity,
    newQuantity: a.newQuantity,
    difference: a.difference,
    reason: a.reason,
    notes: a.notes,
    reference: a.reference,
    status: a.status,
    createdBy: a.createdBy,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
    approvedBy: a.approvedBy,
    approvedAt: a.approvedAt,
    rejectedBy: a.rejectedBy,
    rejectedAt: a.rejectedAt,
    rejectionReason: a.rejectionReason,
    applied: a.applied,
    movementId: a.movementId,
    appliedDelta: a.appliedDelta,
    quantityAfter: a.quantityAfter,
    supersededBy: a.supersededBy ?? null,
  };
}

/**
 * An adjustment's webhook event: the adjustment as GET /inventory/adjustments/{id} presents it;
 * sequence 1 while pending, 2 once decided (approved or rejected: it is never changed again).
 */
export function adjustmentEvent(a: AdjustmentDoc): EventData {
  return { id: a._id, sequence: a.status === 'pending' ? 1 : 2, resource: presentAdjustment(a) };
}

export interface AdjustmentQuery extends PageRequest {
  status?: AdjustmentStatus;
  sku?: string;
  locationId?: string;
}

/** Whether a stored adjustment is the one this request asks for (what the body names, as stored). */
function sameAdjustment(doc: AdjustmentDoc, input: CreateAdjustmentInput & { notes: string | null }): boolean {
  return (
    doc.locationId === input.locationId &&
    doc.sku === input.sku &&
    doc.newQuantity === input.newQuantity &&
    doc.reason === input.reason &&
    doc.notes === input.notes
  );
}

/** Adjustments of one tenant, acting as `actor` (the key id). */
export class Adjustments {
  constructor(
    private readonly tenantDb: TenantDb,
    private readonly actor: string,
  ) {}

  private get col() {
    return this.tenantDb.collection(adjustments);
  }

  /**
   * Creates a pending adjustment after checking the SKU (404 not-found), the location
   * (404 not-found/location) and that no integration manages them (403). With an idempotency
   * key, a repeated create answers the adjustment the first one made.
   */
  async create(request: CreateAdjustmentInput, idempotencyKey?: string): Promise<AdjustmentDoc> {
    const input = { ...request, locationId: request.locationId.trim(), notes: request.notes?.trim() || null };
    const sku = await knownSku(this.tenantDb, input.sku);
    await new Locations(this.tenantDb).require(input.locationId);
    await assertManualEdit(this.tenantDb, sku, input.locationId);
    const _id = idempotencyKey
      ? derivedId('adj', `${this.tenantDb.tenantId}:adjustment:${idempotencyKey}`)
      : newId('adj');
    if (idempotencyKey) {
      const first = await this.col.findOne({ _id });
      // a retry is the same request: the key with another adjustment would silently answer the first
      if (first && !sameAdjustment(first, { ...input, sku })) throw reused();
      if (first) return first;
    }
    const currentQuantity = await new Ledger(this.tenantDb).onHand(sku, input.locationId);
    const now = new Date();
    const doc: Omit<AdjustmentDoc, 'tenantId'> = {
      _id,
      locationId: input.locationId,
      sku,
      currentQuantity,
      newQuantity: input.newQuantity,
      difference: input.newQuantity - currentQuantity,
      reason: input.reason,
      notes: input.notes,
      reference: null,
      ledgerKey: `adj:${_id}`,
      status: 'pending',
      createdBy: this.actor,
      createdAt: now,
      updatedAt: now,
      approvedBy: null,
      approvedAt: null,
      rejectedBy: null,
      rejectedAt: null,
      rejectionReason: null,
      applied: false,
      applyingUntil: null,
      movementId: null,
      appliedDelta: null,
      quantityAfter: null,
    };
    try {
      return await recordAround(
        this.tenantDb,
        { type: 'adjustment.created', key: `adjustment:${_id}:created`, kind: 'adjustment', id: _id },
        async () => {
          await this.col.insertOne(doc);
          return { ...doc, tenantId: this.tenantDb.tenantId } as AdjustmentDoc;
        },
        adjustmentEvent,
      );
    } catch (err) {
      // a concurrent create with the same key (its insert, or its event's) came first: answer its adjustment
      if (!idempotencyKey || !isDuplicateKeyError(err)) throw err;
      const first = await this.col.findOne({ _id });
      if (first && !sameAdjustment(first, { ...input, sku })) throw reused();
      if (first) return first;
      throw err;
    }
  }

  async get(id: string): Promise<AdjustmentDoc> {
    const doc = await this.col.findOne({ _id: id });
    if (!doc) throw adjustmentNotFound(id);
    return doc;
  }

  async list(q: AdjustmentQuery): Promise<{ adjustments: AdjustmentDoc[]; totalCount: number }> {
    const filter = {
      ...(q.status ? { status: q.status } : {}),
      ...(q.sku?.trim() ? { sku: q.sku.trim().toUpperCase() } : {}),
      ...(q.locationId?.trim() ? { locationId: q.locationId.trim() } : {}),
    };
    const [docs, totalCount] = await Promise.all([
      this.col.find(filter, { sort: { createdAt: -1, _id: -1 }, ...pageWindow(q) }).toArray(),
      this.col.countDocuments(filter),
    ]);
    return { adjustments: docs as AdjustmentDoc[], totalCount };
  }

  /** pending → approved, then the ledger sets the balance to newQuantity exactly once. */
  async approve(id: string): Promise<AdjustmentDoc> {
    const doc = await this.get(id);
    if (doc.status === 'approved' && !doc.applied) {
      const resumed = await this.resume(doc);
      if (resumed) return resumed;
    }
    if (doc.status !== 'pending') throw adjustmentConflict(id, doc.status);
    await new Locations(this.tenantDb).require(doc.locationId);
    await assertManualEdit(this.tenantDb, doc.sku, doc.locationId);
    const now = new Date();
    const claimed = await this.col.findOneAndUpdate(
      { _id: id, status: 'pending' },
      {
        $set: {
          status: 'approved',
          approvedBy: this.actor,
          approvedAt: now,
          updatedAt: now,
          applied: false,
          applyingUntil: new Date(now.getTime() + APPLY_LEASE_MS),
        },
      },
      { returnDocument: 'after' },
    );
    if (!claimed) throw adjustmentConflict(id, (await this.col.findOne({ _id: id }))?.status ?? 'approved');
    try {
      return await this.apply(claimed);
    } catch (err) {
      // refused by the ledger (a 4xx): nothing moved, so the adjustment goes back to pending
      if (err instanceof AppError && err.status < 500) {
        await this.col.findOneAndUpdate(
          { _id: id, status: 'approved', applied: false },
          {
            $set: { status: 'pending', approvedBy: null, approvedAt: null, applyingUntil: null, updatedAt: new Date() },
          },
        );
        await this.tenantDb.collection(lotCosts).deleteById(`${this.tenantDb.tenantId}:${claimed.ledgerKey}`); // the cost noted for a receipt that did not happen
      }
      throw err;
    }
  }

  /** An approval whose applier stopped (lease over) is taken over and finished; null if another applier is still at it. */
  private async resume(doc: AdjustmentDoc): Promise<AdjustmentDoc | null> {
    const now = new Date();
    if (doc.applyingUntil && doc.applyingUntil > now) return null;
    const taken = await this.col.findOneAndUpdate(
      { _id: doc._id, status: 'approved', applied: false, applyingUntil: doc.applyingUntil },
      { $set: { applyingUntil: new Date(now.getTime() + APPLY_LEASE_MS), updatedAt: now } },
      { returnDocument: 'after' },
    );
    return taken ? this.apply(taken) : null;
  }

  /**
   * Applies an approved adjustment through the ledger (idempotent: its key is fixed) and marks it
   * applied. adjustment.approved is recorded before the mark, with the adjustment as the mark
   * leaves it: an approval stopped in between is finished by the next approve (resume), which
   * records the same event again, so an applied adjustment is always announced.
   */
  async apply(doc: AdjustmentDoc): Promise<AdjustmentDoc> {
    await recordLotCost(this.tenantDb, doc.ledgerKey, doc.sku);
    const movement = {
      sku: doc.sku,
      locationId: doc.locationId,
      reason: doc.reason,
      reference: doc.reference ?? { type: 'adjustment', id: doc._id },
      actor: doc.approvedBy ?? this.actor,
      idempotencyKey: doc.ledgerKey,
    };
    // a manual adjustment sets what it names; a count's correction moves the balance by what the
    // count found missing or extra, so what was sold or received since the count stays counted
    const ledger = new Ledger(this.tenantDb);
    // (unless the balance was corrected after the SKU was counted: that correction saw the shelf later)
    const {
      movement: made,
      onHand,
      supersededBy,
    } = doc.reference?.type === 'count'
      ? await ledger.shift({ ...movement, by: doc.difference, observedAt: doc.countedAt })
      : await ledger.set({ ...movement, target: doc.newQuantity });
    // stock added at a location deleted meanwhile is taken back, and the approval refused
    if (made) await keepOffDeleted(this.tenantDb, made, movement.actor);
    const set = {
      applied: true,
      applyingUntil: null,
      movementId: made?.idempotencyKey ?? null,
      appliedDelta: made?.delta ?? 0,
      quantityAfter: onHand,
      ...(supersededBy ? { supersededBy } : {}),
      updatedAt: new Date(),
    };
    const applied = { ...doc, ...set };
    await recordEvent(this.tenantDb, {
      type: 'adjustment.approved',
      key: `adjustment:${doc._id}:approved`,
      ...adjustmentEvent(applied),
    });
    await this.col.updateById(doc._id, { $set: set });
    return applied;
  }

  async reject(id: string, rawReason: string): Promise<AdjustmentDoc> {
    const reason = rawReason.trim();
    const doc = await this.get(id);
    if (doc.status !== 'pending') throw adjustmentConflict(id, doc.status);
    const now = new Date();
    const refused = async () => adjustmentConflict(id, (await this.col.findOne({ _id: id }))?.status ?? 'approved');
    try {
      return await recordAround(
        this.tenantDb,
        // a rejection is the adjustment's second state: the relay announces it only once it is there
        { type: 'adjustment.rejected', key: `adjustment:${id}:rejected`, kind: 'adjustment', id, sequence: 2 },
        async () => {
          const rejected = await this.col.findOneAndUpdate(
            { _id: id, status: 'pending' },
            {
              $set: {
                status: 'rejected',
                rejectedBy: this.actor,
                rejectedAt: now,
                rejectionReason: reason,
                updatedAt: now,
              },
            },
            { returnDocument: 'after' },
          );
          if (!rejected) throw await refused();
          return rejected;
        },
        adjustmentEvent,
      );
    } catch (err) {
      // a concurrent rejection is recording this very event: it is decided
      if (isDuplicateKeyError(err)) throw await refused();
      throw err;
    }
  }

  /**
   * The approved correction a count makes for one SKU: recorded under an id derived from the count
   * and the SKU, then applied with the ledger key `cnt:<countId>:<sku>`. Run again (a retried or
   * concurrent completion), it finds the same adjustment and the ledger applies it once.
   */
  async correctFromCount(
    count: { _id: string; locationId: string },
    item: { sku: string; expectedQuantity: number; countedQuantity: number; countedAt: Date },
  ): Promise<AdjustmentDoc> {
    const _id = derivedId('adj', `${this.tenantDb.tenantId}:count:${count._id}:${item.sku}`);
    const now = new Date();
    const doc: Omit<AdjustmentDoc, 'tenantId'> = {
      _id,
      locationId: count.locationId,
      sku: item.sku,
      currentQuantity: item.expectedQuantity,
      newQuantity: item.countedQuantity,
      difference: item.countedQuantity - item.expectedQuantity,
      reason: 'count_correction',
      notes: `Count ${count._id}`,
      reference: { type: 'count', id: count._id },
      ledgerKey: `cnt:${count._id}:${item.sku}`,
      status: 'approved',
      createdBy: this.actor,
      createdAt: now,
      updatedAt: now,
      approvedBy: this.actor,
      approvedAt: now,
      rejectedBy: null,
      rejectedAt: null,
      rejectionReason: null,
      applied: false,
      applyingUntil: null,
      movementId: null,
      appliedDelta: null,
      quantityAfter: null,
      countedAt: item.countedAt,
    };
    let current = { ...doc, tenantId: this.tenantDb.tenantId } as AdjustmentDoc;
    try {
      await this.col.insertOne(doc);
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      const found = await this.col.findOne({ _id });
      if (!found) throw err;
      current = found;
    }
    return current.applied ? current : this.apply(current);
  }
}

import { createHash } from 'node:crypto';
import { isDuplicateKeyError } from '../db/duplicate-key';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import type { StockKind } from '../materials/collections';
import { RecordNotFound } from '../materials/records';
import { StockStore, type Applied, type Seed } from '../materials/stock';
import {
  TAKEN,
  materialConsumptions,
  type ConsumedSku,
  type ConsumptionDoc,
  type ConsumptionPlan,
  type ConsumptionStatus,
  type PlannedLine,
  type Shortfall,
} from './collections';

/** A consumption refused for want of stock; `shortfalls` names every material short. */
export class ConsumptionRefused extends Error {
  constructor(readonly shortfalls: Shortfall[]) {
    super(`Not enough stock: ${shortfalls.map((s) => s.materialSku).join(', ')}`);
  }
}

export interface RunResult {
  doc: ConsumptionDoc;
  /** True when the consumption had been applied by an earlier (or a concurrent) request. */
  replayed: boolean;
}

/** One movement per SKU: the plan's lines of a SKU summed. */
function perSku(plan: ConsumptionPlan): { sku: string; kind: StockKind; minor: number }[] {
  const bySku = new Map<string, { sku: string; kind: StockKind; minor: number }>();
  for (const l of plan.lines) {
    const at = bySku.get(l.sku);
    if (at) at.minor += l.minor;
    else bySku.set(l.sku, { sku: l.sku, kind: l.kind, minor: l.minor });
  }
  return [...bySku.values()];
}

export function movementIdOf(consumptionId: string, attempt: number, sku: string, what: 'take' | 'return'): string {
  const hash = createHash('sha256').update(`consumption\n${consumptionId}\n${attempt}\n${sku}\n${what}`).digest('hex');
  return `mmv_${hash.slice(0, 26)}`;
}

function shortfallOf(err: unknown, line: { sku: string }): Shortfall | null {
  if (!(err instanceof AppError) || err.code !== 'insufficient-stock') return null;
  const d = err.extra.details as { required: number; available: number; unit: string };
  return { materialSku: line.sku, required: d.required, available: d.available, unit: d.unit, error: err.message };
}

/**
 * Consumptions of materials and supplies that span several stock documents, all or nothing and
 * exactly once, without transactions: a consumption document records the plan, each SKU's stock
 * is taken by a movement whose id derives from the consumption (a retry replays it), and one
 * guarded update decides applied or failing. A failed consumption puts back what it took; a
 * movement it did not take yet is voided, so a process that wakes up late cannot take it after
 * the decision. Any number of processes may drive one consumption at once and they end the same;
 * one killed half-way is finished by the next request with the same id.
 */
export class ConsumptionEngine {
  constructor(
    private readonly tenantDb: TenantDb,
    private readonly actor: string,
  ) {}

  private get col() {
    return this.tenantDb.collection(materialConsumptions);
  }

  private store(kind: StockKind): StockStore {
    return new StockStore(this.tenantDb, kind);
  }

  private id(consumptionId: string): string {
    return `${this.tenantDb.tenantId}:${consumptionId}`;
  }

  async find(consumptionId: string): Promise<ConsumptionDoc | null> {
    return this.col.findOne({ _id: this.id(consumptionId) });
  }

  /**
   * Applies `plan` once for `consumptionId`; answers the applied consumption (replayed when an
   * earlier request applied it) or throws ConsumptionRefused after putting back what it took.
   * A consumption that failed before is tried again as a new attempt.
   */
  async run(
    consumptionId: string,
    reference: ConsumptionDoc['reference'],
    plan: ConsumptionPlan,
    meta: Record<string, unknown> = {},
    /** What the plan read, by SKU: its movements start from them. */
    seeds?: Map<string, Seed>,
    /** The consumption as the caller knows it (null: believed absent, so inserted at once); read otherwise. */
    read?: ConsumptionDoc | null,
  ): Promise<RunResult> {
    for (let round = 0; round < 20; round++) {
      const existing = round === 0 && read !== undefined ? read : await this.find(consumptionId);
      if (!existing) {
        const now = new Date();
        const doc: ConsumptionDoc = {
          _id: this.id(consumptionId),
          tenantId: this.tenantDb.tenantId,
          consumptionId,
          reference,
          status: 'pending',
          attempt: 1,
          plan,
          consumed: null,
          shortfalls: null,
          meta,
          actor: this.actor,
          createdAt: now,
          updatedAt: now,
        };
        try {
          const { tenantId: _t, ...rest } = doc;
          await this.col.insertOne(rest);
          return await this.drive(doc, false, seeds);
        } catch (err) {
          if (isDuplicateKeyError(err)) continue; // a concurrent request recorded it first: follow it
          throw err;
        }
      }
      if (TAKEN.has(existing.status)) return { doc: existing, replayed: true };
      if (existing.status === 'pending') return this.drive(existing, true, seeds);
      if (existing.status === 'failing') await this.putBack(existing, 'failed');
      // failed: everything put back; this request is a new attempt with its own movements
      const retried = await this.col.findOneAndUpdate(
        { _id: existing._id, status: 'failed', attempt: existing.attempt },
        {
          $set: {
            status: 'pending',
            attempt: existing.attempt + 1,
            plan,
            consumed: null,
            shortfalls: null,
            meta,
            actor: this.actor,
            updatedAt: new Date(),
          },
        },
        { returnDocument: 'after' },
      );
      if (retried) return this.drive(retried, false, seeds);
    }
    throw new AppError(409, 'conflict', `Consumption ${consumptionId} keeps changing; retry`);
  }

  /** Takes every SKU's stock, then decides. */
  private async drive(doc: ConsumptionDoc, joined: boolean, seeds?: Map<string, Seed>): Promise<RunResult> {
    const lines = perSku(doc.plan);
    const consumption = { id: doc.consumptionId, reference: doc.reference };
    const outcomes = await Promise.allSettled(
      lines.map((l) =>
        this.store(l.kind).consume(l.sku, {
          actor: this.actor,
          reason: doc.reference ? `${doc.reference.type} ${doc.reference.id}` : undefined,
          movementId: movementIdOf(doc.consumptionId, doc.attempt, l.sku, 'take'),
          returnId: movementIdOf(doc.consumptionId, doc.attempt, l.sku, 'return'),
          consumption,
          locationId: doc.plan.locationId,
          minor: l.minor,
          method: doc.plan.method,
          // not joined: this request recorded the attempt after its plan read the seeds
          seed: seeds?.has(l.sku) ? { ...seeds.get(l.sku)!, newIds: !joined } : undefined,
        }),
      ),
    );
    const failed = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [{ line: lines[i], error: o.reason }] : []));
    if (!failed.length) {
      const consumed = outcomes.map((o, i) => consumedOf(lines[i], (o as PromiseFulfilledResult<Applied>).value));
      const decided = await this.decide(doc, 'applied', { consumed });
      // `replayed` tells whether this request found the attempt recorded by another, whichever
      // of the attempt's drivers decides it: of concurrent identical requests, the one that
      // recorded it answers false
      if (decided) return { doc: decided, replayed: joined };
      const now = await this.find(doc.consumptionId);
      if (now?.status === 'applied' && now.attempt === doc.attempt) return { doc: now, replayed: joined };
      // decided failing by another driver of this attempt: what this one took goes back too
      if (now && now.attempt === doc.attempt && now.status !== 'pending') {
        if (now.status === 'failing') await this.putBack(now, 'failed');
        throw new ConsumptionRefused(now.shortfalls ?? []);
      }
      throw new AppError(409, 'conflict', `Consumption ${doc.consumptionId} changed while it was applied; retry`);
    }
    const shortfalls = failed.flatMap((f) => shortfallOf(f.error, f.line) ?? []);
    const other = failed.find((f) => !shortfallOf(f.error, f.line));
    const decided = await this.decide(doc, 'failing', { shortfalls });
    const now = decided ? null : await this.find(doc.consumptionId);
    if (now?.status === 'applied' && now.attempt === doc.attempt) return { doc: now, replayed: joined };
    await this.putBack({ ...doc, status: 'failing' }, 'failed');
    if (other) throw other.error;
    throw new ConsumptionRefused(shortfalls);
  }

  /** The guarded decision from pending; null when this attempt is no longer pending. */
  private async decide(
    doc: ConsumptionDoc,
    status: 'applied' | 'failing',
    fields: Partial<ConsumptionDoc>,
  ): Promise<ConsumptionDoc | null> {
    return this.col.findOneAndUpdate(
      { _id: doc._id, status: 'pending', attempt: doc.attempt },
      { $set: { ...fields, status, updatedAt: new Date() } },
      { returnDocument: 'after' },
    );
  }

  /**
   * Puts back (or voids) every movement of the attempt, then marks the consumption `to`. A SKU
   * whose record was deleted since (its stock had to be 0, so nothing of it is held anywhere) has
   * nothing to go back into: it is skipped, and named in `notReturned`, rather than keeping the
   * rest (an order's cancel) from ever finishing.
   */
  private async putBack(doc: ConsumptionDoc, to: 'failed' | 'returned'): Promise<void> {
    const consumption = { id: doc.consumptionId, reference: doc.reference };
    const gone = await Promise.all(
      perSku(doc.plan).map((l) =>
        this.store(l.kind)
          .giveBack(l.sku, {
            actor: this.actor,
            reason: doc.reference ? `${doc.reference.type} ${doc.reference.id}` : undefined,
            consumedId: movementIdOf(doc.consumptionId, doc.attempt, l.sku, 'take'),
            returnId: movementIdOf(doc.consumptionId, doc.attempt, l.sku, 'return'),
            consumption,
          })
          .then(
            () => [],
            (err: unknown) => {
              if (err instanceof RecordNotFound) return [l.sku];
              throw err;
            },
          ),
      ),
    );
    const notReturned = gone.flat();
    const from: ConsumptionStatus = to === 'failed' ? 'failing' : 'returning';
    await this.col.updateOne(
      { _id: doc._id, status: from, attempt: doc.attempt },
      { $set: { status: to, updatedAt: new Date(), ...(notReturned.length ? { notReturned } : {}) } },
    );
  }

  /**
   * Finishes a consumption its driver left half-way (a process killed while driving it): a pending
   * one is driven on to its decision, a failing or returning one finishes putting back.
   */
  async finish(doc: ConsumptionDoc): Promise<ConsumptionStatus> {
    if (doc.status === 'pending') {
      try {
        await this.drive(doc, true);
      } catch (err) {
        if (!(err instanceof ConsumptionRefused) && !(err instanceof AppError)) throw err;
      }
    } else if (doc.status === 'failing') await this.putBack(doc, 'failed');
    else if (doc.status === 'returning') await this.putBack(doc, 'returned');
    return (await this.find(doc.consumptionId))?.status ?? doc.status;
  }

  /**
   * Gives back everything an applied consumption took (an order cancelled), once; answers the
   * consumption as it ends (returned), or null when there is none. A consumption that never
   * applied (failed, or still pending) is made to fail, which puts back what it took.
   */
  async giveBack(consumptionId: string): Promise<ConsumptionDoc | null> {
    for (let round = 0; round < 20; round++) {
      const doc = await this.find(consumptionId);
      if (!doc) return null;
      if (doc.status === 'returned' || doc.status === 'failed') return doc;
      if (doc.status === 'returning') {
        await this.putBack(doc, 'returned');
        return this.find(consumptionId);
      }
      if (doc.status === 'failing') {
        await this.putBack(doc, 'failed');
        return this.find(consumptionId);
      }
      const next: ConsumptionStatus = doc.status === 'applied' ? 'returning' : 'failing';
      const moved = await this.col.findOneAndUpdate(
        { _id: doc._id, status: doc.status, attempt: doc.attempt },
        { $set: { status: next, updatedAt: new Date() } },
        { returnDocument: 'after' },
      );
      if (moved) {
        await this.putBack(moved, next === 'returning' ? 'returned' : 'failed');
        return this.find(consumptionId);
      }
    }
    throw new AppError(409, 'conflict', `Consumption ${consumptionId} keeps changing; retry`);
  }
}

function consumedOf(line: { sku: string; kind: StockKind }, applied: Applied): ConsumedSku {
  const m = applied.movement;
  return {
    sku: line.sku,
    kind: line.kind,
    movementId: m.movementId,
    quantity: m.quantity,
    unit: m.unit,
    lots: m.lots,
    cost: m.cost ?? null,
  };
}

export type { PlannedLine };

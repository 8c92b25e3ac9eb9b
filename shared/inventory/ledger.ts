import { duplicateKeyIndexes, isDuplicateKeyError } from '../db/duplicate-key';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { newId } from '../ids';
import { reused } from '../idempotency/keys';
import { inBatch, type Outcome } from '../db/group-commit';
import { recordEvent } from '../webhooks/events';
import { levelId, stockLevels, stockMovements, type StockLevel, type StockMovement } from './collections';

/**
 * How many movement ids a balance remembers at least; trimmed 50 at a time, so the trim costs a
 * read and a write per 50 movements. Only ids of movements marked applied leave (see trim).
 */
const RECENT = 50;
const TRIM = 50;
/**
 * How a balance's `recent` names a movement: its key after a `~` (the tenant is the balance's).
 * The hot balance's update rewrites the whole list each time, and the tenant prefix doubled it.
 * Balances written before hold whole movement ids, which are read as such (they start `ten_`).
 */
function recentEntry(key: string): string {
  return `~${key}`;
}

/**
 * A refusal of the movement of `key`, kept among a balance's recent ones: once it is there no
 * attempt of the key can apply it, so the attempt that refused and any other of the same key
 * (a zombie activity and its retry) answer alike, whatever stock arrives in between.
 */
function refusalEntry(key: string): string {
  return `!${key}`;
}

/** Balances (database and id) this process is trimming now. */
const trimming = new Set<string>();

export interface MovementInput {
  sku: string;
  locationId: string;
  delta: number;
  reason: string;
  reference?: { type: string; id: string } | null;
  actor: string;
  /** The same key always means the same movement: applying it again answers the first result. */
  idempotencyKey?: string;
  /** A sale of a product that sells when out of stock: the balance may go below zero. */
  allowNegative?: boolean;
}

export function insufficientStock(sku: string, locationId: string, onHand: number, wanted: number): AppError {
  return new AppError(
    409,
    'conflict/insufficient-stock',
    `Not enough stock of ${sku} at ${locationId}: ${onHand} on hand, ${wanted} needed`,
    {
      details: { sku, locationId, onHand, wanted },
    },
  );
}

export function negativeStock(field = 'stock'): AppError {
  return new AppError(400, 'bad-request/invalid-stock', 'Stock cannot be negative', { field });
}

/**
 * The stock ledger of one tenant. Every change of a balance is a movement: recorded first
 * (pending), then applied by one atomic update guarded so that the balance cannot go below zero
 * and the movement cannot be applied twice, then marked applied with the balance it left.
 * A retry at any point (a killed worker, a client retry with the same key) ends the same way.
 */
export class Ledger {
  constructor(private readonly tenantDb: TenantDb) {}

  private get levels() {
    return this.tenantDb.collection(stockLevels);
  }
  private get movements() {
    return this.tenantDb.collection(stockMovements);
  }

  async level(sku: string, locationId: string): Promise<StockLevel | null> {
    return this.levels.findOne({ _id: levelId(this.tenantDb.tenantId, locationId, sku) });
  }

  async onHand(sku: string, locationId: string): Promise<number> {
    return (await this.level(sku, locationId))?.onHand ?? 0;
  }

  /** Applies one movement exactly once; 409 conflict/insufficient-stock when it would take the balance below zero. */
  async apply(input: MovementInput): Promise<StockMovement> {
    const result = await this.tryApply(input);
    if (result === 'stale') throw new Error('unreachable: no expected balance given');
    return result;
  }

  /**
   * Sets a balance to `target` (a manual edit): the movement is the difference from the balance
   * read, applied only if the balance is still that value; otherwise read again.
   */
  set(
    input: Omit<MovementInput, 'delta'> & { target: number },
  ): Promise<{ movement: StockMovement | null; onHand: number; supersededBy?: string }> {
    if (!Number.isFinite(input.target) || input.target < 0) throw negativeStock();
    // a set that confirms the balance is recorded too (a movement of 0): its key is bound to it,
    // and a count that saw the shelf before it yields to it
    return this.settle(input, () => input.target, undefined, true, input.target);
  }

  /**
   * Moves a balance by `by`, but never from zero or above to below zero (a count's correction:
   * what was counted less what was expected then, so the movements made since the count stay
   * counted). A balance already below zero (a product sold short since) moves by `by` as it is:
   * lifting it to zero would add stock nobody counted. Applied only on the balance it was
   * computed from, like `set`.
   */
  shift(
    input: Omit<MovementInput, 'delta'> & { by: number; observedAt?: Date },
  ): Promise<{ movement: StockMovement | null; onHand: number; supersededBy?: string }> {
    if (!Number.isFinite(input.by))
      throw new AppError(400, 'bad-request/invalid-stock', 'A stock change must be a number', { field: 'stock' });
    const { observedAt } = input;
    const superseded =
      observedAt && (() => this.observedSince(input.sku, input.locationId, observedAt, input.idempotencyKey));
    return this.settle(
      input,
      (current) => (current < 0 ? current + input.by : Math.max(0, current + input.by)),
      superseded,
    );
  }

  /**
   * The key of a correction (a set or a shift: a movement planned on the balance it read) of this
   * balance recorded after `since`, other than `ownKey`'s. Such a correction already brought the
   * balance in line with what was on the shelf: a count taken before it must not correct again.
   */
  async observedSince(sku: string, locationId: string, since: Date, ownKey?: string): Promise<string | null> {
    const found = await this.movements.findOne(
      {
        sku,
        locationId,
        createdAt: { $gt: since },
        expect: { $exists: true },
        status: { $ne: 'rejected' },
        ...(ownKey ? { idempotencyKey: { $ne: ownKey } } : {}),
      },
      { projection: { idempotencyKey: 1 } },
    );
    return found?.idempotencyKey ?? null;
  }

  /**
   * A movement to `targetOf(the balance)`, on that balance only: read again while it changes under
   * it. `superseded`, asked before each try, names a correction that makes this one moot: then
   * nothing moves. Asked again after a lost race, so of two racing corrections the second sees the
   * first (its movement is recorded before the balance it changes).
   */
  private async settle(
    input: Omit<MovementInput, 'delta'>,
    targetOf: (current: number) => number,
    superseded?: () => Promise<string | null>,
    recordNoop = false,
    /** A set's target: its key names a movement to it, and to no other (see tryApply). */
    fixedTarget?: number,
  ): Promise<{ movement: StockMovement | null; onHand: number; supersededBy?: string }> {
    const key = input.idempotencyKey;
    if (key) {
      const done = await this.movements.findOne({ _id: this.movementId(key) });
      if (done?.expect !== undefined && fixedTarget !== undefined && done.expect + done.delta !== fixedTarget)
        throw reused(); // another set's key (see tryApply)
      // applied long ago (its balance after it not kept): the balance now
      if (done?.status === 'applied')
        return { movement: done, onHand: done.balanceAfter ?? (await this.onHand(input.sku, input.locationId)) };
    }
    for (let attempt = 0; attempt < 50; attempt++) {
      const current = await this.onHand(input.sku, input.locationId);
      const by = superseded && (await superseded());
      if (by) return { movement: null, onHand: current, supersededBy: by };
      const target = targetOf(current);
      if (current === target && !recordNoop) return { movement: null, onHand: current };
      const result = await this.tryApply({ ...input, delta: target - current }, current, fixedTarget);
      if (result !== 'stale') return { movement: result, onHand: result.balanceAfter ?? target };
    }
    throw new AppError(409, 'conflict', `The stock of ${input.sku} at ${input.locationId} keeps changing; retry`);
  }

  /** Marks the movement under `key` as taken back by the movement under `by` (it is then no receipt). */
  async markUndone(key: string, by: string): Promise<void> {
    await this.movements.updateOne({ _id: this.movementId(key) }, { $set: { undoneBy: by } });
  }

  /** The movement recorded under an idempotency key, if any. */
  async movement(key: string): Promise<StockMovement | null> {
    return this.movements.findOne({ _id: this.movementId(key) });
  }

  private movementId(key: string): string {
    return `${this.tenantDb.tenantId}:${key}`;
  }

  private async tryApply(
    input: MovementInput,
    expect?: number,
    fixedTarget?: number,
  ): Promise<StockMovement | 'stale'> {
    if (!Number.isFinite(input.delta))
      throw new AppError(400, 'bad-request/invalid-stock', 'A stock change must be a number', { field: 'stock' });
    const key = input.idempotencyKey ?? newId('mov');
    const _id = this.movementId(key);
    // a fresh key cannot have a movement yet: one read saved on every keyless movement
    const existing = input.idempotencyKey ? await this.movements.findOne({ _id }) : null;
    // a set's movement names its target: another target under the key is another request (two
    // sent at once, both past the caller's check), which must not replan the first one's movement
    if (existing?.expect !== undefined && fixedTarget !== undefined && existing.expect + existing.delta !== fixedTarget)
      throw reused();
    if (existing?.status === 'applied') return existing;
    if (existing?.status === 'rejected') throw insufficientStock(existing.sku, existing.locationId, 0, -existing.delta);
    if (existing && expect !== undefined && (existing.expect !== expect || existing.delta !== input.delta))
      return this.replan(existing, input.delta, expect);
    const movement: Omit<StockMovement, 'tenantId'> = existing ?? {
      _id,
      idempotencyKey: key,
      sku: input.sku,
      locationId: input.locationId,
      delta: input.delta,
      reason: input.reason,
      reference: input.reference ?? null,
      actor: input.actor,
      status: 'pending',
      balanceAfter: null,
      createdAt: new Date(),
      ...(expect !== undefined ? { expect } : {}),
    };
    // a concurrent retry recorded it: the same movement, but a set may have planned it on
    // another balance, so a set reads it again
    if (!existing && (await this.record(movement)) === 'duplicate' && expect !== undefined) return 'stale';
    const delta = movement.delta;
    const lid = levelId(this.tenantDb.tenantId, movement.locationId, movement.sku);
    const guard =
      movement.expect !== undefined
        ? { onHand: movement.expect }
        : delta < 0 && !input.allowNegative
          ? { onHand: { $gte: -delta } }
          : {};
    // a balance that does not exist yet is created by a movement that adds stock (or sets it from
    // zero), or by a sale allowed to go below zero
    const upsert = (delta > 0 || input.allowNegative === true) && (expect === undefined || expect === 0);
    let after: StockLevel | null = null;
    if (delta === 0) {
      // a set that confirms the balance: recorded, nothing to write to the balance, which must
      // still be what the set was planned on
      const level = await this.level(movement.sku, movement.locationId);
      if (movement.expect !== undefined && (level?.onHand ?? 0) !== movement.expect) {
        if (!input.idempotencyKey) await this.movements.deleteOne({ _id, status: 'pending' });
        return 'stale';
      }
      await this.markApplied(_id, level?.onHand ?? 0);
      return {
        ...movement,
        status: 'applied',
        balanceAfter: level?.onHand ?? 0,
        tenantId: this.tenantDb.tenantId,
      } as StockMovement;
    }
    try {
      after = await this.levels.findOneAndUpdate(
        { _id: lid, recent: { $nin: this.namesOf(movement.idempotencyKey) }, ...guard },
        {
          $inc: { onHand: delta, seq: 1 },
          $push: { recent: recentEntry(movement.idempotencyKey) },
          $set: { updatedAt: new Date(), sku: movement.sku, locationId: movement.locationId },
        },
        { upsert, returnDocument: 'after' },
      );
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err; // the balance exists and did not match: decided below
    }
    if (!after) {
      const level = await this.level(movement.sku, movement.locationId);
      if (level && this.holds(level, movement.idempotencyKey)) {
        after = level; // applied by an earlier attempt that stopped before marking it
      } else if (expect !== undefined) {
        // not applied: the caller reads the balance again and plans the movement on it (replan); a
        // movement of a fresh id nobody else knows is dropped instead
        if (!input.idempotencyKey) await this.movements.deleteOne({ _id, status: 'pending' });
        return 'stale';
      } else {
        const applied = level && (await this.refuse(lid, movement.idempotencyKey));
        if (applied)
          after = applied; // an attempt of the same key applied it first
        else {
          await this.movements.updateOne({ _id, status: 'pending' }, { $set: { status: 'rejected' } });
          throw insufficientStock(movement.sku, movement.locationId, level?.onHand ?? 0, -delta);
        }
      }
    }
    // announced before it is marked applied: a retry of a step stopped in between announces it again, as the same event
    await announceStockChange(this.tenantDb, movement, after);
    await this.markApplied(_id, after.onHand);
    if (after.recent.length >= RECENT + TRIM) await this.trim(lid, after.recent.slice(0, TRIM));
    return {
      ...movement,
      status: 'applied',
      balanceAfter: after.onHand,
      tenantId: this.tenantDb.tenantId,
    } as StockMovement;
  }

  /**
   * Records a movement pending. The movements a tenant's requests record at once go in one
   * insert (group-commit.ts): FerretDB spends about 1 ms on an insert command whatever it holds,
   * and a tenth of that per document in a batch. 'duplicate': an attempt of the same key was first.
   */
  private record(movement: Omit<StockMovement, 'tenantId'>): Promise<'recorded' | 'duplicate'> {
    const lane = `ledger-record:${this.tenantDb.databaseName}:${this.tenantDb.tenantId}`;
    return inBatch(lane, movement, async (batch): Promise<Outcome<'recorded' | 'duplicate'>[]> => {
      try {
        await this.movements.insertMany(batch, { ordered: false });
        return batch.map(() => ({ ok: true, value: 'recorded' }));
      } catch (err) {
        const duplicates = duplicateKeyIndexes(err);
        if (!duplicates) return batch.map(() => ({ ok: false, error: err }));
        return batch.map((_, i) => ({ ok: true, value: duplicates.includes(i) ? 'duplicate' : 'recorded' }));
      }
    });
  }

  /** Marks a movement applied with the balance it left; the marks made at once go in one write, as record's inserts. */
  private markApplied(_id: string, balanceAfter: number): Promise<void> {
    const lane = `ledger-mark:${this.tenantDb.databaseName}:${this.tenantDb.tenantId}`;
    return inBatch(lane, { _id, balanceAfter }, async (batch): Promise<Outcome<void>[]> => {
      await this.movements.bulkWrite(
        batch.map((m) => ({
          updateOne: { filter: { _id: m._id }, update: { $set: { status: 'applied', balanceAfter: m.balanceAfter } } },
        })),
        { ordered: false },
      );
      return batch.map(() => ({ ok: true, value: undefined }));
    });
  }

  /**
   * A set's pending movement planned on a balance that has changed since (its process died before
   * applying it, or lost the race): if the balance took it after all (its id is there), it is
   * applied; otherwise it takes the new plan, unless another attempt decided or planned it first.
   * Either way the caller reads again ('stale'), and never applies an old delta to a new balance.
   */
  private async replan(existing: StockMovement, delta: number, expect: number): Promise<StockMovement | 'stale'> {
    const level = await this.level(existing.sku, existing.locationId);
    if (level && this.holds(level, existing.idempotencyKey)) {
      await this.movements.updateOne(
        { _id: existing._id, status: 'pending' },
        { $set: { status: 'applied' } }, // its balance after it is not known any more
      );
      return 'stale';
    }
    await this.movements.updateOne(
      {
        _id: existing._id,
        status: 'pending',
        delta: existing.delta,
        expect: existing.expect === undefined ? { $exists: false } : existing.expect,
      } as never,
      { $set: { delta, expect } },
    );
    return 'stale';
  }

  /**
   * Drops the oldest ids from a balance's recent ones, but only those of movements marked applied.
   * An id is what tells a retry that its movement changed the balance already: a movement still
   * pending there was applied by a process that died before marking it, and its retry may come
   * after any number of later movements (a hot SKU takes hundreds while a worker restarts). Such a
   * movement is marked applied here (its balance after it is not known any more) and its id
   * leaves at a later trim, so that a retry reading it pending just before is still caught.
   */
  private async trim(lid: string, oldest: string[]): Promise<void> {
    // one trim of a balance at a time in this process: movements applied meanwhile see the same
    // long list, and their trims would only repeat it
    const key = `${this.tenantDb.databaseName}:${lid}`;
    if (trimming.has(key)) return;
    trimming.add(key);
    try {
      await this.trimOldest(lid, oldest);
    } finally {
      trimming.delete(key);
    }
  }

  private async trimOldest(lid: string, oldest: string[]): Promise<void> {
    // `~key` applied, `!key` refused (its movement is rejected, so it leaves as any done one), or a whole id
    const idOf = (entry: string) => (/^[~!]/.test(entry) ? this.movementId(entry.slice(1)) : entry);
    const docs = await this.movements.findByIds(oldest.map(idOf));
    const pending = docs.filter((m) => m.status === 'pending').map((m) => m._id);
    const done = oldest.filter((entry) => !pending.includes(idOf(entry)));
    for (const id of pending) {
      await this.movements.updateOne({ _id: id, status: 'pending' }, { $set: { status: 'applied' } });
    }
    if (done.length) await this.levels.updateByTenantKey(lid, { $pullAll: { recent: done } } as never);
  }

  /**
   * Decides on the balance that the movement of `key` is refused (refusalEntry), unless an attempt
   * of the same key applied it first: then the balance it left. (No balance: nothing can take it.)
   */
  private async refuse(lid: string, key: string): Promise<StockLevel | null> {
    const refusal = refusalEntry(key);
    const res = await this.levels.updateOne({ _id: lid, recent: { $nin: this.namesOf(key) } }, {
      $push: { recent: refusal },
    } as never);
    if (res.matchedCount) return null;
    // not noted: the key was applied meanwhile (the balance answers), or refused already
    const level = await this.levels.findOne({ _id: lid });
    return level && this.holds(level, key) ? level : null;
  }

  /** Every way a balance's recent ones name the movement of `key`: applied (either form) or refused. */
  private namesOf(key: string): string[] {
    return [recentEntry(key), this.movementId(key), refusalEntry(key)];
  }

  /** Whether a balance took the movement of `key` (named either way: see recentEntry). */
  private holds(level: StockLevel, key: string): boolean {
    return level.recent.includes(recentEntry(key)) || level.recent.includes(this.movementId(key));
  }

  /** Every balance of a SKU, by location. */
  async balancesOf(sku: string): Promise<StockLevel[]> {
    return this.levels.find({ sku }, { projection: { recent: 0 } }).toArray() as Promise<StockLevel[]>;
  }
}

/**
 * The stock.changed event of an applied movement: the balance it left (`seq` counts the movements
 * a balance has taken, so it rises with each) and the movement. Keyed by the movement, so a retry
 * records nothing new. A balance recovered from an earlier attempt (`after` read later) announces
 * its state then, with its sequence then: still in order.
 */
export function announceStockChange(
  tenantDb: TenantDb,
  movement: Pick<StockMovement, '_id' | 'idempotencyKey' | 'sku' | 'locationId' | 'delta' | 'reason' | 'reference'>,
  after: Pick<StockLevel, 'onHand' | 'seq'>,
): Promise<string | null> {
  const id = `${movement.locationId}:${movement.sku}`;
  return recordEvent(tenantDb, {
    type: 'stock.changed',
    key: `stock:${movement._id}`,
    id,
    sequence: after.seq ?? 1,
    resource: {
      id,
      kind: 'product',
      sku: movement.sku,
      locationId: movement.locationId,
      onHand: after.onHand,
      movement: {
        id: movement.idempotencyKey,
        delta: movement.delta,
        reason: movement.reason,
        reference: movement.reference,
      },
    },
  });
}

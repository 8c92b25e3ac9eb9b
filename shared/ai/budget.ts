import { defineCollection } from '../db/collection';
import { isDuplicateKeyError } from '../db/duplicate-key';
import type { TenantDb } from '../db/tenant-db';
import { addDays, localDate, nextLocalMidnight } from './days';

/** A reservation not yet settled: the tokens it holds and when it was made (for releaseStale). */
export interface OpenReservation {
  tokens: number;
  at: Date;
}

/**
 * One tenant's AI token use on one local day. `committed` (used + reserved) is kept as a field of
 * its own because a guard must compare one field: `committed ≤ limit - tokens` is the whole check
 * that lets a reservation through, so concurrent workers cannot overspend the day together.
 */
export interface AiTokenDay {
  _id: string; // `<tenantId>:<YYYY-MM-DD>`
  tenantId: string;
  date: string; // YYYY-MM-DD in the tenant's time zone
  used: number;
  reserved: number;
  committed: number;
  requestCount: number;
  /** Reservations not yet settled or released, by reservation id. */
  open: Record<string, OpenReservation>;
}

export const aiTokenDays = defineCollection<AiTokenDay>({
  name: 'ai_token_days',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, date: -1 } }],
});

export interface BudgetStatus {
  dailyLimit: number;
  used: number;
  reserved: number;
  remaining: number;
  /** The next local midnight, as an ISO instant in UTC. */
  resetsAt: string;
}

export interface BudgetUsage {
  history: { date: string; tokensUsed: number; requestCount: number }[];
}

/**
 * A tenant's daily token budget for AI calls, in the tenant's time zone. A call reserves the most
 * it may cost before it is made, and settles the actual use after; a reservation is an entry of
 * the day's `open` map, added and removed by single guarded updates, so every operation is
 * idempotent and a crash between two of them leaves only an open entry (releaseStale frees it).
 *
 * A reservation lives in the document of the day it was made, and settle/release look for it in
 * today's and yesterday's documents, so a call that spans midnight is charged to the day that
 * let it through.
 */
export class TokenBudget {
  private readonly dailyLimit: number;
  private readonly timeZone: string;
  private readonly now: () => Date;

  constructor(
    private readonly tenantDb: TenantDb,
    opts: { dailyLimit: number; timeZone: string; now?: () => Date },
  ) {
    if (!Number.isInteger(opts.dailyLimit) || opts.dailyLimit < 0)
      throw new Error(`dailyLimit must be a non-negative integer, got ${opts.dailyLimit}`);
    localDate(new Date(), opts.timeZone); // an unknown zone fails here, not at the first call
    this.dailyLimit = opts.dailyLimit;
    this.timeZone = opts.timeZone;
    this.now = opts.now ?? (() => new Date());
  }

  private get days() {
    return this.tenantDb.collection(aiTokenDays);
  }

  private dayId(date: string): string {
    return `${this.tenantDb.tenantId}:${date}`;
  }

  /**
   * Reserves `tokens` for one call; false when the day's budget cannot hold them. A reservation id
   * already open answers true without reserving again (a retried activity). Ids are used as field
   * names, so they may not contain dots or start with `$`.
   */
  async reserve(reservationId: string, tokens: number): Promise<boolean> {
    assertReservationId(reservationId);
    if (!Number.isInteger(tokens) || tokens <= 0) throw new Error(`tokens must be a positive integer, got ${tokens}`);
    const at = this.now();
    const date = localDate(at, this.timeZone);
    const _id = this.dayId(date);
    const field = `open.${reservationId}`;
    // the guarded update decides; when it matched nothing, the day's document says why: our
    // reservation already open, or no room. When it shows room, the document was made (by a
    // concurrent first reservation of the day) or freed room after the update looked: try again.
    for (let attempt = 0; attempt < 5; attempt++) {
      if (tokens <= this.dailyLimit) {
        const res = await this.days.updateOne(
          { _id, [field]: { $exists: false }, committed: { $lte: this.dailyLimit - tokens } },
          { $inc: { reserved: tokens, committed: tokens }, $set: { [field]: { tokens, at } } },
        );
        if (res.matchedCount === 1) return true;
      }
      const day = await this.days.findOne({ _id });
      if (day) {
        if (day.open[reservationId] !== undefined) return true;
        if (tokens > this.dailyLimit || day.committed > this.dailyLimit - tokens) return false;
        continue;
      }
      if (tokens > this.dailyLimit) return false;
      try {
        await this.days.insertOne({
          _id,
          date,
          used: 0,
          reserved: tokens,
          committed: tokens,
          requestCount: 0,
          open: { [reservationId]: { tokens, at } },
        });
        return true;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err; // a concurrent first reservation made the document
      }
    }
    throw new Error(`AI token reservation ${reservationId} kept racing other reservations; retry`);
  }

  /**
   * Replaces a reservation by the tokens the call actually used (which may be more than reserved)
   * and counts the request. A reservation not open (settled, released, never made) is left alone.
   */
  async settle(reservationId: string, actualTokens: number): Promise<void> {
    assertReservationId(reservationId);
    if (!Number.isFinite(actualTokens) || actualTokens < 0)
      throw new Error(`actualTokens must be a non-negative number, got ${actualTokens}`);
    const used = Math.ceil(actualTokens);
    await this.close(reservationId, (tokens) => ({
      reserved: -tokens,
      used,
      committed: used - tokens,
      requestCount: 1,
    }));
  }

  /** Drops a reservation without use (the call was never made or failed before the model). */
  async release(reservationId: string): Promise<void> {
    assertReservationId(reservationId);
    await this.close(reservationId, (tokens) => ({ reserved: -tokens, committed: -tokens }));
  }

  /**
   * Releases reservations made more than `olderThanMs` ago and still open: a worker killed between
   * reserve and settle. Today's and yesterday's documents only: an older day no longer limits
   * anything. Answers how many were released.
   */
  async releaseStale(olderThanMs: number): Promise<number> {
    const now = this.now();
    const cutoff = now.getTime() - olderThanMs;
    const today = localDate(now, this.timeZone);
    let released = 0;
    for (const date of [today, addDays(today, -1)]) {
      const day = await this.days.findOne({ _id: this.dayId(date) });
      for (const [id, entry] of Object.entries(day?.open ?? {})) {
        if (new Date(entry.at).getTime() > cutoff) continue;
        if (await this.closeIn(date, id, entry.tokens, { reserved: -entry.tokens, committed: -entry.tokens }))
          released++;
      }
    }
    return released;
  }

  async status(): Promise<BudgetStatus> {
    const now = this.now();
    const day = await this.days.findOne({ _id: this.dayId(localDate(now, this.timeZone)) });
    const used = day?.used ?? 0;
    const reserved = day?.reserved ?? 0;
    return {
      dailyLimit: this.dailyLimit,
      used,
      reserved,
      remaining: Math.max(0, this.dailyLimit - used - reserved),
      resetsAt: nextLocalMidnight(now, this.timeZone).toISOString(),
    };
  }

  /** The last `days` local days (today included) that have a record, newest first. */
  async usage(days: number): Promise<BudgetUsage> {
    const today = localDate(this.now(), this.timeZone);
    const from = addDays(today, -(Math.max(1, Math.floor(days)) - 1));
    const docs = await this.days
      .find({ date: { $gte: from, $lte: today } }, { sort: { date: -1 }, projection: { open: 0 } })
      .toArray();
    return { history: docs.map((d) => ({ date: d.date, tokensUsed: d.used, requestCount: d.requestCount })) };
  }

  /** Closes an open reservation, wherever it is (today's or yesterday's document), with the given increments. */
  private async close(reservationId: string, inc: (tokens: number) => Record<string, number>): Promise<void> {
    const today = localDate(this.now(), this.timeZone);
    for (const date of [today, addDays(today, -1)]) {
      const day = await this.days.findOne({ _id: this.dayId(date) });
      const entry = day?.open[reservationId];
      if (entry) {
        await this.closeIn(date, reservationId, entry.tokens, inc(entry.tokens));
        return;
      }
    }
  }

  /**
   * The one write that closes a reservation: guarded by the entry still holding the tokens read,
   * so a second settle, a release racing a settle, or two releaseStale runs change the counters once.
   */
  private async closeIn(date: string, id: string, tokens: number, inc: Record<string, number>): Promise<boolean> {
    const res = await this.days.updateOne(
      { _id: this.dayId(date), [`open.${id}.tokens`]: tokens },
      { $inc: inc, $unset: { [`open.${id}`]: '' } },
    );
    return res.matchedCount === 1;
  }
}

function assertReservationId(id: string): void {
  // the id is a field name of `open`: a dot would nest it, a leading $ is an operator
  if (typeof id !== 'string' || !id || id.length > 200 || id.includes('.') || id.startsWith('$') || id.includes('\0'))
    throw new Error(`Invalid AI token reservation id ${JSON.stringify(id)}: no dots, no leading $, 1-200 characters`);
}

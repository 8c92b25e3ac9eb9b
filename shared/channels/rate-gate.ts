import { setTimeout as sleep } from 'node:timers/promises';
import { defineCollection } from '../db/collection';
import { isDuplicateKeyError } from '../db/duplicate-key';
import type { TenantDb } from '../db/tenant-db';

/** The next free call slot of a channel, shared by every process that calls it. */
export interface ChannelCallSlot {
  _id: string;
  tenantId: string;
  /** Epoch ms at which the next call may leave. */
  nextAt: number;
}

export const channelCallSlots = defineCollection<ChannelCallSlot>({
  name: 'channel_call_slots',
  scope: 'tenant',
  indexes: [],
});

/** Per process, the claims waiting for one slot document: one compare-and-set at a time each. */
const CLAIMS = new Map<string, Promise<unknown>>();

/**
 * Spaces the calls made to one channel at its rate limit across processes: the API's category
 * suggestions and a worker's publication sends take their slots from one document, each claim a
 * compare-and-set of its `nextAt`. Without a limit every call goes at once, and nothing is written.
 */
export class SharedRateGate {
  private readonly id: string;

  constructor(
    private readonly tenantDb: TenantDb,
    channelId: string,
    private readonly perSecond: number | undefined,
  ) {
    this.id = `${tenantDb.tenantId}:${channelId}`;
  }

  async slot(signal?: AbortSignal): Promise<void> {
    if (!this.perSecond) return;
    const previous = CLAIMS.get(this.id) ?? Promise.resolve();
    const claim = previous.then(
      () => this.claim(),
      () => this.claim(),
    );
    CLAIMS.set(this.id, claim);
    let at: number;
    try {
      at = await claim;
    } finally {
      if (CLAIMS.get(this.id) === claim) CLAIMS.delete(this.id);
    }
    const wait = at - Date.now();
    if (wait > 0) await sleep(wait, undefined, signal ? { signal } : undefined);
  }

  /** Takes the next free slot: answers when it is. */
  private async claim(): Promise<number> {
    const col = this.tenantDb.collection(channelCallSlots);
    const spacing = 1000 / this.perSecond!;
    for (;;) {
      const doc = await col.findOne({ _id: this.id });
      const at = Math.max(doc?.nextAt ?? 0, Date.now());
      if (doc) {
        const won = await col.updateOne({ _id: this.id, nextAt: doc.nextAt }, { $set: { nextAt: at + spacing } });
        if (won.matchedCount === 1) return at;
      } else {
        try {
          await col.insertOne({ _id: this.id, nextAt: at + spacing });
          return at;
        } catch (err) {
          if (!isDuplicateKeyError(err)) throw err; // another process took the first slot: read again
        }
      }
    }
  }
}

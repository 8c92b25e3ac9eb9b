import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Spaces the calls made to one channel at its rate limit (`rateLimitPerSecond`): each call takes
 * the next free slot and waits for it. A gate without a limit lets every call through at once.
 */
export class RateGate {
  private nextSlot: number;

  /** `startDelayed`: the first call waits one interval too (someone else may have called just before). */
  constructor(
    private readonly perSecond: number | undefined,
    startDelayed = false,
  ) {
    this.nextSlot = Date.now() + (startDelayed ? this.spacingMs : 0);
  }

  private get spacingMs(): number {
    return this.perSecond ? 1000 / this.perSecond : 0;
  }

  async slot(signal?: AbortSignal): Promise<void> {
    if (!this.perSecond) return;
    const wait = this.nextSlot - Date.now();
    this.nextSlot = Math.max(this.nextSlot, Date.now()) + this.spacingMs;
    if (wait > 0) await sleep(wait, undefined, signal ? { signal } : undefined);
  }
}

const GATES = new Map<string, RateGate>();
const MAX_GATES = 10_000;

/** The process's gate for a channel at a rate (a changed rate gets a gate of its own). */
export function channelGate(channelId: string, perSecond: number | undefined): RateGate {
  const key = `${channelId}:${perSecond ?? 0}`;
  let gate = GATES.get(key);
  if (!gate) {
    if (GATES.size >= MAX_GATES) GATES.delete(GATES.keys().next().value!); // the oldest: a channel long unused
    GATES.set(key, (gate = new RateGate(perSecond)));
  }
  return gate;
}

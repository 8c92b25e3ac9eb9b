/**
 * When a failed delivery is tried again: after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h
 * and 20 h (about three days in all, after the first attempt), each delay moved by up to ±20 %
 * so that many deliveries failing together do not come back together. Pure: the workflow uses it
 * (its Math.random is deterministic there).
 */
export const RETRY_DELAYS_MS = [5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 504e5, 72e6, 72e6] as const;

/** Attempts in one round: the first and one per retry delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** An endpoint whose attempts have all failed for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 3600e3;

/** A Retry-After longer than this is not waited for whole: the schedule's next delay applies then. */
export const MAX_RETRY_AFTER_MS = 24 * 3600e3;

/** The delay before attempt number `failed + 1`, or null when the round has no attempts left. */
export function retryDelay(failed: number, scale: number, random: () => number, retryAfterMs?: number): number | null {
  if (failed >= MAX_ATTEMPTS) return null;
  const base = RETRY_DELAYS_MS[failed - 1] * scale;
  const jittered = base * (0.8 + 0.4 * random());
  if (retryAfterMs !== undefined && retryAfterMs <= MAX_RETRY_AFTER_MS) return Math.max(retryAfterMs, 0);
  return Math.round(jittered);
}

/** A Retry-After header (seconds or an HTTP date) in ms from `now`, or undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

import { setTimeout as sleep } from 'node:timers/promises';

/** How long a version-guarded write keeps trying while other writes of the record land first. */
export const GUARDED_WRITE_MS = 10_000;

/**
 * Runs a version-guarded write (read, decide, write if the version is unchanged) until it lands,
 * waiting a little more between tries, with jitter: concurrent writers of one record each land in
 * turn instead of some giving up after a fixed number of tries (a client following the spec's
 * retry rules would not send a refused change again). `attempt` answers undefined when another
 * write got in first; only after `forMs` of that is the write refused, by `giveUp`.
 */
export async function untilWritten<T>(
  attempt: () => Promise<T | undefined>,
  giveUp: () => Error,
  forMs = GUARDED_WRITE_MS,
): Promise<T> {
  const until = Date.now() + forMs;
  for (let tries = 0; ; tries++) {
    const done = await attempt();
    if (done !== undefined) return done;
    if (Date.now() >= until) throw giveUp();
    await sleep(Math.random() * Math.min(200, 5 * 2 ** tries));
  }
}

import { hostname } from 'node:os';
import type { Db } from 'mongodb';
import type { PingResult } from '../../shared/system/messages';

/**
 * The diagnostic activity: proves a worker process with a database connection ran it. `holdMs`
 * keeps it busy for a while, so a test can stop a worker in the middle of it.
 */
export function ping(db: Db) {
  return async (message: string, holdMs = 0): Promise<PingResult> => {
    await db.command({ ping: 1 });
    if (holdMs > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(holdMs, 30_000)));
    return { echo: message, pid: process.pid, host: hostname() };
  };
}

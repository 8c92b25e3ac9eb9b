import { hostname } from 'node:os';
import type { Db } from 'mongodb';

/** The diagnostic activity: proves a worker process with a database connection ran it. */
export function ping(db: Db) {
  return async (message: string): Promise<{ echo: string; pid: number; host: string }> => {
    await db.command({ ping: 1 });
    return { echo: message, pid: process.pid, host: hostname() };
  };
}

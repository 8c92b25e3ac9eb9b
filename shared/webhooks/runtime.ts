import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';

/**
 * What fanning an event out needs beyond the database: the Temporal client that starts endpoint
 * workflows and the task queue they run on. Each process (API, worker) installs it once at start.
 * It is process-wide rather than passed in because every write path of every domain records
 * events: threading a client through each service constructor would change them all for one side
 * effect. Without it (a script, a test of a service alone) events wait in the outbox for the relay.
 */
export interface WebhookRuntime {
  temporal: Client;
  taskQueue: string;
  retryScale: number;
  log?: Logger;
}

let installed: WebhookRuntime | null = null;

export function installWebhookRuntime(runtime: WebhookRuntime): void {
  installed = runtime;
}

export function webhookRuntime(): WebhookRuntime | null {
  return installed;
}

import { defineQuery, defineSignal } from '@temporalio/workflow';
import { defineWorkflow } from '../temporal/define-workflow';

/** A delivery waiting in an endpoint's workflow. `round` rises with each resend/recover of it. */
export interface QueuedDelivery {
  deliveryId: string;
  round: number;
  /** Failed attempts so far in this round. */
  attempt: number;
  /** Epoch ms when the next attempt is due. */
  dueAt: number;
  /** Due now: just arrived, or its timer fired. */
  ready: boolean;
}

export interface EndpointDeliveryInput {
  tenantId: string;
  endpointId: string;
  /** Multiplies every retry delay (config webhooks.retryScale); carried across continue-as-new. */
  retryScale: number;
  /** How long it waits idle before it ends (10 minutes; the workflow tests use less). */
  idleMs?: number;
  /** Deliveries carried over by continue-as-new. */
  queue?: QueuedDelivery[];
}

/** Hands deliveries to an endpoint's workflow (sent with signal-with-start, so it starts if idle). */
export const deliverSignal = defineSignal<[{ deliveryId: string; round: number }[]]>('deliver');
/** What the workflow holds: for operators and tests. */
export const queueQuery = defineQuery<QueuedDelivery[]>('queue');

/**
 * One workflow per endpoint delivers its events one at a time, retrying each on its own schedule:
 * a slow or failing endpoint holds up only itself. It ends when idle and is started again by the
 * next event.
 */
export const endpointDeliveries = defineWorkflow<EndpointDeliveryInput, void>('endpointDeliveriesWorkflow');

/** What one attempt came to (activities/webhooks/deliver-activities.ts). */
export type AttemptOutcome =
  /** 2xx; or the delivery needs no attempt (already delivered, gone). */
  | { kind: 'done' }
  /** Anything else: try again later; `retryAfterMs` when a 429/503 said when. */
  | { kind: 'retry'; retryAfterMs?: number }
  /** The endpoint is disabled or deleted (410, five days failing, by its owner): stop. */
  | { kind: 'stopped' };

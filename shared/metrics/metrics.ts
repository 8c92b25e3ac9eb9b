import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/**
 * The process's metrics, in Prometheus's text format: what an operator scrapes from the API
 * (`GET /metrics`) and from each worker (`WORKER_METRICS_PORT`). Labels are route templates,
 * methods, statuses, job types and outcomes: never a tenant, an id or anything a client typed,
 * so the number of series stays bounded.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'API requests by route template, method and status',
  labelNames: ['route', 'method', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const jobsStarted = new Counter({
  name: 'jobs_started_total',
  help: 'Jobs started (a retried start answered with its first job is not counted)',
  labelNames: ['type'] as const,
  registers: [registry],
});

export const jobsFinished = new Counter({
  name: 'jobs_finished_total',
  help: 'Jobs that reached a final status, by type and outcome (completed, partial, failed, cancelled)',
  labelNames: ['type', 'outcome'] as const,
  registers: [registry],
});

export const webhookDeliveries = new Counter({
  name: 'webhook_deliveries_total',
  help: 'Webhook delivery attempts by outcome: delivered (2xx), failed (any other answer or none), gone (410)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const METRICS_CONTENT_TYPE = registry.contentType;

export function metricsText(): Promise<string> {
  return registry.metrics();
}

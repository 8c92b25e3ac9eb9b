import type { ActivityDeps } from '..';
import { attemptDelivery, failDeliveries } from '../../shared/webhooks/attempt';

/** The endpoint delivery workflow's steps (workflows/webhooks/endpoint-deliveries.workflow.ts). */
export function webhookActivities(deps: ActivityDeps) {
  return {
    attemptWebhookDelivery: (input: { tenantId: string; endpointId: string; deliveryId: string; round?: number }) =>
      attemptDelivery(deps.db, deps.config, input),
    failWebhookDeliveries: (input: { tenantId: string; deliveryIds: string[]; rounds?: Record<string, number> }) =>
      failDeliveries(deps.db, input),
  };
}

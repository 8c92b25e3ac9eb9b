import { timeZoneOf } from '../auth/tenancy';
import type { TenantRecord } from '../auth/collections';
import { TokenBudget } from '../ai/budget';
import { ChatClient } from '../ai/provider';
import type { Config } from '../config';
import type { TenantDb } from '../db/tenant-db';
import type { FlowDefinition } from '../flows/definition';
import { aiPlanner, flowPlanner } from './engines';
import type { EditRun, SelectedProducts } from './page';
import type { Planner } from './plan';
import type { EditJobInput } from './runs';
import { buildFilter } from '../products/query';

/** The tenant's daily token budget: its own setting, else the configured default; days in its time zone. */
export function budgetOf(config: Config, tenantDb: TenantDb, tenant: TenantRecord | null): TokenBudget {
  return new TokenBudget(tenantDb, {
    dailyLimit: tenant?.settings.aiDailyTokenBudget ?? config.aiDailyTokenBudget,
    timeZone: timeZoneOf(tenant),
  });
}

/** How long an AI call's reservation may stay open before a killed worker is assumed to have left it. */
export function staleReservationMs(config: Config): number {
  return Math.max(5 * 60_000, 4 * (config.ai?.timeoutMs ?? 0));
}

/** A run's products as its start step reads them. */
function selectedProducts(input: EditJobInput): SelectedProducts {
  if ('skus' in input.selection) return { productIds: input.productIds ?? [] };
  if ('filters' in input.selection) return { filter: buildFilter(input.selection.filters).filter };
  return { all: true };
}

/** A run's fixed parameters, from its job record. */
export function editRunOf(config: Config, jobId: string, input: EditJobInput): EditRun {
  const ai = input.type === 'ai-transform';
  return {
    jobId,
    type: input.type,
    mode: input.mode,
    operationId: input.operationId,
    previewId: input.mode === 'preview' ? jobId : input.previewId,
    operation: {
      operationName: input.operationName,
      actor: input.actor,
      source: {
        jobId,
        ...(input.previewId ? { previewId: input.previewId } : {}),
        ...(ai ? { ai: input.ai } : { flow: input.flow }),
      },
    },
    selection: selectedProducts(input),
    pageSize: ai ? config.aiPageSize : config.editPageSize,
    concurrency: ai ? config.aiConcurrency : 8,
  };
}

/** The engine that plans a run's products. */
export async function editPlanner(
  config: Config,
  tenantDb: TenantDb,
  /** The tenant's record (its budget and time zone), read only for an AI transform. */
  tenant: () => Promise<TenantRecord | null>,
  jobId: string,
  input: EditJobInput,
): Promise<Planner> {
  if (input.type === 'flow') return flowPlanner(input.flow as FlowDefinition);
  if (!config.ai)
    return {
      propose: async () => ({
        kind: 'failed',
        code: 'MODEL_ERROR',
        message: 'no AI provider is configured for the worker (AI_BASE_URL)',
        retryable: false,
      }),
    };
  const budget = budgetOf(config, tenantDb, await tenant());
  // reservations a killed worker left open go back to the budget before this page spends from it
  await budget.releaseStale(staleReservationMs(config));
  return aiPlanner({ client: new ChatClient(config.ai), budget, spec: input.ai!, runId: jobId });
}

import type { Client, WorkflowHandle, WorkflowStartOptions } from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';
import type { WorkflowDef, WorkflowFn } from './define-workflow';

/** Starts the workflow a definition names, with an input of its declared type. */
export function startWorkflow<I, R>(
  client: Client,
  def: WorkflowDef<I, R>,
  input: I,
  options: Omit<WorkflowStartOptions, 'args'>,
): Promise<WorkflowHandle<WorkflowFn<WorkflowDef<I, R>>>> {
  return client.workflow.start<WorkflowFn<WorkflowDef<I, R>>>(def.name, {
    ...options,
    args: [input],
  } as WorkflowStartOptions<WorkflowFn<WorkflowDef<I, R>>>);
}

/** A handle to a workflow of a definition: `result()` is typed. */
export function workflowHandle<I, R>(
  client: Client,
  _def: WorkflowDef<I, R>,
  workflowId: string,
): WorkflowHandle<WorkflowFn<WorkflowDef<I, R>>> {
  return client.workflow.getHandle<WorkflowFn<WorkflowDef<I, R>>>(workflowId);
}

/** How long a status read waits for a workflow's answer before it answers from the job record. */
export const QUERY_WAIT_MS = 1000;

/**
 * A query's answer, or null when the workflow cannot answer at once: no worker is polling (a
 * query waits for one), the workflow has ended or is gone. A status read must never hang on a
 * job; the job record is its answer then.
 */
export async function queryOrNull<R>(
  client: Client,
  workflowId: string,
  query: QueryDefinition<R, []>,
  waitMs = QUERY_WAIT_MS,
): Promise<R | null> {
  try {
    return await client.withDeadline(Date.now() + waitMs, () => client.workflow.getHandle(workflowId).query(query));
  } catch {
    return null;
  }
}

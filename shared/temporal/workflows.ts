import type { Client, WorkflowHandle, WorkflowStartOptions } from '@temporalio/client';
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

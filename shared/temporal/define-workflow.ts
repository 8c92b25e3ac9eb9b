/**
 * A workflow's name and its input and result types, declared once in `shared/<domain>/messages.ts`
 * beside the workflow's updates, signals and queries. Every workflow takes one input object (a
 * field can be added without breaking running executions). The API starts and awaits workflows
 * through these definitions (shared/temporal/workflows.ts), never by a string; the worker
 * registers the function that workflows/index.ts exports under `name`
 * (test/unit/workflow-definitions.test.ts checks that every definition has one). Pure: safe in
 * the workflow bundle.
 */
export interface WorkflowDef<Input, Result> {
  readonly name: string;
  /** Phantom member carrying the types; never set. */
  readonly __types?: { input: Input; result: Result };
}

export function defineWorkflow<Input, Result>(name: string): WorkflowDef<Input, Result> {
  return { name };
}

/** The signature of the workflow function that implements `D`. */
export type WorkflowFn<D> = D extends WorkflowDef<infer I, infer R> ? (input: I) => Promise<R> : never;

/** The input of a definition. */
export type WorkflowInput<D> = D extends WorkflowDef<infer I, unknown> ? I : never;

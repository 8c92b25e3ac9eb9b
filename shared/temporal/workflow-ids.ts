/**
 * A job id maps to exactly one workflow id. The tenant is part of it, so two tenants can never
 * address one workflow, and the job id stays readable in the Temporal UI: `ten_01J…/csvimp_01J…`.
 */
export function workflowIdFor(tenantId: string, jobId: string): string {
  return `${tenantId}/${jobId}`;
}

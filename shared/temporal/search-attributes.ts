import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Set on every workflow so an operator can filter by tenant and job type in the Temporal UI. */
export const TENANT_ID = defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD);
export const JOB_TYPE = defineSearchAttributeKey('JobType', SearchAttributeType.KEYWORD);

import { defineQuery, defineSignal } from '@temporalio/workflow';
import { defineWorkflow } from '../temporal/define-workflow';
import type { EditCounts, FieldSummary, ProductError } from './summary-rules';

export type EditType = 'flow' | 'ai-transform';
export type EditMode = 'preview' | 'apply';

/**
 * One run of a bulk edit (a rule flow or an AI transform; a preview or an apply). What it edits
 * (the flow, the prompt, the selection) stays in the job's record, which every page reads: the
 * history holds ids and counts only.
 */
export interface EditWorkflowInput {
  tenantId: string;
  jobId: string;
  type: EditType;
  mode: EditMode;
  /** The bulk operation an apply records its changes in; none is made when nothing changes. */
  operationId: string;
  /** Preview: its own id (the job id). Apply: the preview it writes, or null. */
  previewId: string | null;
}

export type EditStatus = 'processing' | 'completed' | 'partial' | 'cancelled' | 'failed';

export interface EditProgress {
  status: EditStatus;
  /** Products in the selection when the run started (a preview's products when applying one). */
  total: number;
  processed: number;
  percent: number;
  counts: EditCounts;
}

export interface EditResult extends EditProgress {
  operationId: string | null;
  previewId: string | null;
  /** Every product the edit could not change (the first MAX_LISTED_ERRORS; `errorsNotListed` counts the rest). */
  errors: ProductError[];
  errorsNotListed: number;
  fields: FieldSummary[];
  replanned: string[];
  error: string | null;
}

/** The most per-product errors a run's result lists (the counts cover all). */
export const MAX_LISTED_ERRORS = 1000;

export const bulkEdit = defineWorkflow<EditWorkflowInput, EditResult>('bulkEditWorkflow');
/** A signal: the caller is answered at once; the run stops before its next page. */
export const cancelEdit = defineSignal<[]>('cancel');
export const editProgress = defineQuery<EditProgress>('progress');

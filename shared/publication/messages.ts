import { defineQuery, defineSignal } from '@temporalio/workflow';
import { defineWorkflow } from '../temporal/define-workflow';
import type { PublishOptions } from './publication';

export interface PublicationInput {
  tenantId: string;
  jobId: string;
  channelId: string;
  productIds: string[];
  options: PublishOptions;
  targetMarketplaces: string[];
  batchSize: number;
  /** Keep per-product results in the result (a small, synchronous publication answers with them). */
  collectResults: boolean;
}

export interface PublicationProgress {
  status: 'processing' | 'completed' | 'failed' | 'cancelled';
  total: number;
  processed: number;
  published: number;
  failed: number;
  skipped: number;
  percent: number;
  cancelReason: string | null;
}

/** How far a job got, in whole percent of its products. */
export const percentOf = (done: number, total: number) => Math.min(100, Math.floor((done / Math.max(1, total)) * 100));

export interface PublicationResult extends PublicationProgress {
  error: string | null;
  results: { sku: string; success: boolean; error?: string }[];
}

/** One publication of products to a channel, in batches. */
export const publication = defineWorkflow<PublicationInput, PublicationResult>('publicationWorkflow');
/** A signal, not an update: the caller is answered at once; the batch under way stops before its next product. */
export const cancelPublication = defineSignal<[{ reason: string | null }]>('cancel');
export const publicationProgress = defineQuery<PublicationProgress>('progress');

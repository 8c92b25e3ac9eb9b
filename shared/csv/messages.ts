import { defineQuery } from '@temporalio/workflow';
import { defineWorkflow } from '../temporal/define-workflow';
import type { ImportConfig } from './import-config';
import type { Selection } from './select';

export interface CsvImportInput {
  tenantId: string;
  jobId: string;
  s3Key: string;
  config: ImportConfig;
  actor: string;
  /** The bulk operation the job's changes are recorded in (one per job). */
  operationId: string;
  chunkSize: number;
}

export interface ImportProgress {
  status: 'queued' | 'processing' | 'completed' | 'failed';
  totalRows: number;
  processedRows: number;
  created: number;
  updated: number;
  failed: number;
  skipped: number;
  percent: number;
}

export interface CsvImportResult extends ImportProgress {
  errorReportKey: string | null;
  structuralErrors: string[];
}

export interface ExportInput extends Selection {
  tenantId: string;
  jobId: string;
  format: string;
}

export interface ExportResult {
  key: string;
  count: number;
  rows: number;
  totalRows: number;
  processedRows: number;
}

/** An async CSV import: stage the file's products once, then apply them chunk by chunk. */
export const csvImport = defineWorkflow<CsvImportInput, CsvImportResult>('csvImportWorkflow');
/** A running import's counters, answered by the workflow (a query: it changes nothing). */
export const importProgress = defineQuery<ImportProgress>('progress');

/** An async CSV export: one streaming activity into a multipart upload. */
export const csvExport = defineWorkflow<ExportInput, ExportResult>('csvExportWorkflow');

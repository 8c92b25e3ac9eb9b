import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { ExportInput, ExportResult } from '../../shared/csv/messages';
import { failureMessage } from './import.workflow';

const acts = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  // seconds, as the import's: a killed worker's export is handed to another worker at once (it
  // heartbeats with every product); options are not commands, so running workflows replay as before
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

/** An async CSV export: one streaming activity, then the job record says where the file is. */
export async function csvExportWorkflow(input: ExportInput): Promise<ExportResult> {
  const ref = { tenantId: input.tenantId, jobId: input.jobId };
  await acts.updateJob({ ...ref, status: 'processing' });
  try {
    const result = await acts.exportCsv(input);
    await acts.updateJob({ ...ref, status: 'completed', result: { ...result } });
    return result;
  } catch (err) {
    await acts.updateJob({ ...ref, status: 'failed', error: failureMessage(err) });
    throw err;
  }
}

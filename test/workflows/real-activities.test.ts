import pino from 'pino';
import { createActivities } from '../../activities';
import { TenantDb } from '../../shared/db/tenant-db';
import { jobs } from '../../shared/jobs/collection';
import { Jobs } from '../../shared/jobs/jobs';
import { ping } from '../../shared/system/messages';
import { workflowHandle } from '../../shared/temporal/workflows';
import { TestDeps } from '../helpers/stack';
import { openWorkflowEnv, type WorkflowEnv } from './support/env';

/**
 * The same environment with the real activities over the suite's database: a job started as the
 * API starts it (shared/jobs/jobs.ts) runs on this file's worker and its record ends as the
 * workflow left it. The other files test the workflows' logic over fakes; this one the wiring.
 */
let deps: TestDeps;
let wf: WorkflowEnv;
beforeAll(async () => {
  deps = await TestDeps.open();
  wf = await openWorkflowEnv({
    name: 'real-activities',
    activities: () =>
      createActivities({ config: deps.config, db: deps.db, s3: deps.s3, log: pino({ level: 'silent' }) }),
  });
});
afterAll(async () => {
  await wf?.close();
  await deps?.close();
});

test('a ping job runs through the real activities and its record says how it ended', async () => {
  const { tenantId } = await deps.tenantWithKey();
  const tenantDb = new TenantDb(deps.db, tenantId);
  const { job } = await new Jobs(wf.client, wf.taskQueue).start(tenantDb, {
    type: 'ping',
    prefix: 'ping',
    workflow: ping,
    workflowInput: (jobId) => ({ tenantId, jobId, message: 'through the real activities' }),
  });
  const result = await workflowHandle(wf.client, ping, job.workflowId).result();
  expect(result).toMatchObject({ echo: 'through the real activities', pid: process.pid });
  expect(await tenantDb.collection(jobs).findOne({ _id: job._id })).toMatchObject({
    status: 'completed',
    result,
    finishedAt: expect.any(Date),
  });
});

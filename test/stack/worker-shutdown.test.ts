import { join } from 'node:path';
import { TenantDb } from '../../shared/db/tenant-db';
import { jobs } from '../../shared/jobs/collection';
import { Jobs } from '../../shared/jobs/jobs';
import { ping } from '../../shared/system/messages';
import { startNodeProcess, waitFor } from '../../scripts/stack/process';
import { TestDeps, testStack } from '../helpers/stack';

/**
 * The worker process stops gracefully: on SIGTERM it finishes the activity in hand, reports it,
 * and exits 0; the job then ends on the next worker without running that activity again.
 * This file runs its own workers on its own task queue, so the suite's worker is untouched.
 */
const ROOT = join(__dirname, '..', '..');
let deps: TestDeps;
beforeAll(async () => {
  deps = await TestDeps.open();
});
afterAll(() => deps.close());

function worker(taskQueue: string, name: string) {
  const { env, dataDir } = testStack();
  return startNodeProcess(name, join(ROOT, 'worker', 'main.ts'), {
    cwd: ROOT,
    logDir: join(dataDir, 'logs'),
    env: { ...process.env, ...env, TEMPORAL_TASK_QUEUE: taskQueue },
  });
}

async function pollers(taskQueue: string): Promise<number> {
  const res = await deps.temporal.workflowService.describeTaskQueue({
    namespace: deps.config.temporalNamespace,
    taskQueue: { name: taskQueue, kind: 1 },
    taskQueueType: 1,
  });
  return res.pollers?.length ?? 0;
}

test('SIGTERM mid-activity: the activity completes once, the worker exits 0, the next worker finishes the job', async () => {
  const taskQueue = `shutdown-${Date.now()}`;
  const first = worker(taskQueue, 'worker-shutdown-1');
  await waitFor('first worker', async () => (await pollers(taskQueue)) > 0, { proc: first });

  const tenant = new TenantDb(deps.db, (await deps.tenantWithKey()).tenantId);
  const { job } = await new Jobs(deps.temporal, taskQueue).start(tenant, {
    type: 'ping',
    prefix: 'ping',
    workflow: ping,
    workflowInput: (jobId) => ({ tenantId: tenant.tenantId, jobId, message: 'graceful', holdMs: 2500 }),
  });
  await waitFor(
    'job processing',
    async () => (await tenant.collection(jobs).findOne({ _id: job._id }))?.status === 'processing',
  );
  // the ping activity is in hand (started on the first worker), whatever the machine's load
  await waitFor('the ping activity started', async () => {
    const described = await deps.temporal.workflow.getHandle(job.workflowId).describe();
    return (described.raw.pendingActivities ?? []).some(
      (a) => a.activityType?.name === 'ping' && Number(a.state) === 2, // PENDING_ACTIVITY_STATE_STARTED
    );
  });

  first.child.kill('SIGTERM');
  expect(await first.exited).toBe(0);

  const second = worker(taskQueue, 'worker-shutdown-2');
  try {
    const result = await deps.temporal.workflow.getHandle(job.workflowId).result();
    // the activity's result came from the first worker: it was not run again on the second
    expect(result).toMatchObject({ echo: 'graceful', pid: first.child.pid });
    const record = await tenant.collection(jobs).findOne({ _id: job._id });
    expect(record).toMatchObject({ status: 'completed', result: { pid: first.child.pid } });
    const history = await deps.temporal.workflow.getHandle(job.workflowId).fetchHistory();
    const scheduled = history.events!.filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'ping',
    );
    const started = history.events!.filter((e) => e.activityTaskStartedEventAttributes);
    expect(scheduled).toHaveLength(1);
    expect(started.filter((e) => Number(e.activityTaskStartedEventAttributes!.attempt) > 1)).toHaveLength(0);
  } finally {
    await second.stop();
  }
});

test('SIGKILL at two points of a ping job: before any worker took it, and mid-activity; it completes once', async () => {
  const taskQueue = `ping-kill-${Date.now()}`;
  const tenant = new TenantDb(deps.db, (await deps.tenantWithKey()).tenantId);
  // started with no worker polling: the first worker is killed as soon as it polls
  const { job } = await new Jobs(deps.temporal, taskQueue).start(tenant, {
    type: 'ping',
    prefix: 'ping',
    workflow: ping,
    workflowInput: (jobId) => ({ tenantId: tenant.tenantId, jobId, message: 'killed', holdMs: 4000 }),
  });
  const early = worker(taskQueue, 'worker-ping-kill-1');
  await waitFor('first worker', async () => (await pollers(taskQueue)) > 0, { proc: early });
  early.child.kill('SIGKILL');
  await early.exited;

  const second = worker(taskQueue, 'worker-ping-kill-2');
  await waitFor(
    'job processing',
    async () => (await tenant.collection(jobs).findOne({ _id: job._id }))?.status === 'processing',
    { proc: second },
  );
  await new Promise((r) => setTimeout(r, 1000)); // the 4-second activity is in hand
  second.child.kill('SIGKILL');
  await second.exited;

  const third = worker(taskQueue, 'worker-ping-kill-3');
  try {
    const result = await deps.temporal.workflow.getHandle(job.workflowId).result();
    // the cut-off attempt timed out on the dead worker and ran again, to its end, on the third
    expect(result).toMatchObject({ echo: 'killed', pid: third.child.pid });
    expect(await tenant.collection(jobs).findOne({ _id: job._id })).toMatchObject({
      status: 'completed',
      result: { pid: third.child.pid },
    });
    const history = await deps.temporal.workflow.getHandle(job.workflowId).fetchHistory();
    const completed = history.events!.filter((e) => e.activityTaskCompletedEventAttributes);
    // updateJob(processing), ping, updateJob(completed): each completed once
    expect(completed).toHaveLength(3);
  } finally {
    await third.stop();
  }
});

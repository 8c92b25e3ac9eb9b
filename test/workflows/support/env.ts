import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import type { Activities } from '../../../activities';
import { workflowBundle } from '../../../worker/bundle';
import { loadConfig } from '../../../shared/config';
import { testStack } from '../../helpers/test-stack';
import { FakeWorld } from './fake-activities';
import type { ScenarioContext } from './scenarios';

/**
 * One Temporal test environment and one worker on a task queue of its own, running the real
 * workflow bundle with the given activities (the fakes by default). A test file opens one in
 * beforeAll and closes it in afterAll; the recorder opens one for all its scenarios.
 */
export interface WorkflowEnv {
  env: TestWorkflowEnvironment;
  client: Client;
  taskQueue: string;
  world: FakeWorld;
  close(): Promise<void>;
}

/**
 * The SDK's own logging (every worker state change at INFO, every failure the scenarios cause on
 * purpose at WARN) would bury the output; errors are still shown.
 */
export function quietTemporalLogs(): void {
  try {
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
    });
  } catch {
    // a runtime exists already (another environment of this process made it): keep it
  }
}

export async function openWorkflowEnv(options: {
  /** Part of the task queue's name, to tell the queues of test files apart in the Temporal UI. */
  name: string;
  /** An environment to use (e.g. the recorder's local server); by default the suite's own Temporal server. */
  env?: TestWorkflowEnvironment;
  activities?: (world: FakeWorld) => Activities;
}): Promise<WorkflowEnv> {
  quietTemporalLogs();
  const env = options.env ?? (await suiteEnvironment());
  const world = new FakeWorld();
  const taskQueue = `wf-${options.name}-${randomUUID().slice(0, 8)}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace,
    taskQueue,
    workflowBundle: await currentBundle(),
    activities: options.activities ? options.activities(world) : world.activities(),
    // a fake waiting at a gate learns of a cancel by its heartbeat's answer: send each at once
    maxHeartbeatThrottleInterval: '50 ms',
    defaultHeartbeatThrottleInterval: '50 ms',
    shutdownGraceTime: '2 s',
  });
  const running = worker.run();
  return {
    env,
    client: env.client,
    taskQueue,
    world,
    close: async () => {
      worker.shutdown();
      await running;
      if (!options.env) await env.teardown();
    },
  };
}

/**
 * The worker's cached bundle of the current workflow code (worker/bundle.ts: built once per
 * source version, so the test files of a run share one build). Its key hashes workflows/ and
 * shared/; a file saved between the build and the read changes the key and the read misses,
 * so it is asked again.
 */
export async function currentBundle(): Promise<{ code: string }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await workflowBundle();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 3) throw err;
    }
  }
}

/**
 * The suite's Temporal server (the test stack's, from global-setup), in its namespace: what
 * test/helpers/stack.ts's testConfig() gives, without loading the API that module brings.
 */
async function suiteEnvironment(): Promise<TestWorkflowEnvironment> {
  const config = loadConfig({ ...process.env, ...testStack().env });
  return TestWorkflowEnvironment.createFromExistingServer({
    address: config.temporalAddress,
    namespace: config.temporalNamespace,
  });
}

/** What a scenario runs with, in a test: ids made unique, so a file may run a scenario more than once. */
export function testContext(wf: WorkflowEnv): ScenarioContext {
  return {
    client: wf.client,
    taskQueue: wf.taskQueue,
    world: wf.world,
    id: (name) => `${name}-${randomUUID().slice(0, 8)}`,
  };
}

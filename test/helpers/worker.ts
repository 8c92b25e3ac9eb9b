import { join } from 'node:path';
import { startNodeProcess, type Proc } from '../../scripts/stack/process';
import { testStack } from './test-stack';

const ROOT = join(__dirname, '..', '..');

/**
 * A worker process of the test's own, on the suite's servers, polling `taskQueue` (and using
 * `database`, when the test keeps its data apart; `extraEnv`, settings of its own such as an AI
 * provider): what a kill test SIGKILLs and starts again.
 */
export function startWorker(
  taskQueue: string,
  name: string,
  database?: string,
  extraEnv: Record<string, string> = {},
): Proc {
  const { env, dataDir } = testStack();
  return startNodeProcess(name, join(ROOT, 'worker', 'main.ts'), {
    cwd: ROOT,
    logDir: join(dataDir, 'logs'),
    env: {
      ...process.env,
      ...env,
      ...(database ? { MONGODB_DB: database } : {}),
      TEMPORAL_TASK_QUEUE: taskQueue,
      ...extraEnv,
    },
  });
}

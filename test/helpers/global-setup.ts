import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStack, type Stack } from '../../scripts/stack/stack';

/**
 * Starts the suite's own stack on free ports with a temporary data directory, never a
 * developer's running one. Addresses given in the environment (MONGODB_URI, TEMPORAL_ADDRESS,
 * S3_ENDPOINT) are used instead of the embedded server for that role.
 */
export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const dataDir = mkdtempSync(join(tmpdir(), 'backoffice-test-'));
  const stack = await startStack({
    dataDir,
    ports: 'free',
    withApp: true,
    env: {
      ...process.env,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
      MONGODB_DB: `test_${Date.now()}`,
      // a run on a given (shared) Temporal server polls a queue of its own: no other run's worker takes its tasks
      TEMPORAL_TASK_QUEUE: process.env.TEMPORAL_TASK_QUEUE ?? `test-${process.pid}-${Date.now()}`,
    },
    log: (line) => process.stderr.write(`[stack] ${line}\n`),
  });
  const file = join(dataDir, 'stack.json');
  writeFileSync(
    file,
    JSON.stringify({ env: stack.env, apiUrl: stack.apiUrl, temporalUiUrl: stack.temporalUiUrl, dataDir }),
  );
  process.env.BO_TEST_STACK = file;
  (globalThis as { __stack?: Stack }).__stack = stack;
  process.stderr.write(`\n[stack] ready in ${((Date.now() - started) / 1000).toFixed(1)} s (${dataDir})\n`);
}

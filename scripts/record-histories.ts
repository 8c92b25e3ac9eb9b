/**
 * `npm run histories:record [-- <part of a file name> …]`: records the workflow histories that
 * test/workflows/replay.test.ts replays, into test/workflows/histories/<workflowType>-<scenario>.json.
 *
 * Each scenario of test/workflows/support/scenarios.ts runs to its end on a Temporal dev server
 * of its own (the embedded `temporal` binary, in memory, on a free port; or the server at
 * TEMPORAL_ADDRESS when set), with the current workflow code and the tests' fake activities, and
 * its history is written in Temporal's JSON form with what differs between two recordings
 * replaced (times, run ids, identities: support/history-json.ts). Inputs, ids and the fakes'
 * answers are fixed, so recording again with unchanged workflows gives the same commands.
 *
 * Re-record only on purpose: a replay failure means the new workflow code would break the
 * executions running at deploy time. Guard the change with `patched()` instead whenever old
 * executions can still be running; re-record when they cannot (or for a new scenario), and say
 * so in the commit message. With arguments, only the scenarios whose file name contains one of
 * them are recorded (e.g. `npm run histories:record -- rollbackWorkflow`).
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { ensureServerBuilt, SERVERS } from './stack/servers';
import { openWorkflowEnv, quietTemporalLogs } from '../test/workflows/support/env';
import { historyToJson, normalizeHistoryJson } from '../test/workflows/support/history-json';
import { historyFileName, scenarios } from '../test/workflows/support/scenarios';

const OUT = resolve(__dirname, '..', 'test', 'workflows', 'histories');

async function temporalEnvironment(): Promise<TestWorkflowEnvironment> {
  const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
  if (process.env.TEMPORAL_ADDRESS)
    return TestWorkflowEnvironment.createFromExistingServer({ address: process.env.TEMPORAL_ADDRESS, namespace });
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: ensureServerBuilt(SERVERS.temporal) },
      ip: '127.0.0.1',
      namespace,
      ui: false,
      extraArgs: ['--log-level', 'error'],
    },
  });
}

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const chosen = scenarios.filter((s) => !only.length || only.some((part) => historyFileName(s).includes(part)));
  if (!chosen.length) throw new Error(`no scenario's file name contains ${only.join(' or ')}`);
  quietTemporalLogs();
  const env = await temporalEnvironment();
  const written = new Set<string>();
  try {
    const wf = await openWorkflowEnv({ name: 'recorder', env });
    try {
      mkdirSync(OUT, { recursive: true });
      for (const scenario of chosen) {
        const file = historyFileName(scenario);
        const run = await withinSeconds(
          60,
          file,
          scenario.run({ client: wf.client, taskQueue: wf.taskQueue, world: wf.world, id: (name) => name }),
        );
        const history = await run.handle.fetchHistory();
        writeFileSync(join(OUT, file), normalizeHistoryJson(historyToJson(history)));
        written.add(file);
        console.log(`recorded ${file} (${history.events?.length ?? 0} events)`);
      }
    } finally {
      await wf.close();
    }
  } finally {
    await env.teardown(); // stops the dev server this script started
  }
  // a file no scenario makes (a scenario renamed or dropped, or a history taken from elsewhere) is left for a person to judge
  const others = readdirSync(OUT).filter((f) => f.endsWith('.json') && !written.has(f) && !only.length);
  if (others.length) console.log(`not recorded by any scenario (kept): ${others.join(', ')}`);
}

/** A scenario whose workflow no longer takes the path it drives (a gate never reached) would wait for ever. */
async function withinSeconds<T>(seconds: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${seconds} s`)), seconds * 1000);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

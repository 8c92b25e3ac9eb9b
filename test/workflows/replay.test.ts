import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker, type ReplayResult } from '@temporalio/worker';
import * as workflows from '../../workflows';
import { currentBundle, quietTemporalLogs } from './support/env';
import { historyFromJson } from './support/history-json';

/**
 * Every recorded history (histories/*.json) replays with the current workflow code. A change to
 * a workflow's commands (an activity added, removed, reordered, a different update handling)
 * makes the replay of the histories that went through it fail with a DeterminismViolationError:
 * the change would break the executions running when it is deployed. Guard it with `patched()`,
 * or, when no such execution can be running, re-record the histories on purpose
 * (`npm run histories:record`, see docs/testing.md) and say so in the commit.
 */
const DIR = join(__dirname, 'histories');
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

function workflowTypeOf(file: string): string {
  const first = (JSON.parse(readFileSync(join(DIR, file), 'utf8')) as { events: Record<string, any>[] }).events[0];
  return first.workflowExecutionStartedEventAttributes.workflowType.name as string;
}

const results = new Map<string, ReplayResult>();

beforeAll(async () => {
  quietTemporalLogs();
  const histories = files.map((file) => ({
    workflowId: file,
    history: historyFromJson(readFileSync(join(DIR, file), 'utf8')),
  }));
  // one replay worker for them all: each history is replayed on its own, and its result kept
  for await (const result of Worker.runReplayHistories({ workflowBundle: await currentBundle() }, histories))
    results.set(result.workflowId, result);
});

test('every workflow type the worker runs has recorded histories', () => {
  const recorded = new Set(files.map(workflowTypeOf));
  expect(Object.keys(workflows).filter((name) => !recorded.has(name))).toEqual([]);
});

test.each(files)('%s replays with the current workflow code', (file) => {
  const result = results.get(file);
  expect(result).toBeDefined();
  // the error's own text names the mismatch (e.g. the activity the code schedules where the history has another)
  expect(result?.error?.message ?? null).toBeNull();
});

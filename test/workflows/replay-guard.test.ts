import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { bundleWorkflowCode, Worker, type ReplayResult } from '@temporalio/worker';
import { quietTemporalLogs } from './support/env';
import { historyFromJson } from './support/history-json';

/**
 * The replay test must fail when a workflow's commands change. This one proves it on every run:
 * it copies workflows/ to a temporary directory, adds one activity call at the start of every
 * workflow but one, adds the same call behind `patched()` to that one (pingWorkflow), bundles
 * the copy, and replays the recorded histories with it. Every unguarded history must fail with a
 * DeterminismViolationError, and the guarded ones must still replay.
 */
const ROOT = resolve(__dirname, '..', '..');
const HISTORIES = join(__dirname, 'histories');
const GUARDED = 'pingWorkflow';

const EXTRA_CALL =
  "await __guard.proxyActivities<Record<string, (x: unknown) => Promise<void>>>({ startToCloseTimeout: '1 minute' }).extraStep({});";

/** Each workflow the worker registers, and the file it is written in (from workflows/index.ts). */
function workflowFiles(): { name: string; file: string }[] {
  const index = readFileSync(join(ROOT, 'workflows', 'index.ts'), 'utf8');
  return [...index.matchAll(/export \{ (\w+) \} from '\.\/([^']+)'/g)].map(([, name, path]) => ({
    name,
    file: `${path}.ts`,
  }));
}

/** Puts `statement` first in the body of the exported workflow function `name`. */
function insertAtStart(source: string, name: string, statement: string): string {
  const at = source.indexOf(`export async function ${name}(`);
  const body = at < 0 ? -1 : source.indexOf('{\n', source.indexOf(')', at));
  if (body < 0) throw new Error(`the body of ${name} was not found: this test needs to learn the new shape`);
  return `import * as __guard from '@temporalio/workflow';\n${source.slice(0, body + 2)}  ${statement}\n${source.slice(body + 2)}`;
}

let dir: string;
const results = new Map<string, ReplayResult>();
const typeOf = new Map<string, string>();

beforeAll(async () => {
  quietTemporalLogs();
  dir = mkdtempSync(join(tmpdir(), 'workflows-changed-'));
  cpSync(join(ROOT, 'workflows'), join(dir, 'workflows'), { recursive: true });
  // the copy's imports of shared/ and of packages reach the real ones
  symlinkSync(join(ROOT, 'shared'), join(dir, 'shared'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  for (const { name, file } of workflowFiles()) {
    const path = join(dir, 'workflows', file);
    const statement = name === GUARDED ? `if (__guard.patched('replay-guard-test')) ${EXTRA_CALL}` : EXTRA_CALL;
    writeFileSync(path, insertAtStart(readFileSync(path, 'utf8'), name, statement));
  }
  const { code } = await bundleWorkflowCode({ workflowsPath: join(dir, 'workflows', 'index.ts'), logger: quietLogger });

  const files = readdirSync(HISTORIES).filter((f) => f.endsWith('.json'));
  const histories = files.map((file) => {
    const history = historyFromJson(readFileSync(join(HISTORIES, file), 'utf8'));
    typeOf.set(file, history.events![0].workflowExecutionStartedEventAttributes!.workflowType!.name!);
    return { workflowId: file, history };
  });
  for await (const result of Worker.runReplayHistories({ workflowBundle: { code } }, histories))
    results.set(result.workflowId, result);
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('an unguarded new command fails the replay of every history of its workflow', () => {
  const unguarded = [...results.keys()].filter((file) => typeOf.get(file) !== GUARDED);
  expect(unguarded.length).toBeGreaterThan(0);
  for (const file of unguarded) {
    const error = results.get(file)?.error;
    expect({ file, error: error?.name }).toEqual({ file, error: 'DeterminismViolationError' });
  }
});

test('the same command behind patched() replays', () => {
  const guarded = [...results.keys()].filter((file) => typeOf.get(file) === GUARDED);
  expect(guarded.length).toBeGreaterThan(0);
  for (const file of guarded) expect({ file, error: results.get(file)?.error?.message }).toEqual({ file });
});

const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (message: string, meta?: Record<string, unknown>) => console.error(message, meta),
};

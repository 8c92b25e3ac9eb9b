import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as workflows from '../../workflows';
import type { WorkflowDef } from '../../shared/temporal/define-workflow';

/**
 * The API starts workflows by their definitions in shared/<domain>/messages.ts; the worker runs the
 * functions workflows/index.ts exports. A definition whose name no function has would start
 * workflows no worker can run, and a function without a definition could only be started by a
 * string: both are refused here.
 */
const SHARED = resolve(__dirname, '..', '..', 'shared');

function messageModules(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return messageModules(path);
    return name === 'messages.ts' ? [path] : [];
  });
}

function isDefinition(value: unknown): value is WorkflowDef<unknown, unknown> {
  return typeof value === 'object' && value !== null && Object.keys(value).join() === 'name';
}

// every messages.ts, found on disk, so a new domain's definitions are checked without listing them here
const definitions = messageModules(SHARED).flatMap((file) =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the file list is only known at run time
  Object.values(require(file) as Record<string, unknown>).filter(isDefinition),
);

test('every workflow definition names a workflow the worker registers', () => {
  expect(definitions.length).toBeGreaterThanOrEqual(6);
  const registered = workflows as unknown as Record<string, unknown>;
  for (const def of definitions)
    expect({ [def.name]: typeof registered[def.name] }).toEqual({ [def.name]: 'function' });
});

test('every registered workflow has a definition', () => {
  const named = new Set(definitions.map((d) => d.name));
  expect(Object.keys(workflows).filter((name) => !named.has(name))).toEqual([]);
});

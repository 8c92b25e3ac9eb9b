import { readFileSync } from 'node:fs';

/** The suite's stack, as started by global-setup.ts. */
export interface TestStack {
  env: Record<string, string>;
  apiUrl: string;
  temporalUiUrl: string | null;
  dataDir: string;
}

export function testStack(): TestStack {
  const file = process.env.BO_TEST_STACK;
  if (!file) throw new Error('BO_TEST_STACK is not set: run the tests with jest (global-setup starts the stack)');
  return JSON.parse(readFileSync(file, 'utf8')) as TestStack;
}

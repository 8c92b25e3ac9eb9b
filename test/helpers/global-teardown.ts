import { rmSync } from 'node:fs';
import type { Stack } from '../../scripts/stack/stack';

export default async function globalTeardown(): Promise<void> {
  const stack = (globalThis as { __stack?: Stack }).__stack;
  await stack?.stop();
  const file = process.env.BO_TEST_STACK;
  if (file && !process.env.KEEP_TEST_DATA) rmSync(file.replace(/\/stack\.json$/, ''), { recursive: true, force: true });
}

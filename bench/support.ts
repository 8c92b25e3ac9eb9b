import { execSync } from 'node:child_process';
import { resolve } from 'node:path';

/** What every benchmark shares: its settings from the environment and the code it measured. */

/** A positive integer setting: `name` from the environment, `fallback` when unset. */
export function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer; got ${JSON.stringify(raw)}`);
  return n;
}

/** The commit measured, and whether the code it runs differs from it. */
export function codeVersion(): string {
  try {
    const root = resolve(__dirname, '..');
    const commit = execSync('git rev-parse --short HEAD', { cwd: root }).toString().trim();
    // not trimmed as a whole: each porcelain line starts with two status columns, the first often a space
    const changed = execSync('git status --porcelain -- shared api workflows activities', { cwd: root })
      .toString()
      .trimEnd();
    return changed
      ? `${commit} with uncommitted changes to ${changed
          .split('\n')
          .map((l) => l.slice(3))
          .join(', ')}`
      : commit;
  } catch {
    return 'unknown';
  }
}

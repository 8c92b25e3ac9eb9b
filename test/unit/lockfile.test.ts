import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** `npm ci` refuses a lockfile that lacks any optional dependency; scripts/complete-lockfile.js adds them. */
test('every optional dependency in the lockfile has an entry (run scripts/complete-lockfile.js after npm install)', () => {
  const lock = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package-lock.json'), 'utf8'));
  const missing: string[] = [];
  for (const [path, entry] of Object.entries<{ optionalDependencies?: Record<string, string> }>(lock.packages)) {
    for (const name of Object.keys(entry.optionalDependencies ?? {})) {
      if (!lock.packages[`node_modules/${name}`] && !lock.packages[`${path}/node_modules/${name}`])
        missing.push(`${name} (of ${path})`);
    }
  }
  expect(missing).toEqual([]);
});

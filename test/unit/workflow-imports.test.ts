import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * Workflow code must be deterministic and bundle for the workflow sandbox: it may import only
 * @temporalio/workflow (and @temporalio/common), activity *types*, and pure code from shared/.
 * This walks the import graph from workflows/ and fails on anything else.
 */
const ROOT = resolve(__dirname, '..', '..');
const ALLOWED_PACKAGES = ['@temporalio/workflow', '@temporalio/common'];
const IMPORT = /^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+['"]([^'"]+)['"]/gm;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : n.endsWith('.ts') ? [join(dir, n)] : []));
}

function resolveLocal(from: string, spec: string): string {
  const base = resolve(dirname(from), spec);
  for (const candidate of [`${base}.ts`, join(base, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // try the next
    }
  }
  throw new Error(`cannot resolve ${spec} from ${from}`);
}

test('workflows import only the workflow SDK, activity types and pure shared code', () => {
  const problems: string[] = [];
  const seen = new Set<string>();
  const queue = files(join(ROOT, 'workflows'));
  while (queue.length) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const [, , typeOnly, spec] = m;
      const where = `${file.slice(ROOT.length + 1)} imports ${spec}`;
      if (typeOnly) continue; // erased at compile time
      if (!spec.startsWith('.')) {
        if (!ALLOWED_PACKAGES.includes(spec)) problems.push(where);
        continue;
      }
      const target = resolveLocal(file, spec);
      const rel = target.slice(ROOT.length + 1);
      if (!rel.startsWith('workflows/') && !rel.startsWith('shared/')) problems.push(`${where} (outside workflows/ and shared/)`);
      else queue.push(target);
    }
  }
  expect(problems).toEqual([]);
  expect(seen.size).toBeGreaterThan(1);
});

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

const ROOT = resolve(__dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : /\.ts$/.test(name) ? [path] : [];
  });
}

/** Workflow code can only reach workflows/ and shared/; a change there (or of the SDK) means a new bundle. */
function bundleKey(): string {
  const hash = createHash('sha256');
  const sdk = JSON.parse(readFileSync(require.resolve('@temporalio/worker/package.json'), 'utf8')).version;
  hash.update(String(sdk));
  for (const file of [...sourceFiles(join(ROOT, 'workflows')), ...sourceFiles(join(ROOT, 'shared'))].sort()) {
    hash.update(file.slice(ROOT.length)).update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 24);
}

/**
 * The workflow bundle, built once per source version and kept in the cache, so that a restarted
 * worker (or a second one) starts in a moment instead of re-running webpack.
 */
export async function workflowBundle(): Promise<{ code: string }> {
  const dir = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'backoffice', 'workflow-bundles');
  const file = join(dir, `${bundleKey()}.js`);
  if (existsSync(file)) return { code: readFileSync(file, 'utf8') };
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve(join(ROOT, 'workflows')) });
  mkdirSync(dir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, code);
  renameSync(tmp, file);
  return { code };
}

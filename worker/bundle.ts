import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
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

function bundleFile(): string {
  const dir = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'backoffice', 'workflow-bundles');
  return join(dir, `${bundleKey()}.js`);
}

/** Builds the bundle with webpack and stores it in the cache (atomically: a reader never sees half a file). */
async function buildBundle(file: string): Promise<void> {
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve(join(ROOT, 'workflows')) });
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, code);
  renameSync(tmp, file);
}

/**
 * The workflow bundle, built once per source version and kept in the cache, so that a restarted
 * worker (or a second one) starts in a moment instead of re-running webpack. A missing bundle is
 * built by a short-lived child process: webpack takes over 100 MiB, which a long-running worker
 * would otherwise keep for good.
 */
export async function workflowBundle(): Promise<{ code: string }> {
  const file = bundleFile();
  if (!existsSync(file)) {
    // the child writes the file named here: a source saved meanwhile would give it another key
    const built = spawnSync(process.execPath, ['--import', 'tsx', __filename, '--build', file], {
      stdio: 'inherit',
      cwd: ROOT,
    });
    if (built.status !== 0)
      throw new Error(`building the workflow bundle failed (exit ${built.status ?? built.signal})`);
  }
  return { code: readFileSync(file, 'utf8') };
}

if (require.main === module && process.argv.includes('--build')) {
  const target = process.argv[process.argv.indexOf('--build') + 1] ?? bundleFile();
  buildBundle(target).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

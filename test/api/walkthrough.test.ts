import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { freePort, portOpen } from '../../scripts/stack/process';

/**
 * The README's walkthrough, run as a newcomer runs it: `npm start` (tsx scripts/start.ts, every
 * server embedded) in a copy of the checkout, then the README's marked ```sh block pasted into
 * bash at the copy's root, unchanged. The copy is symlinks to the checkout plus its own .data/,
 * so the block's relative paths (.data/dev-credentials.json, docs/examples/…, scripts/…) resolve
 * as in a fresh clone and the developer's own .data/ and ports are never touched. The checks are
 * on what the reader sees: the block's output.
 */
const ROOT = join(__dirname, '..', '..');
const RECEIVER_PORT = 4000; // the README's receiver port
jest.setTimeout(240_000);

/** The ```sh block that follows `<!-- walkthrough -->` in README.md. */
function walkthroughBlock(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const match = /<!-- walkthrough -->\s*\n```sh\n([\s\S]*?)\n```/.exec(readme);
  if (!match) throw new Error('README.md has no ```sh block after <!-- walkthrough -->');
  return match[1];
}

/** A directory that looks like a fresh clone: every top-level entry of the checkout but its data. */
function checkoutCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'backoffice-walkthrough-'));
  for (const entry of readdirSync(ROOT)) {
    if (entry !== '.data' && entry !== '.git') symlinkSync(join(ROOT, entry), join(dir, entry));
  }
  mkdirSync(join(dir, '.data'));
  return dir;
}

/** The environment of a user's shell: no addresses or keys of the suite's stack. */
function userEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH!,
    HOME: process.env.HOME!,
    XDG_CACHE_HOME: process.env.XDG_CACHE_HOME ?? '',
    ...extra,
  };
}

/**
 * A child process whose output (stdout and stderr, interleaved as written) is collected. With
 * `group`, it leads a process group of its own and `stop` ends the whole group: what a shell left
 * in the background (the receiver) goes with it. Without, `stop` signals the process alone, as
 * Ctrl-C's SIGTERM equivalent reaches `npm start`, which then stops its own children.
 */
function run(command: string, args: string[], cwd: string, env: Record<string, string>, group = false) {
  const child: ChildProcess = spawn(command, args, { cwd, env, detached: group, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    output: () => output,
    exited,
    async until(text: string | RegExp, timeoutMs: number): Promise<void> {
      const seen = () => (typeof text === 'string' ? output.includes(text) : text.test(output));
      for (const end = Date.now() + timeoutMs; !seen();) {
        if (Date.now() > end) throw new Error(`not seen within ${timeoutMs} ms: ${text}\n--- output ---\n${output}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async stop(): Promise<number | null> {
      try {
        process.kill(group ? -child.pid! : child.pid!, 'SIGTERM');
      } catch {
        // gone already
      }
      return exited;
    },
  };
}

/** Every line of the output that is a JSON object. */
function jsonLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

/** The last JSON line whose jobId starts with `prefix`: a job as `poll` left it. */
function lastJob(lines: Record<string, unknown>[], prefix: string): Record<string, unknown> {
  const job = lines.filter((l) => typeof l.jobId === 'string' && l.jobId.startsWith(prefix)).at(-1);
  if (!job) throw new Error(`no ${prefix}… job in the output`);
  return job;
}

test("the README's walkthrough, pasted after npm start, does what it says", async () => {
  // the store of step 5 is "down" only if nothing listens on its port; the receiver needs its own
  expect({ port: 9, open: await portOpen(9) }).toEqual({ port: 9, open: false });
  expect({ port: RECEIVER_PORT, open: await portOpen(RECEIVER_PORT) }).toEqual({ port: RECEIVER_PORT, open: false });

  const dir = checkoutCopy();
  const ports: Record<string, string> = {};
  for (const name of [
    'PORT',
    'TEMPORAL_PORT',
    'TEMPORAL_UI_PORT',
    'TEMPORAL_HTTP_PORT',
    'TEMPORAL_METRICS_PORT',
    'MONGODB_PORT',
    'S3_PORT',
    'S3_CONSOLE_PORT',
  ])
    ports[name] = String(await freePort());
  const start = run(
    join(ROOT, 'node_modules', '.bin', 'tsx'),
    [join(dir, 'scripts', 'start.ts')],
    dir,
    userEnv({ DATA_DIR: join(dir, '.data'), LOG_LEVEL: 'warn', ...ports }),
  );
  let shell: ReturnType<typeof run> | null = null;
  try {
    await Promise.race([
      start.until('Ctrl-C stops everything', 180_000),
      start.exited.then(() => Promise.reject(new Error(`npm start exited early:\n${start.output()}`))),
    ]);
    const creds = JSON.parse(readFileSync(join(dir, '.data', 'dev-credentials.json'), 'utf8')) as {
      tenantId: string;
      temporalUiUrl: string;
    };

    // exactly the README's lines; bash -v echoes each before its output, and -e stops at the first failure
    const script = join(dir, '.data', 'walkthrough.sh');
    writeFileSync(script, `set -eo pipefail\n${walkthroughBlock()}\n`);
    shell = run('bash', ['-v', script], dir, userEnv(), true);
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      shell.exited,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the walkthrough did not end:\n${shell!.output()}`)), 120_000);
      }),
    ]).finally(() => clearTimeout(timer));
    const transcript = shell.output();
    expect({ code, transcript }).toEqual({ code: 0, transcript });
    const lines = jsonLines(transcript);

    // 2. the product
    expect(lines).toContainEqual({ id: expect.any(String), sku: 'WALK-MUG', status: 'draft' });

    // 3. the import, polled until it ended
    const imported = lastJob(lines, 'csvimp_');
    expect(imported).toMatchObject({ status: 'completed', created: 21, failed: 0, errorReportUrl: null });

    // 4. the Temporal UI: the printed page answers, and its query finds the import's workflow
    const workflowId = `${creds.tenantId}/${String(imported.jobId)}`;
    const link = new RegExp(
      `^${creds.temporalUiUrl}/namespaces/default/workflows\\?query=TenantId%3D%22${creds.tenantId}%22$`,
      'm',
    ).exec(transcript);
    expect(link).not.toBeNull();
    expect((await fetch(link![0])).status).toBe(200);
    expect(transcript).toContain(`${workflowId} WORKFLOW_EXECUTION_STATUS_COMPLETED`);
    const stack = JSON.parse(readFileSync(join(dir, '.data', 'stack.json'), 'utf8')) as {
      env: { TEMPORAL_ADDRESS: string };
    };
    const connection = await Connection.connect({ address: stack.env.TEMPORAL_ADDRESS });
    try {
      const query = new URL(link![0]).searchParams.get('query')!;
      const ids: string[] = [];
      for await (const wf of new Client({ connection }).workflow.list({ query })) ids.push(wf.workflowId);
      expect(ids).toContain(workflowId);
    } finally {
      await connection.close();
    }

    // 5. the publication: running (its store is down) when cancelled, then cancelled
    const exportJob = lastJob(lines, 'exp_');
    expect(lines).toContainEqual({ jobId: exportJob.jobId, status: 'processing', total: 21, processed: 0 });
    expect(lines).toContainEqual({ success: true, message: expect.stringContaining(String(exportJob.jobId)) });
    expect(exportJob).toMatchObject({ status: 'cancelled', cancelReason: 'walkthrough', published: 0 });

    // 6. the rollback: the 20 imported products deleted
    expect(lastJob(lines, 'rbk_')).toMatchObject({
      status: 'completed',
      operationId: `bop_${String(imported.jobId)}`,
      success: true,
      deleted: 20,
      restored: 0,
      failed: [],
    });

    // 7. the receiver prints the plate's creation once its delivery arrives (retries included)
    const plate = lines.find((l) => l.sku === 'WALK-PLATE');
    expect(plate).toEqual({ id: expect.any(String), sku: 'WALK-PLATE' });
    await shell.until(new RegExp(`^product\\.created \\S+ ${String(plate!.id)}$`, 'm'), 90_000);
  } finally {
    await shell?.stop();
    await start.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

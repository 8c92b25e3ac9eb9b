import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { createWriteStream, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A child process of the stack, with its output in `<logDir>/<name>.log`. */
export interface Proc {
  name: string;
  child: ChildProcess;
  logFile: string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

export function startProcess(
  name: string,
  command: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; logDir: string },
): Proc {
  mkdirSync(opts.logDir, { recursive: true });
  const logFile = join(opts.logDir, `${name}.log`);
  const out = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(command, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', (err) => {
      out.write(`failed to start: ${err.message}\n`);
      resolve(-1);
    });
  });
  const stop = async (graceMs = 10_000) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  return { name, child, logFile, stop, exited };
}

/**
 * One of our TypeScript entry points as a plain node process (tsx as a loader, not as a wrapper
 * process), so that its pid is the process doing the work and signals reach it directly.
 */
export function startNodeProcess(
  name: string,
  entry: string,
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; logDir: string; nodeFlags?: string[] },
): Proc {
  return startProcess(name, process.execPath, [...(opts.nodeFlags ?? []), '--import', 'tsx', entry], opts);
}

/**
 * The worker's V8 flags. Its two isolates (activities, and the workflow thread) each keep a young
 * generation of up to 2 × 16 MiB by default; 2 MiB semi-spaces take about 40 MiB off its
 * resident memory for a few more (cheap) scavenges. The same flags are in package.json and
 * docker-compose.yml.
 */
export const WORKER_NODE_FLAGS = ['--max-semi-space-size=2', '--max-old-space-size=160'];

/**
 * Ports handed out by freePort, in any process of this machine: `<dir>/<port>` is a claim. A claim
 * outlives its stack (ports are not given back), and one older than CLAIM_MS is free again.
 */
const CLAIMS_DIR = join(tmpdir(), 'backoffice-port-claims');
const CLAIM_MS = 30 * 60_000;
/**
 * Below Linux's ephemeral range (32768–60999): a port from there could be taken, between its
 * choice and its server's start (a Temporal start takes seconds), as the local port of any
 * process's outgoing connection or by a server that asks the kernel for any port. Parallel test
 * suites start stacks at once, and the claims keep them from choosing the same port.
 */
const RANGE = { from: 20_000, to: 32_000 };

/** A port no other freePort has handed out lately, and that nothing listens on now. */
export async function freePort(): Promise<number> {
  mkdirSync(CLAIMS_DIR, { recursive: true });
  for (let tries = 0; tries < 500; tries++) {
    const port = RANGE.from + randomInt(RANGE.to - RANGE.from);
    if (claim(port) && (await bindable(port))) return port;
  }
  throw new Error(`no free port in ${RANGE.from}–${RANGE.to} (claims in ${CLAIMS_DIR})`);
}

function claim(port: number): boolean {
  const file = join(CLAIMS_DIR, String(port));
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' });
    return true;
  } catch {
    try {
      if (Date.now() - statSync(file).mtimeMs < CLAIM_MS) return false;
      rmSync(file, { force: true }); // stale: whoever takes the file next has it
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return true;
    } catch {
      return false;
    }
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    // every address (IPv4 and IPv6): a server on 127.0.0.1 or ::1 makes this fail too
    srv.listen(port, () => srv.close(() => resolve(true)));
  });
}

export function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.setTimeout(500);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
    socket.connect(port, host);
  });
}

/**
 * Polls `check` until it returns true; fails early with the process's log tail when the process
 * exits, and after `timeoutMs` otherwise.
 */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  opts: { timeoutMs?: number; proc?: Proc } = {},
): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let exited = false;
  void opts.proc?.exited.then(() => (exited = true));
  for (;;) {
    if (exited)
      throw new Error(`${what} exited during start-up; see ${opts.proc?.logFile}${logTail(opts.proc?.logFile)}`);
    try {
      if (await check()) return;
    } catch {
      // not ready yet
    }
    if (Date.now() > deadline)
      throw new Error(
        `${what} not ready after ${opts.timeoutMs ?? 60_000} ms${opts.proc ? `; see ${opts.proc.logFile}` : ''}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The last lines of a log, for an error message read where the log is gone (a CI run). */
function logTail(file: string | undefined, lines = 20): string {
  if (!file) return '';
  try {
    return `; its last lines:\n${readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')}`;
  } catch {
    return '';
  }
}

export async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  return res.ok;
}

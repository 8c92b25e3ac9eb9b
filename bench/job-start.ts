/**
 * A job's start: the latency of a POST that starts a job (answered 202) next to a bare
 * `client.workflow.start` of the same workflow from the benchmark's own process, in the same run.
 *
 *   npx tsx bench/job-start.ts        (or: npm run bench:job-start)
 *
 * 1. Starts the whole stack on free ports in a temporary data directory (embedded FerretDB,
 *    Temporal, MinIO, our worker and API, as the other benchmarks; MONGODB_URI / TEMPORAL_ADDRESS /
 *    S3_ENDPOINT use running servers instead), with a database of its own, dropped at the end.
 * 2. Makes BENCH_TENANTS tenants (250), each with a key and one product. Requests go to the
 *    tenants in turn: an async CSV start counts the tenant's running jobs (at most 3) and its
 *    starts of the hour (at most 60), and enough tenants keep every start under both limits, so
 *    each one does the whole work of a start that is let through.
 * 3. The job: POST /products/bulk/csv/export `{format: native, selection: selected, productIds:
 *    [its SKU]}` with a fresh Idempotency-Key: the cheapest start that is always a job (a
 *    publication is one per channel at a time, an import needs an upload, a rollback an
 *    operation, a flow reads its selection first). It checks the tenant's job allowance, writes
 *    the job record and starts `csvExportWorkflow` (shared/jobs/jobs.ts, Jobs.start).
 * 4. Baseline: `client.workflow.start('csvExportWorkflow')` on the same task queue with the input
 *    the API gives it and a fresh workflow id (no search attributes, no conflict policy), on a
 *    Temporal client of this process.
 * 5. The worker is stopped while starts are timed: started workflows wait in the task queue, so
 *    no export runs beside the starts on this 2-core machine and both sides start into the same
 *    idle worker pool. Between phases and at the end the workflows of bare starts (no job record:
 *    their exports would only repeat ours) are terminated, and the worker is started again until
 *    every job's workflow has run to its end (the drain, timed).
 * 6. Sequential (BENCH_SEQUENTIAL, 200 a side) and BENCH_IN_FLIGHT (8) in flight (BENCH_CONCURRENT,
 *    400 a side), in alternating blocks of baseline then ours so drift hits both. Before each
 *    phase every key is presented once (a GET), as a steady client's key is known to the API.
 * 7. Where the time goes: BENCH_PROFILE (80) starts of each layer between the two, one at a time,
 *    interleaved: the start as Jobs.start sends it (search attributes, conflict policy FAIL),
 *    Jobs.start (the job record, then that start), CsvJobs.startExport (the tenant's allowance,
 *    then Jobs.start) without and with an Idempotency-Key, and the POST without a key; the
 *    in-process layers on a client with command monitoring, so each database command's time shows.
 * 8. Checks: every POST answered 202; after the last drain every job started answers its status
 *    (GET /products/bulk/csv/export/{jobId}) completed with its one product, every job record is
 *    completed, and every bare start's workflow exists (terminated by the benchmark). Writes
 *    bench/results/job-start.md.
 *
 * Environment: BENCH_TENANTS (250), BENCH_SEQUENTIAL (200), BENCH_CONCURRENT (400),
 * BENCH_IN_FLIGHT (8), BENCH_PROFILE (80), BENCH_WARMUP (20), BENCH_KEEP_DATA=1, BENCH_LOG_LEVEL (warn).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { MongoClient, ObjectId, type CommandStartedEvent, type CommandSucceededEvent } from 'mongodb';
import type { Client } from '@temporalio/client';
import { startStack, type Stack } from '../scripts/stack/stack';
import { Tenancy } from '../shared/auth/tenancy';
import { allCollections } from '../shared/collections';
import { loadConfig } from '../shared/config';
import { mapLimit } from '../shared/concurrency';
import { CsvJobs } from '../shared/csv/async-jobs';
import { csvExport, type ExportInput } from '../shared/csv/messages';
import { connectMongo, ensureIndexes, type Mongo } from '../shared/db/mongo';
import { TenantDb } from '../shared/db/tenant-db';
import { newId } from '../shared/ids';
import { jobs as jobRecords } from '../shared/jobs/collection';
import { Jobs } from '../shared/jobs/jobs';
import { Catalog } from '../shared/products/catalog';
import { createS3Client } from '../shared/s3/client';
import { connectTemporal } from '../shared/temporal/connect';
import { JOB_TYPE, TENANT_ID } from '../shared/temporal/search-attributes';
import { workflowIdFor } from '../shared/temporal/workflow-ids';
import { intEnv, codeVersion } from './support';

const TENANTS = intEnv('BENCH_TENANTS', 250);
const SEQUENTIAL = intEnv('BENCH_SEQUENTIAL', 200);
const CONCURRENT = intEnv('BENCH_CONCURRENT', 400);
const IN_FLIGHT = intEnv('BENCH_IN_FLIGHT', 8);
const PROFILE = intEnv('BENCH_PROFILE', 80);
const WARMUP = intEnv('BENCH_WARMUP', 20);
const KEEP_DATA = process.env.BENCH_KEEP_DATA === '1';
/** Issue 19: a job's start within twice a bare workflow.start. */
const GOAL = 2;
/** Each phase runs in this many alternating blocks of baseline, then ours. */
const BLOCKS = 4;
const DRAIN_TIMEOUT_MS = 15 * 60_000;
const ROOT = resolve(__dirname, '..');
const RESULTS_DIR = join(ROOT, 'bench', 'results');
const FORMAT = 'native';
const JOB_TYPE_NAME = 'csv-export';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { maximumFractionDigits: digits });
const ms = (n: number) => n.toFixed(n < 10 ? 2 : 1);

interface BenchTenant {
  id: string;
  key: string;
  sku: string;
}

// ---------------------------------------------------------------------------------------------
// Latencies and process CPU

interface Stats {
  n: number;
  p50: number;
  p99: number;
  mean: number;
}

function statsOf(latencies: number[]): Stats {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
  return {
    n: sorted.length,
    p50: at(0.5),
    p99: at(0.99),
    mean: sorted.reduce((s, x) => s + x, 0) / Math.max(1, sorted.length),
  };
}

/** CPU ticks (user + system, 10 ms each) a process has used so far; null when /proc cannot tell. */
function cpuTicks(pid: number | null | undefined): number | null {
  if (!pid) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

type Pids = Record<string, number | null | undefined>;

/** What one side of a phase measured, summed over its blocks. */
class Side {
  readonly latencies: number[] = [];
  seconds = 0;
  readonly cpuMs: Record<string, number | null> = {};
  failures: string[] = [];

  /** Runs `n` calls with `inFlight` at once, timing each, and adds the CPU each process spent meanwhile. */
  async run(n: number, inFlight: number, pids: Pids, call: () => Promise<void>): Promise<void> {
    const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuTicks(pid)]));
    const self = process.cpuUsage();
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(inFlight, n) }, async () => {
        while (next < n) {
          next++;
          const t = performance.now();
          try {
            await call();
            this.latencies.push(performance.now() - t);
          } catch (err) {
            this.failures.push(err instanceof Error ? err.message : String(err));
          }
        }
      }),
    );
    this.seconds += (performance.now() - t0) / 1000;
    const mine = process.cpuUsage(self);
    this.add('bench', (mine.user + mine.system) / 1000);
    for (const [k, pid] of Object.entries(pids)) {
      const after = cpuTicks(pid);
      this.add(k, before[k] === null || after === null ? null : (after - before[k]!) * 10);
    }
  }

  private add(k: string, value: number | null): void {
    const had = this.cpuMs[k];
    this.cpuMs[k] = value === null || had === null ? null : (had ?? 0) + value;
  }
}

/**
 * The database commands of a monitored client while `label` is set, timed here from the event of
 * their sending to that of their answer (the driver's own duration is in whole milliseconds), and
 * when the latest answer came.
 */
class CommandLog {
  label: string | null = null;
  lastAnswer: number | null = null;
  private started = new Map<number, { key: string; at: number }>();
  readonly durations = new Map<string, number[]>();

  constructor(client: MongoClient) {
    client.on('commandStarted', (e: CommandStartedEvent) => {
      const target = e.command[e.commandName];
      if (this.label)
        this.started.set(e.requestId, {
          key: `${this.label}\t${typeof target === 'string' ? target : ''}\t${e.commandName}`,
          at: performance.now(),
        });
    });
    client.on('commandSucceeded', (e: CommandSucceededEvent) => {
      const started = this.started.get(e.requestId);
      if (!started) return;
      this.started.delete(e.requestId);
      this.lastAnswer = performance.now();
      this.durations.set(started.key, [...(this.durations.get(started.key) ?? []), this.lastAnswer - started.at]);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The two ways of starting, and the layers between them

interface Started {
  tenant: BenchTenant;
  workflowId: string;
  /** Set when a job record exists (ours and the layers that go through Jobs.start). */
  jobId?: string;
  /** Started through the API: its status is read back through it. */
  viaApi?: boolean;
}

class Starter {
  private turn = 0;
  readonly started: Started[] = [];

  constructor(
    private readonly base: string,
    private readonly tenants: BenchTenant[],
    private readonly temporal: Client,
    private readonly taskQueue: string,
    private readonly csvJobsOf: (tenant: BenchTenant) => CsvJobs,
    private readonly jobs: Jobs,
    private readonly tenantDbOf: (tenant: BenchTenant) => TenantDb,
  ) {}

  /** The tenants in turn: each one's starts stay within its allowance (see the header). */
  private nextTenant(): BenchTenant {
    return this.tenants[this.turn++ % this.tenants.length];
  }

  private inputOf(tenant: BenchTenant, jobId: string): ExportInput {
    // what CsvJobs.startExport hands the workflow (filters undefined, as the API leaves them)
    return { tenantId: tenant.id, jobId, format: FORMAT, selection: 'selected', productIds: [tenant.sku] };
  }

  /** The baseline: a bare start of the same workflow with the same input and a fresh id. */
  bare = async (): Promise<void> => {
    const tenant = this.nextTenant();
    const jobId = newId('csvexp');
    const workflowId = workflowIdFor(tenant.id, jobId);
    await this.temporal.workflow.start(csvExport.name, {
      taskQueue: this.taskQueue,
      workflowId,
      args: [this.inputOf(tenant, jobId)],
    });
    this.started.push({ tenant, workflowId });
  };

  /** The start as Jobs.start sends it: search attributes for the Temporal UI and the conflict policy. */
  asJobsStartSends = async (): Promise<void> => {
    const tenant = this.nextTenant();
    const jobId = newId('csvexp');
    const workflowId = workflowIdFor(tenant.id, jobId);
    await this.temporal.workflow.start(csvExport.name, {
      taskQueue: this.taskQueue,
      workflowId,
      workflowIdConflictPolicy: 'FAIL',
      typedSearchAttributes: [
        { key: TENANT_ID, value: tenant.id },
        { key: JOB_TYPE, value: JOB_TYPE_NAME },
      ],
      args: [this.inputOf(tenant, jobId)],
    });
    this.started.push({ tenant, workflowId });
  };

  /** Jobs.start alone: the job record, then the start (no allowance check, no key). */
  jobsStart = async (): Promise<void> => {
    const tenant = this.nextTenant();
    const { job } = await this.jobs.start(this.tenantDbOf(tenant), {
      type: JOB_TYPE_NAME,
      prefix: 'csvexp',
      workflow: csvExport,
      input: { format: FORMAT, selection: 'selected' },
      workflowInput: (jobId) => this.inputOf(tenant, jobId),
    });
    this.started.push({ tenant, workflowId: job.workflowId, jobId: job._id });
  };

  /** The use case the route calls: the tenant's allowance, then Jobs.start. */
  useCase = (withKey: boolean) => async (): Promise<void> => {
    const tenant = this.nextTenant();
    const { jobId } = await this.csvJobsOf(tenant).startExport({
      format: FORMAT,
      selection: 'selected',
      productIds: [tenant.sku],
      ...(withKey ? { idempotencyKey: randomUUID() } : {}),
    });
    this.started.push({ tenant, workflowId: workflowIdFor(tenant.id, jobId), jobId });
  };

  /** Ours: the POST through the API, 202 with the job. */
  post = (withKey: boolean) => async (): Promise<void> => {
    const tenant = this.nextTenant();
    const res = await fetch(`${this.base}/products/bulk/csv/export`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tenant.key}`,
        'content-type': 'application/json',
        ...(withKey ? { 'idempotency-key': randomUUID() } : {}),
      },
      body: JSON.stringify({ format: FORMAT, selection: 'selected', productIds: [tenant.sku] }),
    });
    const body = (await res.json()) as { jobId?: string };
    if (res.status !== 202 || !body.jobId) throw new Error(`POST ${res.status} ${JSON.stringify(body)}`);
    this.started.push({ tenant, workflowId: workflowIdFor(tenant.id, body.jobId), jobId: body.jobId, viaApi: true });
  };
}

// ---------------------------------------------------------------------------------------------
// The worker, the keys, the checks

/** Stops the worker: workflows started meanwhile wait in the task queue. */
async function stopWorker(stack: Stack): Promise<void> {
  await stack.procs.find((p) => p.name === 'worker')?.stop();
}

/**
 * Terminates the workflows of bare starts (their exports would only repeat ours), then starts the
 * worker and waits until every export workflow has ended; seconds it took.
 */
async function drain(stack: Stack, temporal: Client, bare: Started[]): Promise<number> {
  const t = performance.now();
  await mapLimit(bare, IN_FLIGHT, (s) =>
    temporal.workflow.getHandle(s.workflowId).terminate('bench/job-start.ts: a bare start, measured'),
  );
  await stack.restart('worker');
  const query = `WorkflowType="${csvExport.name}" AND ExecutionStatus="Running"`;
  let zeros = 0;
  for (const until = Date.now() + DRAIN_TIMEOUT_MS; ;) {
    await sleep(500);
    // visibility is written a moment after a state change: two empty answers in a row
    zeros = (await temporal.workflow.count(query)).count === 0 ? zeros + 1 : 0;
    if (zeros >= 2) return (performance.now() - t) / 1000;
    if (Date.now() > until) throw new Error(`workflows still running after ${DRAIN_TIMEOUT_MS / 1000} s`);
  }
}

/** Presents every key once, so the API knows it (as it knows a steady client's key) before a timed phase. */
async function presentKeys(base: string, tenants: BenchTenant[]): Promise<void> {
  await mapLimit(tenants, IN_FLIGHT, async (tenant) => {
    const res = await fetch(`${base}/products/bulk/csv/export/csvexp_none`, {
      headers: { authorization: `Bearer ${tenant.key}` },
    });
    await res.text();
    if (res.status !== 404) throw new Error(`presenting a key: ${res.status}`);
  });
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-job-start-'));
  const loadBefore = loadavg();
  const code = codeVersion();
  const database = `bench_job_start_${Date.now().toString(36)}`;
  let stack: Stack | null = null;
  let mongo: Mongo | null = null;
  let temporal: Client | null = null;
  let monitored: MongoClient | null = null;
  try {
    console.log(
      `Job start benchmark; machine ${cpus().length} cores, load ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`,
    );
    stack = await startStack({
      dataDir,
      ports: 'free',
      withApp: true,
      env: { ...process.env, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', MONGODB_DB: database },
      log: (l) => console.log(`  ${l}`),
    });
    const base = stack.apiUrl!;
    const config = loadConfig(stack.env);
    mongo = await connectMongo(config.mongodbUri, database);
    await ensureIndexes(mongo.db, allCollections);
    temporal = await connectTemporal(config.temporalAddress, config.temporalNamespace);
    const s3 = createS3Client(config.s3);
    const pids: Pids = {
      api: stack.procs.find((p) => p.name === 'api')?.child.pid,
      temporal: stack.procs.find((p) => p.name === 'temporal')?.child.pid,
      ferretdb: stack.procs.find((p) => p.name === 'ferretdb')?.child.pid,
    };

    // tenants, keys and one product each
    let t = performance.now();
    const tenancy = new Tenancy(mongo.db);
    const db = mongo.db;
    const tenants = await mapLimit(
      Array.from({ length: TENANTS }, (_, i) => i),
      4,
      async (i) => {
        const tenant = await tenancy.createTenant(`Job start benchmark ${i}`);
        const { key } = await tenancy.issueKey(tenant._id, ['products:read', 'products:export'], 'bench');
        const sku = `JOB-${String(i).padStart(4, '0')}`;
        const catalog = new Catalog(new TenantDb(db, tenant._id));
        const [stored] = await catalog.insertMany([
          {
            _id: new ObjectId(),
            product: await catalog.prepare({ sku, title: { value: `Product ${i}` }, price: 10, status: 'active' }),
          },
        ]);
        if (!stored || !('_id' in stored)) throw new Error(`seeding ${sku}: ${String(stored)}`);
        return { id: tenant._id, key, sku };
      },
    );
    console.log(`${TENANTS} tenants with a key and a product in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    const jobs = new Jobs(temporal, config.taskQueue);
    // the in-process layers use a client of their own that reports each command's duration
    monitored = new MongoClient(config.mongodbUri, { monitorCommands: true });
    await monitored.connect();
    const commands = new CommandLog(monitored);
    const monitoredDb = monitored.db(database);
    const tenantDbOf = (tenant: BenchTenant) => new TenantDb(monitoredDb, tenant.id);
    const starter = new Starter(
      base,
      tenants,
      temporal,
      config.taskQueue,
      (tenant) =>
        new CsvJobs({ tenantDb: tenantDbOf(tenant), s3, bucket: config.s3.bucket, jobs, temporal: temporal! }),
      jobs,
      tenantDbOf,
    );
    const ours = starter.post(true);
    const drains: { after: string; seconds: number; jobs: number; terminated: number }[] = [];
    let drained = 0;
    const drainNow = async (after: string) => {
      const since = starter.started.slice(drained);
      drained = starter.started.length;
      const bare = since.filter((s) => !s.jobId);
      const seconds = await drain(stack!, temporal!, bare);
      drains.push({ after, seconds, jobs: since.length - bare.length, terminated: bare.length });
      console.log(
        `  after ${after}: ${bare.length} bare starts terminated, ${since.length - bare.length} jobs run to their end in ${seconds.toFixed(1)} s`,
      );
    };

    await stopWorker(stack);
    await presentKeys(base, tenants);
    // warm-up, untimed: connections, JIT, the first of each kind
    const warm = new Side();
    await warm.run(WARMUP, 1, {}, starter.bare);
    await warm.run(WARMUP, 1, {}, ours);
    if (warm.failures.length) throw new Error(`warm-up failed: ${warm.failures[0]}`);

    const phase = async (label: string, n: number, inFlight: number) => {
      const baseline = new Side();
      const our = new Side();
      await presentKeys(base, tenants);
      for (let b = 0; b < BLOCKS; b++) {
        const size = Math.floor(n / BLOCKS) + (b < n % BLOCKS ? 1 : 0);
        await baseline.run(size, inFlight, pids, starter.bare);
        await our.run(size, inFlight, pids, ours);
      }
      const [bs, os] = [statsOf(baseline.latencies), statsOf(our.latencies)];
      console.log(
        `${label}: baseline p50 ${ms(bs.p50)} ms, ours p50 ${ms(os.p50)} ms: ${(os.p50 / bs.p50).toFixed(2)}×` +
          (our.failures.length + baseline.failures.length
            ? ` (${our.failures.length} + ${baseline.failures.length} failed)`
            : ''),
      );
      return { label, inFlight, baseline, ours: our };
    };

    const sequential = await phase('one at a time', SEQUENTIAL, 1);
    await drainNow('one at a time');
    await stopWorker(stack);
    const concurrent = await phase(`${IN_FLIGHT} in flight`, CONCURRENT, IN_FLIGHT);
    await drainNow(`${IN_FLIGHT} in flight`);
    await stopWorker(stack);

    // the layers between a bare start and ours, one at a time, interleaved sample by sample
    const layers = [
      { name: 'bare `workflow.start` (the baseline)', call: starter.bare },
      {
        name: '+ search attributes and conflict policy FAIL (the start Jobs.start sends)',
        call: starter.asJobsStartSends,
      },
      { name: '+ the job record (`Jobs.start`, in this process)', call: starter.jobsStart },
      { name: '+ the allowance check (`CsvJobs.startExport`, no key)', call: starter.useCase(false) },
      { name: '+ an Idempotency-Key (`CsvJobs.startExport`, fresh key)', call: starter.useCase(true) },
      { name: '+ HTTP and the API (POST, no key)', call: starter.post(false) },
      { name: '+ HTTP and the API (POST, fresh key: ours)', call: ours },
    ].map((l) => ({ ...l, side: new Side() }));
    await presentKeys(base, tenants);
    // an in-process start does all its database work before it starts the workflow: the last
    // answer splits its time into the two
    const split = new Map<string, { db: number[]; start: number[] }>();
    for (let i = 0; i < PROFILE; i++)
      for (const l of layers) {
        commands.label = l.name;
        commands.lastAnswer = null;
        await l.side.run(1, 1, pids, async () => {
          const t0 = performance.now();
          await l.call();
          const t1 = performance.now();
          if (commands.lastAnswer === null) return;
          const parts = split.get(l.name) ?? { db: [], start: [] };
          parts.db.push(commands.lastAnswer - t0);
          parts.start.push(t1 - commands.lastAnswer);
          split.set(l.name, parts);
        });
        commands.label = null;
      }
    await drainNow('the layers');

    // checks: every job answers its status, completed with its product; every workflow completed
    t = performance.now();
    const viaApi = starter.started.filter((s) => s.viaApi);
    const statuses = await mapLimit(viaApi, IN_FLIGHT, async (s) => {
      const res = await fetch(`${base}/products/bulk/csv/export/${s.jobId}`, {
        headers: { authorization: `Bearer ${s.tenant.key}` },
      });
      const body = (await res.json()) as { status?: string; count?: number };
      return res.status === 200 && body.status === 'completed' && body.count === 1;
    });
    const withRecord = starter.started.filter((s) => s.jobId).length;
    const records = await db.collection(jobRecords.name).countDocuments({ type: JOB_TYPE_NAME });
    const completedRecords = await db
      .collection(jobRecords.name)
      .countDocuments({ type: JOB_TYPE_NAME, status: 'completed' });
    const bare = starter.started.filter((s) => !s.jobId);
    const described = await mapLimit(bare, IN_FLIGHT, async (s) => {
      try {
        return (await temporal!.workflow.getHandle(s.workflowId).describe()).status.name;
      } catch (err) {
        return err instanceof Error ? err.name : 'error';
      }
    });
    console.log(`checked in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const postFailures = [sequential, concurrent].flatMap((p) => p.ours.failures);
    const baseFailures = [sequential, concurrent].flatMap((p) => p.baseline.failures);
    const layerFailures = layers.flatMap((l) => l.side.failures);
    const checks: [string, boolean][] = [
      [
        `every timed POST answered 202 with a job (${fmt(SEQUENTIAL + CONCURRENT - postFailures.length)} of ${fmt(SEQUENTIAL + CONCURRENT)})${postFailures.length ? `; first failure: ${postFailures[0]}` : ''}`,
        postFailures.length === 0,
      ],
      [
        `every timed bare start returned (${fmt(SEQUENTIAL + CONCURRENT - baseFailures.length)} of ${fmt(SEQUENTIAL + CONCURRENT)})${baseFailures.length ? `; first failure: ${baseFailures[0]}` : ''}`,
        baseFailures.length === 0,
      ],
      [
        `every layer's start succeeded${layerFailures.length ? ` (${layerFailures.length} failed; first: ${layerFailures[0]})` : ''}`,
        layerFailures.length === 0,
      ],
      [
        `every job started through the API answers GET /products/bulk/csv/export/{jobId} completed with its one product (${fmt(statuses.filter(Boolean).length)} of ${fmt(viaApi.length)})`,
        statuses.every(Boolean),
      ],
      [
        `one job record per job started, every one completed (${fmt(completedRecords)} completed of ${fmt(records)} records, ${fmt(withRecord)} jobs started)`,
        records === withRecord && completedRecords === withRecord,
      ],
      [
        `every bare start's workflow exists, terminated by the benchmark (${fmt(described.filter((s) => s === 'TERMINATED').length)} of ${fmt(bare.length)})`,
        described.every((s) => s === 'TERMINATED'),
      ],
    ];
    for (const [what, ok] of checks) console.log(`${ok ? 'ok' : 'FAILED'}: ${what}`);

    // the report
    const date = new Date().toISOString().slice(0, 10);
    const row = (label: string, side: Side, ratio: string) => {
      const s = statsOf(side.latencies);
      return `| ${label} | ${fmt(s.n, 0)} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.mean)} | ${fmt(s.n / side.seconds)} | ${ratio} |`;
    };
    const ratioOf = (p: typeof sequential) => statsOf(p.ours.latencies).p50 / statsOf(p.baseline.latencies).p50;
    const verdict = (r: number) => `**${r.toFixed(2)}** ${r <= GOAL ? 'PASS' : 'ABOVE'}`;
    const cpuPer = (side: Side, k: string) => {
      const v = side.cpuMs[k];
      return v == null ? '—' : ms(v / Math.max(1, side.latencies.length));
    };
    const cpuRow = (label: string, side: Side) =>
      `| ${label} | ${cpuPer(side, 'bench')} | ${cpuPer(side, 'api')} | ${cpuPer(side, 'ferretdb')} | ${cpuPer(side, 'temporal')} |`;
    const layerStats = layers.map((l) => statsOf(l.side.latencies));
    const lines = [
      `# A job's start (POST → 202) vs a bare workflow.start (${date})`,
      '',
      '```sh',
      `BENCH_TENANTS=${TENANTS} BENCH_SEQUENTIAL=${SEQUENTIAL} BENCH_CONCURRENT=${CONCURRENT} BENCH_IN_FLIGHT=${IN_FLIGHT} BENCH_PROFILE=${PROFILE} npx tsx bench/job-start.ts`,
      '```',
      '',
      `- code: ${code}`,
      `- machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadavg()
        .map((l) => l.toFixed(2))
        .join(
          ' ',
        )} (shared with other work); ${process.env.MONGODB_URI ? 'a running FerretDB (MONGODB_URI)' : 'embedded FerretDB'}, embedded Temporal dev server (SQLite)`,
      `- ours: \`POST /products/bulk/csv/export {format: "${FORMAT}", selection: "selected", productIds: [<the tenant's SKU>]}\` with a fresh Idempotency-Key, answered 202 \`{jobId}\`: the tenant's async CSV allowance (one read of its recent jobs), the job record (a repeated key answered by its unique index), then \`csvExportWorkflow\` started with search attributes and conflict policy FAIL`,
      `- baseline: \`client.workflow.start('${csvExport.name}', {taskQueue, workflowId, args: [the same input]})\` on a Temporal client of the benchmark's process, a fresh workflow id each`,
      `- ${TENANTS} tenants, one key and one product each, taken in turn (each start stays within the tenant's allowance: 3 running, 60 an hour); every key presented to the API once before each phase`,
      `- the worker stopped while starts are timed (workflows wait in the task queue), then started again until every workflow ended; ${BLOCKS} alternating blocks of baseline then ours per phase; latency from the call to its answer, in the benchmark's process`,
      '',
      '| phase | side | starts | p50 ms | p99 ms | mean ms | starts/s | ours p50 / baseline p50 |',
      '|---|---|---:|---:|---:|---:|---:|---:|',
      ...[sequential, concurrent].flatMap((p) => [
        row(`${p.label} | baseline`, p.baseline, ''),
        row(`${p.label} | ours`, p.ours, `${verdict(ratioOf(p))} (goal ≤ ${GOAL})`),
      ]),
      '',
      ...checks.map(([what, ok]) => `- ${ok ? 'ok' : 'FAILED'}: ${what}`),
      '',
      '## Where the time goes',
      '',
      `Each layer adds one thing to the one above; ${PROFILE} starts each, one at a time, interleaved start by start (so drift hits every layer alike), the worker stopped:`,
      '',
      '| layer | p50 ms | mean ms | p99 ms | added: median of the paired differences, ms | added: p50 − p50 above, ms |',
      '|---|---:|---:|---:|---:|---:|',
      ...layers.map((l, i) => {
        const s = layerStats[i];
        const prev = layers[i - 1];
        // start i of a layer ran right after start i of the layer above: their difference is what it adds
        const paired =
          prev && prev.side.latencies.length === l.side.latencies.length
            ? statsOf(l.side.latencies.map((x, j) => x - prev.side.latencies[j])).p50
            : null;
        return `| ${l.name} | ${ms(s.p50)} | ${ms(s.mean)} | ${ms(s.p99)} | ${paired === null ? (prev ? '—' : '') : ms(paired)} | ${prev ? ms(s.p50 - layerStats[i - 1].p50) : ''} |`;
      }),
      '',
      'The in-process layers that write a job record do all their database work before they start the workflow; the answer to their last command splits each start in two (p50 / mean, ms):',
      '',
      '| layer | database, until the last answer | then the workflow start |',
      '|---|---:|---:|',
      ...[...split].map(([layer, parts]) => {
        const [d, st] = [statsOf(parts.db), statsOf(parts.start)];
        return `| ${layer} | ${ms(d.p50)} / ${ms(d.mean)} | ${ms(st.p50)} / ${ms(st.mean)} |`;
      }),
      '',
      'Their database commands (a client with command monitoring, each timed from its sending to its answer):',
      '',
      '| layer | collection | command | per start | p50 ms | mean ms |',
      '|---|---|---|---:|---:|---:|',
      ...[...commands.durations].map(([key, d]) => {
        const [layer, collection, command] = key.split('\t');
        const st = statsOf(d);
        return `| ${layer} | ${collection} | ${command} | ${(d.length / PROFILE).toFixed(2)} | ${ms(st.p50)} | ${ms(st.mean)} |`;
      }),
      '',
      'CPU per start (ms; /proc, whole processes, over the timed blocks):',
      '',
      '| phase, side | benchmark | API | FerretDB | Temporal |',
      '|---|---:|---:|---:|---:|',
      ...[sequential, concurrent].flatMap((p) => [
        cpuRow(`${p.label}, baseline`, p.baseline),
        cpuRow(`${p.label}, ours`, p.ours),
      ]),
      '',
      `Drains (bare starts terminated, then the worker started again until every job's export ended): ${drains.map((d) => `after ${d.after}, ${d.terminated} terminated and ${d.jobs} jobs in ${d.seconds.toFixed(1)} s`).join('; ')}.`,
    ];
    const report = lines.join('\n') + '\n';
    console.log('\n' + report);
    mkdirSync(RESULTS_DIR, { recursive: true });
    // one file per benchmark, the newest run (git keeps the earlier ones)
    const file = join(RESULTS_DIR, 'job-start.md');
    writeFileSync(file, report);
    console.log(`Written to ${file}`);
    s3.destroy();
    return checks.every(([, ok]) => ok) ? 0 : 1;
  } finally {
    if (!KEEP_DATA) await mongo?.db.dropDatabase().catch(() => undefined);
    await mongo?.client.close().catch(() => undefined);
    await monitored?.close().catch(() => undefined);
    await temporal?.connection.close().catch(() => undefined);
    await stack?.stop().catch((err) => console.error('stopping the stack:', err));
    if (KEEP_DATA) console.log(`data kept in ${dataDir}`);
    else rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);

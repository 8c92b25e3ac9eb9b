import { HeadBucketCommand } from '@aws-sdk/client-s3';
import type { AppDeps } from '../context';

interface Check {
  ok: boolean;
  latencyMs: number;
  error?: string;
  [extra: string]: unknown;
}

async function timed(fn: () => Promise<Record<string, unknown> | void>): Promise<Check> {
  const started = Date.now();
  try {
    const extra = (await withTimeout(fn(), 3000)) ?? {};
    return { ok: true, latencyMs: Date.now() - started, ...extra };
  } catch (err) {
    return { ok: false, latencyMs: Date.now() - started, error: (err as Error).message };
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
    }),
  ]);
}

/** Each dependency answered on its own, so an operator sees which one is down. */
export async function checkHealth(deps: AppDeps) {
  const { db, temporal, s3, config } = deps;
  const [mongodb, temporalCheck, worker, objectStore] = await Promise.all([
    timed(async () => {
      await db.command({ ping: 1 });
    }),
    timed(async () => {
      await temporal.workflowService.getSystemInfo({});
      return { namespace: config.temporalNamespace };
    }),
    timed(async () => {
      const res = await temporal.workflowService.describeTaskQueue({
        namespace: config.temporalNamespace,
        taskQueue: { name: config.taskQueue, kind: 1 },
        taskQueueType: 1, // workflow tasks: a live worker polls these
      });
      const pollers = res.pollers?.length ?? 0;
      if (pollers === 0) throw new Error(`no worker polls task queue ${config.taskQueue}`);
      return { taskQueue: config.taskQueue, pollers };
    }),
    timed(async () => {
      await s3.send(new HeadBucketCommand({ Bucket: config.s3.bucket }));
      return { bucket: config.s3.bucket };
    }),
  ]);
  const checks = { mongodb, temporal: temporalCheck, worker, objectStore };
  const ok = Object.values(checks).every((c) => c.ok);
  return { ok, body: { status: ok ? 'ok' : 'degraded', checks } };
}

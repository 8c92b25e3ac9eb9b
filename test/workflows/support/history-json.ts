import { dirname } from 'node:path';
import * as proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root';

export type History = proto.temporal.api.history.v1.IHistory;

/*
 * The canonical proto JSON of a history: what `temporal workflow show --output json` and the
 * Temporal UI's download write, so a history taken from any environment can be dropped in
 * histories/. @temporalio/common's historyToJSON / historyFromJSON would do this, but they call
 * the protobufjs copy of @temporalio/common on types built by the copy of @temporalio/proto; npm
 * installs the two separately here (a protobufjs 7 is hoisted for @grpc/proto-loader), and
 * protobufjs then refuses the type ("type must be a Type"). So we use the copy the types were
 * built with, resolved from @temporalio/proto, which is the right one whatever npm hoists.
 */
interface ProtoJson {
  toJson(type: unknown, message: unknown): unknown;
  fromJson(type: unknown, json: unknown, options: { ignoreUnknownFields: boolean }): unknown;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports -- resolved at run time from @temporalio/proto's own dependencies
const protojson = require(
  require.resolve('protobufjs/ext/protojson', { paths: [dirname(require.resolve('@temporalio/proto'))] }),
) as ProtoJson;
const historyType = (patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown }).lookupType(
  'temporal.api.history.v1.History',
);

export function historyToJson(history: History): string {
  const message = proto.temporal.api.history.v1.History.fromObject(history);
  return `${JSON.stringify(protojson.toJson(historyType, message), null, 2)}\n`;
}

/** A history object the replayer takes as it is (event ids as Longs, not the strings of the JSON). */
export function historyFromJson(text: string): History {
  return protojson.fromJson(historyType, JSON.parse(text), { ignoreUnknownFields: true }) as History;
}

const RUN_ID_KEYS = new Set(['originalExecutionRunId', 'firstExecutionRunId', 'newExecutionRunId', 'runId']);
const BASE_TIME = Date.UTC(2000, 0, 1);

/**
 * Replaces what differs between two recordings of the same run and that replay does not read:
 * event times and task ids (made from the event id), run ids, worker identities, request ids,
 * task queue names, build ids, stack traces, history sizes, the order of the SDK's flag sets. So
 * the diff of a deliberate re-recording shows mostly the events that changed. What remains
 * between two recordings of unchanged code: payloads (kept as they are; a transfer's carry the
 * workflow's clock) and the interleaving of activities that run at once (the import's chunks)
 * with the workflow tasks.
 */
export function normalizeHistoryJson(json: string): string {
  const history = JSON.parse(json) as { events: Record<string, unknown>[] };
  const runIds = new Map<string, string>();
  const runIdOf = (id: string) => {
    if (!runIds.has(id)) runIds.set(id, fixedUuid(runIds.size + 1));
    return runIds.get(id)!;
  };
  const walk = (value: unknown, eventId: number): unknown => {
    if (Array.isArray(value)) return value.map((v) => walk(v, eventId));
    if (!value || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      if (RUN_ID_KEYS.has(key) && typeof v === 'string') out[key] = runIdOf(v);
      else if (key === 'identity') out[key] = 'workflow-histories';
      else if (key === 'requestId') out[key] = fixedUuid(eventId);
      else if (key === 'buildId') out[key] = 'recorded';
      else if (key === 'stackTrace') out[key] = '';
      // varies by a few bytes with the lengths of the values above; a workflow could read it
      // (workflowInfo().historySize) but none of ours does, and these histories are tiny anyway
      else if (key === 'historySizeBytes') out[key] = '0';
      // sets, written in whatever order the worker held them
      else if ((key === 'coreUsedFlags' || key === 'langUsedFlags') && Array.isArray(v))
        out[key] = [...(v as number[])].sort((a, b) => a - b);
      else if (key === 'taskQueue' && v && typeof v === 'object')
        out[key] = normalTaskQueue(v as Record<string, unknown>);
      else out[key] = walk(v, eventId);
    }
    return out;
  };
  const events = history.events.map((e) => {
    const eventId = Number(e.eventId);
    const fixed = walk(e, eventId) as Record<string, unknown>;
    fixed.eventTime = new Date(BASE_TIME + eventId * 1000).toISOString().replace('.000Z', 'Z');
    fixed.taskId = String(eventId);
    return fixed;
  });
  return `${JSON.stringify({ ...history, events }, null, 2)}\n`;
}

function normalTaskQueue(q: Record<string, unknown>): Record<string, unknown> {
  const sticky = q.kind === 'TASK_QUEUE_KIND_STICKY';
  return {
    ...q,
    name: sticky ? 'workflow-histories-sticky' : 'workflow-histories',
    ...(q.normalName ? { normalName: 'workflow-histories' } : {}),
  };
}

function fixedUuid(n: number): string {
  return `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
}

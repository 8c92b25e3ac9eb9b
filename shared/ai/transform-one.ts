import { compile, inputFailures, type JsonSchema } from '../validation';
import type { TokenBudget } from './budget';
import {
  buildMessages,
  keyToPath,
  modelSchema,
  repairMessages,
  responseSchema,
  RESPONSE_SCHEMA_NAME,
  type FieldSpec,
} from './prompt';
import type { AiErrorCode, ChatClient, ChatMessage, ChatResult, TokenUsage } from './provider';
import { estimateTextTokens, estimateTokens } from './tokens';

export type { FieldSpec } from './prompt';

export type TransformResult =
  | { ok: true; values: Record<string, unknown>; usage: TokenUsage }
  | { ok: false; code: AiErrorCode; message: string; retryable: boolean; retryAfterMs?: number; usage?: TokenUsage };

export interface TransformArgs {
  client: ChatClient;
  budget: TokenBudget;
  /** Unique per call and stable across retries of it (e.g. job + product + attempt); no dots. */
  reservationId: string;
  prompt: string;
  fields: FieldSpec[];
  /** Product data the model may read: path → value. */
  source: Record<string, unknown>;
  /** Current values of the fields to write: path → value. */
  current: Record<string, unknown>;
}

/**
 * One product through the model: the call is paid for from the tenant's budget before it is made
 * and charged what it used after; an answer that is not JSON gets one repair call; an answer that
 * is JSON but off the schema is refused, naming the field. Answers a new value for every field.
 */
export async function transformOne(args: TransformArgs): Promise<TransformResult> {
  const shapes = schemasFor(args.fields);
  const messages = buildMessages(args);
  const first = await paidCall(args, args.reservationId, messages, shapes.model);
  if (!first.ok) return first;
  let usage = first.usage;
  let parsed = parseAnswer(first.content);
  if (parsed === undefined) {
    const second = await paidCall(
      args,
      `${args.reservationId}-r`,
      repairMessages(messages, first.content),
      shapes.model,
    );
    usage = sum(usage, second.usage);
    if (!second.ok) return { ...second, usage };
    parsed = parseAnswer(second.content);
    if (parsed === undefined)
      return {
        ok: false,
        code: 'PARSE_ERROR',
        message: 'The model answered twice without valid JSON',
        retryable: false,
        usage,
      };
  }
  // the validator fills defaults (useDefaults): it checks a copy, and the values are the model's own
  const validate = compile(shapes.full);
  if (!validate(structuredClone(parsed))) {
    const [failure] = inputFailures(validate.errors);
    const message = failure
      ? `The model's answer for ${pathOf(failure.field, shapes.paths)} ${failure.message}`
      : "The model's answer does not match the fields";
    return { ok: false, code: 'INVALID_RESPONSE', message, retryable: false, usage };
  }
  const answer = parsed as Record<string, unknown>;
  const values = Object.fromEntries([...shapes.paths].map(([key, path]) => [path, answer[key]]));
  return { ok: true, values, usage };
}

/** What a call reserves: the estimated prompt (messages and schema) plus the most the model may answer. */
function callTokens(messages: ChatMessage[], schema: JsonSchema, maxOutputTokens: number): number {
  return estimateTokens(messages) + estimateTextTokens(JSON.stringify(schema)) + maxOutputTokens;
}

/**
 * The least a transform's call reserves: the call for a product with no data at all (or, given
 * `data`, the first call for that product's data). A budget that cannot pay the former cannot pay
 * for any product of the transform.
 */
export function leastCallTokens(
  prompt: string,
  fields: FieldSpec[],
  maxOutputTokens: number,
  data: { source: Record<string, unknown>; current: Record<string, unknown> } = { source: {}, current: {} },
): number {
  return callTokens(buildMessages({ prompt, fields, ...data }), schemasFor(fields).model, maxOutputTokens);
}

/** Reserves the most the call may cost, makes it, then charges what it used or frees the reservation. */
async function paidCall(
  args: TransformArgs,
  reservationId: string,
  messages: ChatMessage[],
  schema: JsonSchema,
): Promise<ChatResult> {
  const { client, budget } = args;
  const tokens = callTokens(messages, schema, client.maxOutputTokens);
  if (!(await budget.reserve(reservationId, tokens)))
    return {
      ok: false,
      code: 'BUDGET_EXCEEDED',
      message: "The tenant's daily AI token budget cannot cover this call; it resets at local midnight",
      retryable: true,
    };
  let result: ChatResult;
  try {
    result = await client.complete({ messages, schemaName: RESPONSE_SCHEMA_NAME, schema });
  } catch (err) {
    await budget.release(reservationId); // complete() does not throw; should it, the reservation must not stay open
    throw err;
  }
  // a call that reached the model is charged what the provider reports, even when it failed
  if (result.usage) await budget.settle(reservationId, result.usage.totalTokens);
  else await budget.release(reservationId);
  return result;
}

/**
 * The answer as JSON, or undefined when it is not JSON. A reply wrapped in a ```json fence (some
 * local models do it despite the schema) is read without a repair call.
 */
function parseAnswer(content: string): unknown {
  const text = content
    .trim()
    .replace(/^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i, '$1')
    .trim();
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function sum(a: TokenUsage, b: TokenUsage | undefined): TokenUsage {
  if (!b) return a;
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}

/** `title__value.0` (an ajv field of the answer) → `title.value.0` (the product's path). */
function pathOf(field: string, paths: Map<string, string>): string {
  const [key, ...rest] = field.split('.');
  return [paths.get(key) ?? key, ...rest].join('.');
}

interface Shapes {
  full: JsonSchema;
  model: JsonSchema;
  paths: Map<string, string>;
}

/**
 * The schemas of one set of fields, made once per process: ajv keeps every schema object it
 * compiles for good, so a new object per product would grow its cache with every call. Keyed by
 * the fields' JSON, not their identity, so fields rebuilt per call still find theirs; the sets
 * are the few combinations of product fields merchants pick.
 */
const shapesByFields = new Map<string, Shapes>();

function schemasFor(fields: FieldSpec[]): Shapes {
  if (!fields.length) throw new Error('transformOne needs at least one field');
  const key = JSON.stringify(fields);
  let shapes = shapesByFields.get(key);
  if (!shapes) {
    shapes = { full: responseSchema(fields), model: modelSchema(fields), paths: keyToPath(fields) };
    shapesByFields.set(key, shapes);
  }
  return shapes;
}

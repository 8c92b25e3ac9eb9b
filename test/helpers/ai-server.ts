import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fieldKey, PRODUCT_DATA_HEADER, type ProductData } from '../../shared/ai/prompt';

/**
 * An AI provider for tests: a real HTTP server speaking the OpenAI chat-completions protocol at
 * `<url>/chat/completions`, the only stand-in the AI tests use (the third party; our database and
 * budget are real). By default it answers every request with a completion whose content is JSON
 * matching the request's schema, computed from the request alone; `script(fn)` makes it answer
 * each request as `fn` says (errors, throttling, slow or malformed answers), falling back to the
 * default where `fn` returns undefined.
 */

export interface ChatRequestBody {
  model: string;
  messages: { role: string; content: string }[];
  temperature?: number;
  max_tokens?: number;
  response_format?: { type: string; json_schema?: { name: string; strict?: boolean; schema: Schema } };
  [more: string]: unknown;
}

export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/chat/completions?api-version=…`. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (a body that is not JSON is answered 400 and not recorded). */
  body: ChatRequestBody;
  at: number;
}

export interface ProviderUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** How to answer one request; every field optional, the rest as by default. */
export interface ResponseSpec {
  status?: number;
  headers?: Record<string, string>;
  /** Waits this long before answering (a slow provider). */
  delayMs?: number;
  /** The message content; default: JSON computed from the request's schema. */
  content?: string | null;
  /** Default 'stop'. */
  finishReason?: string | null;
  refusal?: string;
  /** null: the answer carries no usage block. Default: about a token per 4 characters. */
  usage?: ProviderUsage | null;
  /** An OpenAI error body `{error: {...}}`; the status defaults to 400. */
  error?: { message: string; type?: string; code?: string | null; param?: string | null };
  /** This JSON as the whole body, instead of a chat completion. */
  body?: unknown;
  /** This text as the whole body (not JSON). */
  rawBody?: string;
  /** Drops the connection without answering (a network failure). */
  destroy?: boolean;
}

export type Responder = (
  body: ChatRequestBody,
  index: number,
) => ResponseSpec | undefined | Promise<ResponseSpec | undefined>;

export interface AiServer {
  /** The base URL a client is configured with, `/v1` included. */
  url: string;
  requests: RecordedRequest[];
  script(fn: Responder | null): void;
  close(): Promise<void>;
}

type Schema = Record<string, unknown>;

/** Starts the fake provider on a free port; with `apiKey`, requests without it get 401 as from OpenAI. */
export async function startAiServer(options: { apiKey?: string; apiKeyHeader?: string } = {}): Promise<AiServer> {
  const requests: RecordedRequest[] = [];
  const waits = new Set<() => void>();
  let responder: Responder | null = null;

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'POST' || path !== '/v1/chat/completions')
      return send(res, 404, openAiError(`Unknown request ${req.method} ${path}`, 'invalid_request_error'));
    let body: ChatRequestBody;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(res, 400, openAiError('We could not parse the JSON body of your request.', 'invalid_request_error'));
    }
    requests.push({ method: req.method, url: req.url ?? '', headers: req.headers, body, at: Date.now() });
    if (options.apiKey && !keyAccepted(req.headers, options.apiKey, options.apiKeyHeader))
      return send(res, 401, openAiError('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'));

    const spec = (responder && (await responder(body, requests.length - 1))) || {};
    if (spec.delayMs) await new Promise<void>((go) => pause(go, spec.delayMs!));
    if (spec.destroy) return req.socket.destroy();
    if (spec.rawBody !== undefined) return send(res, spec.status ?? 200, spec.rawBody, spec.headers);
    if (spec.body !== undefined) return send(res, spec.status ?? 200, spec.body, spec.headers);
    if (spec.error)
      return send(res, spec.status ?? 400, { error: { type: null, code: null, ...spec.error } }, spec.headers);
    if (spec.status && spec.status !== 200) {
      const [message, type] =
        spec.status === 429
          ? ['Rate limit reached for requests', 'requests']
          : [`Status ${spec.status}`, 'server_error'];
      return send(res, spec.status, openAiError(message, type), spec.headers);
    }
    send(res, 200, completion(body, spec), spec.headers);
  };

  // a pending delay ends at close, so a test that timed out its client leaves no timer behind
  const pause = (go: () => void, ms: number) => {
    const done = () => {
      clearTimeout(timer);
      waits.delete(done);
      go();
    };
    const timer = setTimeout(done, ms);
    waits.add(done);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => send(res, 500, openAiError(String(err), 'server_error')));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    script(fn) {
      responder = fn;
    },
    async close() {
      for (const done of [...waits]) done();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function keyAccepted(headers: IncomingHttpHeaders, key: string, header = 'authorization'): boolean {
  const name = header.toLowerCase();
  const got = headers[name];
  return name === 'authorization' ? got === `Bearer ${key}` : got === key;
}

function openAiError(message: string, type: string, code: string | null = null) {
  return { error: { message, type, param: null, code } };
}

/** A chat completion answering `body` as `spec` says. */
function completion(body: ChatRequestBody, spec: ResponseSpec) {
  const content = spec.content !== undefined ? spec.content : JSON.stringify(defaultAnswer(body));
  const promptChars = body.messages.reduce((n, m) => n + m.content.length, 0);
  const completionTokens = Math.ceil((content ?? '').length / 4);
  const promptTokens = Math.ceil(promptChars / 4);
  const usage =
    spec.usage === null
      ? undefined
      : (spec.usage ?? {
          prompt_tokens: promptTokens,
          completion_tokens: completionTokens,
          total_tokens: promptTokens + completionTokens,
        });
  return {
    id: `chatcmpl-${Date.now().toString(36)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: spec.refusal ?? null },
        finish_reason: spec.finishReason !== undefined ? spec.finishReason : 'stop',
      },
    ],
    ...(usage ? { usage } : {}),
  };
}

/** The product data message's JSON, if the request has one. */
export function productDataOf(body: ChatRequestBody): ProductData | undefined {
  const msg = body.messages.find((m) => m.role === 'user' && m.content.startsWith(PRODUCT_DATA_HEADER));
  return msg ? (JSON.parse(msg.content.slice(PRODUCT_DATA_HEADER.length)) as ProductData) : undefined;
}

/**
 * The default answer: for each property of the response schema, a value derived from the field's
 * current value in the product data (`title__value` ↔ `current['title.value']`): a string gets
 * " (AI)" appended (or is "AI text"), a list of strings gets "ai", numbers, booleans and enums
 * stay as they are.
 */
export function defaultAnswer(body: ChatRequestBody): Record<string, unknown> {
  const schema = body.response_format?.json_schema?.schema ?? {};
  const current = new Map(Object.entries(productDataOf(body)?.current ?? {}).map(([p, v]) => [fieldKey(p), v]));
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  return Object.fromEntries(Object.entries(props).map(([key, s]) => [key, valueFor(s, current.get(key))]));
}

function valueFor(schema: Schema, current: unknown): unknown {
  const types = ([] as unknown[]).concat(schema.type ?? []);
  if (Array.isArray(schema.enum))
    return schema.enum.includes(current as never) ? current : (schema.enum as unknown[])[0];
  if (types.includes('string')) return typeof current === 'string' && current ? `${current} (AI)` : 'AI text';
  if (types.includes('array')) {
    const items = (schema.items ?? {}) as Schema;
    const list = Array.isArray(current) ? current : [];
    return ([] as unknown[]).concat(items.type ?? []).includes('string') ? [...list, 'ai'] : list;
  }
  if (types.includes('number') || types.includes('integer')) return typeof current === 'number' ? current : 0;
  if (types.includes('boolean')) return typeof current === 'boolean' ? current : false;
  if (types.includes('object')) {
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    const cur = (current ?? {}) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(props).map(([k, s]) => [k, valueFor(s, cur[k])]));
  }
  return null;
}

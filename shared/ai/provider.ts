import type { JsonSchema } from '../validation';
import { estimateTextTokens, estimateTokens } from './tokens';

/**
 * A client for the OpenAI chat-completions protocol, and nothing beyond it: OpenAI, Azure OpenAI
 * (its v1 path), vLLM, Ollama (/v1) and LiteLLM all answer `POST <base>/chat/completions` the same
 * way. It never throws: every outcome is a ChatResult whose code says what the caller can do.
 */

export interface AiSettings {
  /** e.g. https://api.openai.com/v1, https://<resource>.openai.azure.com/openai/v1?api-version=…, http://localhost:11434/v1 */
  baseUrl: string;
  /** None for a local server that wants none. */
  apiKey?: string;
  /** `authorization` (the default) sends `Bearer <key>`; any other name (Azure's `api-key`) sends the key as is. */
  apiKeyHeader?: string;
  model: string;
  timeoutMs: number;
  maxOutputTokens: number;
}

export type AiErrorCode =
  | 'RATE_LIMITED'
  | 'BUDGET_EXCEEDED'
  | 'INVALID_PROMPT'
  | 'MODEL_ERROR'
  | 'PARSE_ERROR'
  | 'TIMEOUT'
  | 'INVALID_RESPONSE';

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatFailure {
  ok: false;
  code: AiErrorCode;
  message: string;
  retryable: boolean;
  retryAfterMs?: number;
  usage?: TokenUsage;
}

export type ChatResult = { ok: true; content: string; usage: TokenUsage; finishReason: string | null } | ChatFailure;

export interface ChatRequest {
  messages: ChatMessage[];
  /** a-z, A-Z, 0-9, _ and -, at most 64 characters (the protocol's rule for json_schema.name). */
  schemaName: string;
  schema: JsonSchema;
  maxTokens?: number;
}

const MAX_MESSAGE = 500;

/** `<base>/chat/completions`, keeping the base's query string (Azure's api-version) and no double slash. */
export function chatCompletionsUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/chat/completions`;
  return url.toString();
}

/**
 * How long a 429 asks to wait: `retry-after-ms` (Azure, OpenAI's SDKs), else `Retry-After` in
 * seconds or as an HTTP date. Undefined when neither says.
 */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = Number(headers.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return Math.ceil(ms);
  const raw = headers.get('retry-after')?.trim();
  if (!raw) return undefined;
  if (/^\d+(\.\d+)?$/.test(raw)) return Math.ceil(Number(raw) * 1000);
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export class ChatClient {
  private readonly url: string;

  constructor(private readonly settings: AiSettings) {
    this.url = chatCompletionsUrl(settings.baseUrl);
  }

  /** The most a call may generate: what a caller reserves for the answer. */
  get maxOutputTokens(): number {
    return this.settings.maxOutputTokens;
  }

  async complete(req: ChatRequest): Promise<ChatResult> {
    const { settings } = this;
    const body = {
      model: settings.model,
      messages: req.messages,
      temperature: 0,
      max_tokens: req.maxTokens ?? settings.maxOutputTokens,
      response_format: { type: 'json_schema', json_schema: { name: req.schemaName, strict: true, schema: req.schema } },
    };
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), settings.timeoutMs);
    let status: number;
    let headers: Headers;
    let text: string;
    try {
      const res = await fetch(this.url, {
        method: 'POST',
        headers: this.headers(),
        body: JSON.stringify(body),
        signal: controller.signal,
        // a redirect is not followed: fetch would carry an api-key header (and the products'
        // data) to whatever host it names; only `authorization` is dropped across origins
        redirect: 'manual',
      });
      status = res.status;
      headers = res.headers;
      text = await res.text(); // under the same timeout: a provider that stalls mid-body is as slow as one that never answers
    } catch (err) {
      if (controller.signal.aborted)
        return failure('TIMEOUT', `The AI provider did not answer within ${settings.timeoutMs} ms`, true);
      return failure('MODEL_ERROR', this.redact(`The AI provider could not be reached: ${networkReason(err)}`), true);
    } finally {
      clearTimeout(timer);
    }
    const json = parseJson(text);
    if (status < 200 || status >= 300) return this.httpFailure(status, headers, json, text);
    return this.answer(json, req);
  }

  private headers(): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    const { apiKey } = this.settings;
    if (apiKey) {
      const name = (this.settings.apiKeyHeader ?? 'authorization').toLowerCase();
      headers[name] = name === 'authorization' ? `Bearer ${apiKey}` : apiKey;
    }
    return headers;
  }

  private httpFailure(status: number, headers: Headers, json: unknown, text: string): ChatFailure {
    const said = this.providerMessage(json, text);
    const error = (json as { error?: { code?: unknown; type?: unknown } } | null)?.error;
    if (status === 429) {
      // OpenAI answers an exhausted account with 429 too; waiting does not fix that one
      const quota = error?.code === 'insufficient_quota' || error?.type === 'insufficient_quota';
      return {
        ...failure('RATE_LIMITED', `The AI provider is limiting requests (429)${said}`, !quota),
        ...(quota ? {} : { retryAfterMs: retryAfterMs(headers) }),
      };
    }
    if (status === 401 || status === 403)
      return failure('MODEL_ERROR', `The AI provider refused the API key (${status}): check AI_API_KEY${said}`, false);
    if ([400, 404, 413, 422].includes(status))
      return failure('INVALID_PROMPT', `The AI provider refused the request (${status})${said}`, false);
    if (status === 408) return failure('TIMEOUT', `The AI provider timed out (408)${said}`, true);
    if (status >= 300 && status < 400) {
      // where it points says what AI_BASE_URL should be (a moved endpoint, http → https)
      const location = headers.get('location')?.trim().slice(0, 300);
      return failure(
        'MODEL_ERROR',
        this.redact(
          `The AI provider answered a redirect (${status}${location ? ` to ${location}` : ''}), which is not followed: check AI_BASE_URL`,
        ),
        false,
      );
    }
    // 5xx is the provider's own trouble, 409 a conflict it asks to retry (as OpenAI's SDKs do)
    const retryable = status >= 500 || status === 409;
    return failure('MODEL_ERROR', `The AI provider failed (${status})${said}`, retryable);
  }

  /** `: <the provider's error.message>`, trimmed and without the API key; empty when it said nothing. */
  private providerMessage(json: unknown, text: string): string {
    const error = (json as { error?: unknown } | null)?.error;
    const raw =
      typeof error === 'string'
        ? error
        : typeof (error as { message?: unknown } | undefined)?.message === 'string'
          ? (error as { message: string }).message
          : typeof (json as { message?: unknown } | null)?.message === 'string'
            ? (json as { message: string }).message
            : json === undefined
              ? text
              : '';
    const clean = this.redact(raw.replace(/\s+/g, ' ').trim());
    return clean ? `: ${clean.slice(0, MAX_MESSAGE)}` : '';
  }

  private answer(json: unknown, req: ChatRequest): ChatResult {
    const choice = (json as { choices?: unknown[] } | null)?.choices?.[0] as
      { message?: { content?: unknown; refusal?: unknown }; finish_reason?: unknown } | undefined;
    const message = choice?.message;
    if (!message || typeof message !== 'object')
      return failure(
        'INVALID_RESPONSE',
        'The AI provider answered 200 without a chat completion (no choices[0].message): check AI_BASE_URL',
        false,
      );
    const content = typeof message.content === 'string' ? message.content : null;
    const usage = readUsage((json as { usage?: unknown }).usage) ?? estimatedUsage(req, content ?? '');
    const finishReason = typeof choice!.finish_reason === 'string' ? choice!.finish_reason : null;
    if (typeof message.refusal === 'string' && message.refusal.trim())
      return {
        ...failure('INVALID_PROMPT', this.redact(`The model refused: ${message.refusal.trim().slice(0, MAX_MESSAGE)}`)),
        usage,
      };
    if (finishReason === 'content_filter')
      return { ...failure('INVALID_PROMPT', "The AI provider's content filter stopped the answer"), usage };
    if (finishReason === 'length')
      return {
        ...failure('PARSE_ERROR', 'The answer was cut off at the output token limit (finish_reason: length)'),
        usage,
      };
    if (content === null)
      return { ...failure('INVALID_RESPONSE', 'The AI provider answered without text content'), usage };
    return { ok: true, content, usage, finishReason };
  }

  /** The key must never reach a message: some providers echo it in their errors. */
  private redact(text: string): string {
    const key = this.settings.apiKey;
    return key ? text.split(key).join('***') : text;
  }
}

function failure(code: AiErrorCode, message: string, retryable = false): ChatFailure {
  return { ok: false, code, message, retryable };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function networkReason(err: unknown): string {
  // undici's "fetch failed" hides the reason in `cause` (ECONNREFUSED, ENOTFOUND, a reset socket)
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  const detail = cause?.code ?? cause?.message;
  const message = err instanceof Error ? err.message : String(err);
  return detail ? `${message} (${String(detail)})` : message;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.ceil(value) : undefined;
}

function readUsage(raw: unknown): TokenUsage | undefined {
  const u = raw as { prompt_tokens?: unknown; completion_tokens?: unknown; total_tokens?: unknown } | null | undefined;
  const promptTokens = count(u?.prompt_tokens);
  const completionTokens = count(u?.completion_tokens);
  if (promptTokens === undefined || completionTokens === undefined) return undefined;
  // never less than its parts: a gateway reporting total_tokens 0 would otherwise be free
  const totalTokens = Math.max(count(u?.total_tokens) ?? 0, promptTokens + completionTokens);
  return { promptTokens, completionTokens, totalTokens };
}

/** A provider that reports no usage is charged our (high) estimate, never nothing. */
function estimatedUsage(req: ChatRequest, content: string): TokenUsage {
  const promptTokens = estimateTokens(req.messages) + estimateTextTokens(JSON.stringify(req.schema));
  const completionTokens = estimateTextTokens(content);
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
}

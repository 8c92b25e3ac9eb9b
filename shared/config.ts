/**
 * Every setting the service reads, in one place, from environment variables.
 * docs/configuration.md lists the same names; keep the two in step.
 */
import type { AiSettings } from './ai/provider';
import type { TargetPolicy } from './webhooks/targets';

export interface S3Config {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** MinIO and most self-hosted stores need path-style addressing. */
  forcePathStyle: boolean;
}

export interface Config {
  host: string;
  port: number;
  /** Where a worker serves its metrics (`GET /metrics` on HOST); none when unset. */
  workerMetricsPort: number | null;
  mongodbUri: string;
  mongodbDb: string;
  temporalAddress: string;
  temporalNamespace: string;
  taskQueue: string;
  s3: S3Config;
  logLevel: string;
  /** Largest JSON body the API accepts, in bytes. */
  bodyLimitBytes: number;
  /** Lifetime of access tokens from POST /auth/token, in seconds. */
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** Encrypts secrets stored for tenants (channel signing secrets): any long random text; keep it stable. */
  secretsKey: string;
  /** Publications of at most this many products answer synchronously (201); larger ones are jobs (202). */
  publishSyncMax: number;
  /** Bulk edits: runs of at most this many products answer when done (200/207); larger ones are jobs (202). */
  flowSyncMax: number;
  aiSyncMax: number;
  /** Products a bulk-edit page plans and writes at once (flows; AI transforms take fewer, see aiPageSize). */
  editPageSize: number;
  aiPageSize: number;
  /** The OpenAI-compatible provider of AI transforms; null when AI_BASE_URL is not set (the AI routes answer 503). */
  ai: AiSettings | null;
  /** Model calls in flight per page of an AI transform. */
  aiConcurrency: number;
  /** A tenant's daily token budget when its settings name none. */
  aiDailyTokenBudget: number;
  webhooks: WebhookSettings;
}

export interface WebhookSettings {
  /** Which addresses endpoints may resolve to (shared/webhooks/targets.ts); `npm start` and the tests use `loopback`. */
  targets: TargetPolicy;
  /** Whether endpoints may use http: URLs; https only otherwise. */
  allowHttp: boolean;
  /** How long a delivery waits for an answer. */
  timeoutMs: number;
  /** How long a rotated-out secret keeps signing, unless the rotation names another overlap. */
  secretOverlapSeconds: number;
  /**
   * Multiplies every retry delay and the five days after which a failing endpoint is disabled:
   * 1 in production; the tests shrink three days of retries to seconds.
   */
  retryScale: number;
  /** How often the relay looks for events a killed process left in the outbox. */
  relayIntervalMs: number;
}

type Env = Record<string, string | undefined>;

function required(env: Env, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}

function positive(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!values.includes(raw as T)) throw new Error(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

/**
 * The AI provider's base URL: an http(s) URL without credentials. fetch refuses a URL holding a
 * user and password, and its error quotes the URL whole, so the password would reach a tenant's
 * job; a key goes in AI_API_KEY (with AI_API_KEY_HEADER for another header) instead.
 */
function aiBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('AI_BASE_URL must be an http(s) URL (it is not quoted here: it may hold a password)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`AI_BASE_URL must be an http(s) URL, got "${url.protocol}"`);
  if (url.username || url.password)
    throw new Error('AI_BASE_URL must not hold a user or password: send the key in AI_API_KEY (and AI_API_KEY_HEADER)');
  return raw;
}

function integer(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

export function loadConfig(env: Env = process.env): Config {
  return {
    host: env.HOST ?? '127.0.0.1',
    port: integer(env, 'PORT', 3000),
    workerMetricsPort: env.WORKER_METRICS_PORT ? integer(env, 'WORKER_METRICS_PORT', 0) : null,
    mongodbUri: required(env, 'MONGODB_URI'),
    mongodbDb: env.MONGODB_DB ?? 'backoffice',
    temporalAddress: required(env, 'TEMPORAL_ADDRESS'),
    temporalNamespace: env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: env.TEMPORAL_TASK_QUEUE ?? 'backoffice',
    s3: {
      endpoint: required(env, 'S3_ENDPOINT'),
      region: env.S3_REGION ?? 'us-east-1',
      bucket: env.S3_BUCKET ?? 'backoffice',
      accessKeyId: required(env, 'S3_ACCESS_KEY_ID'),
      secretAccessKey: required(env, 'S3_SECRET_ACCESS_KEY'),
      forcePathStyle: (env.S3_FORCE_PATH_STYLE ?? 'true') !== 'false',
    },
    logLevel: env.LOG_LEVEL ?? 'info',
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1024 * 1024),
    accessTokenTtlSeconds: integer(env, 'ACCESS_TOKEN_TTL_SECONDS', 900),
    refreshTokenTtlSeconds: integer(env, 'REFRESH_TOKEN_TTL_SECONDS', 30 * 24 * 3600),
    secretsKey: required(env, 'SECRETS_KEY'),
    publishSyncMax: integer(env, 'PUBLISH_SYNC_MAX', 10),
    flowSyncMax: integer(env, 'FLOW_SYNC_MAX', 200),
    aiSyncMax: integer(env, 'AI_SYNC_MAX', 10),
    editPageSize: integer(env, 'EDIT_PAGE_SIZE', 500),
    aiPageSize: integer(env, 'AI_PAGE_SIZE', 20),
    ai: env.AI_BASE_URL
      ? {
          baseUrl: aiBaseUrl(env.AI_BASE_URL),
          apiKey: env.AI_API_KEY || undefined,
          apiKeyHeader: env.AI_API_KEY_HEADER || undefined,
          model: env.AI_MODEL ?? 'gpt-4o-mini',
          timeoutMs: integer(env, 'AI_TIMEOUT_MS', 30_000),
          maxOutputTokens: integer(env, 'AI_MAX_OUTPUT_TOKENS', 1000),
        }
      : null,
    aiConcurrency: integer(env, 'AI_CONCURRENCY', 4),
    aiDailyTokenBudget: integer(env, 'AI_DAILY_TOKEN_BUDGET', 200_000),
    webhooks: {
      targets: oneOf(env, 'WEBHOOK_TARGETS', ['public', 'loopback', 'private'] as const, 'public'),
      allowHttp: env.WEBHOOK_ALLOW_HTTP === 'true',
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 15_000),
      secretOverlapSeconds: integer(env, 'WEBHOOK_SECRET_OVERLAP_SECONDS', 24 * 3600),
      retryScale: positive(env, 'WEBHOOK_RETRY_SCALE', 1),
      relayIntervalMs: integer(env, 'WEBHOOK_RELAY_INTERVAL_MS', 5_000),
    },
  };
}

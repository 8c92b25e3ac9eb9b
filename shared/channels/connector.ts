import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The generic channel connector: a JSON-over-HTTP(S) client that PUTs each product to
 * `<endpointUrl>/products/<sku>`, signed with HMAC-SHA256. What a channel answers decides what
 * happens: 2xx published; 429 wait as `Retry-After` says and send again; any other 4xx a failure
 * of that product with the channel's message; 5xx, a timeout or a broken connection a
 * `RetryableChannelError` that Temporal retries with backoff.
 *
 * Signature: `X-Signature: sha256=<hex HMAC-SHA256(secret, "<X-Timestamp>.<body>")>`; every request
 * carries an `Idempotency-Key` (one per product and job), so a resend is a duplicate the channel
 * can recognise.
 */
export interface ConnectorTarget {
  endpointUrl: string;
  secret: string | null;
  timeoutMs: number;
}

export type SendOutcome = { ok: true; status: number; handle: string } | { ok: false; status: number; error: string };

export class RetryableChannelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RetryableChannelError';
  }
}

/** How often a 429 is honoured within one send before the attempt is given back to Temporal. */
const MAX_THROTTLED = 5;
const MAX_RETRY_AFTER_MS = 60_000;

export function signature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** The timestamp and, with a secret, the signature every call to a channel carries (body '' for a GET). */
export function signedHeaders(secret: string | null, body: string): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  return { 'x-timestamp': timestamp, ...(secret ? { 'x-signature': signature(secret, timestamp, body) } : {}) };
}

/**
 * Retry-After as seconds or an HTTP date, in ms (1 s when absent or unreadable), at most `max`
 * (what one wait inside a send may take; a caller told to come back uses the channel's own).
 */
export function retryAfterMs(header: string | null, now = Date.now(), max = MAX_RETRY_AFTER_MS): number {
  if (!header) return 1000;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - now;
  return Math.min(max, Math.max(0, Number.isFinite(ms) ? ms : 1000));
}

async function messageOf(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: unknown };
    const m =
      body.message ??
      (typeof body.error === 'string' ? body.error : (body.error as { message?: unknown } | undefined)?.message);
    if (typeof m === 'string' && m) return m.slice(0, 2000);
  } catch {
    // not JSON
  }
  return (text || `HTTP ${res.status}`).slice(0, 2000);
}

/** The longest handle a product binding holds (its schema's `handle`, shared/products/schema.ts). */
export const MAX_HANDLE_LENGTH = 500;

/**
 * The handle a channel answered a send with: its `handle`, else its `id`, when that is a number or
 * a text a binding can hold (not blank, at most MAX_HANDLE_LENGTH characters); otherwise the SKU,
 * so a channel's odd answer never stores a binding the product's own schema refuses.
 */
export function handleOf(answer: string, sku: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer);
  } catch {
    return sku; // a body that is not JSON: the SKU stays the handle
  }
  if (parsed === null || typeof parsed !== 'object') return sku;
  const { handle, id } = parsed as { handle?: unknown; id?: unknown };
  for (const h of [handle, id]) {
    const text = typeof h === 'number' && Number.isFinite(h) ? String(h) : typeof h === 'string' ? h : null;
    if (text !== null && text.trim() && [...text].length <= MAX_HANDLE_LENGTH) return text;
  }
  return sku;
}

export async function sendProduct(
  target: ConnectorTarget,
  sku: string,
  payload: unknown,
  idempotencyKey: string,
  cancelled?: AbortSignal,
): Promise<SendOutcome> {
  const url = `${target.endpointUrl.replace(/\/+$/, '')}/products/${encodeURIComponent(sku)}`;
  const body = JSON.stringify(payload);
  for (let throttled = 0; ; throttled++) {
    const headers = {
      'content-type': 'application/json',
      'idempotency-key': idempotencyKey,
      ...signedHeaders(target.secret, body),
    };
    const signal = cancelled
      ? AbortSignal.any([cancelled, AbortSignal.timeout(target.timeoutMs)])
      : AbortSignal.timeout(target.timeoutMs);
    let res: Response;
    try {
      // a redirect is the channel's answer, not followed: its target was never checked against
      // WEBHOOK_TARGETS as the endpoint was (it could be an internal address)
      res = await fetch(url, { method: 'PUT', headers, body, signal, redirect: 'manual' });
    } catch (err) {
      if (cancelled?.aborted) throw err;
      throw new RetryableChannelError(
        `channel unreachable or too slow (${(err as Error).name}: ${(err as Error).message})`,
      );
    }
    if (res.status >= 200 && res.status < 300) {
      const text = await res.text().catch(() => '');
      return { ok: true, status: res.status, handle: handleOf(text, sku) };
    }
    if (res.status === 429 && throttled < MAX_THROTTLED) {
      await res.body?.cancel().catch(() => undefined);
      await sleep(
        retryAfterMs(res.headers.get('retry-after')),
        undefined,
        cancelled ? { signal: cancelled } : undefined,
      );
      continue;
    }
    if (res.status === 429 || res.status >= 500)
      throw new RetryableChannelError(`channel answered ${res.status}: ${await messageOf(res)}`);
    return { ok: false, status: res.status, error: await messageOf(res) };
  }
}

/** The channel's own catalog page (GET <endpointUrl>/products?page&limit&search), signed like a send. */
export async function listChannelProducts(
  target: ConnectorTarget,
  query: { page: number; limit: number; search?: string },
): Promise<{ ok: true; body: unknown } | { ok: false; kind: 'unreachable' | 'api'; message: string }> {
  const qs = new URLSearchParams({
    page: String(query.page),
    limit: String(query.limit),
    ...(query.search ? { search: query.search } : {}),
  });
  const headers = { accept: 'application/json', ...signedHeaders(target.secret, '') };
  let res: Response;
  try {
    res = await fetch(`${target.endpointUrl.replace(/\/+$/, '')}/products?${qs}`, {
      headers,
      redirect: 'manual', // not followed: see sendProduct
      signal: AbortSignal.timeout(target.timeoutMs),
    });
  } catch (err) {
    return { ok: false, kind: 'unreachable', message: `${(err as Error).name}: ${(err as Error).message}` };
  }
  if (!res.ok)
    return { ok: false, kind: 'api', message: `the channel answered ${res.status}: ${await messageOf(res)}` };
  try {
    return { ok: true, body: await res.json() };
  } catch {
    return { ok: false, kind: 'api', message: 'the channel answered something that is not JSON' };
  }
}

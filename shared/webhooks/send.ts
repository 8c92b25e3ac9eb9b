import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { guardedLookup, type TargetPolicy } from './targets';

export interface SendResult {
  /** The answer's status; null when there was none. */
  status: number | null;
  retryAfter?: string;
  error?: string;
  durationMs: number;
}

/**
 * One POST of a delivery. The whole exchange (connect, send, answer) has `timeoutMs`; the
 * answer's body is read and dropped. Addresses are checked again when the socket connects
 * (targets.ts), so a host cannot resolve to an internal address for the call itself.
 */
export function send(
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  policy: TargetPolicy,
): Promise<SendResult> {
  const started = Date.now();
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: Omit<SendResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...r, durationMs: Date.now() - started });
    };
    const req = request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        lookup: guardedLookup(policy) as never,
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          done({ status: res.statusCode ?? null, retryAfter: res.headers['retry-after'] as string | undefined }),
        );
        res.on('error', (err) => done({ status: res.statusCode ?? null, error: err.message }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      done({ status: null, error: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
    req.on('error', (err) => done({ status: null, error: err.message }));
    req.end(body);
  });
}

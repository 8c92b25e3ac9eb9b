import { testStack } from './test-stack';

export interface HttpResult {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

export interface RequestOptions {
  /** A credential sent as `Authorization: Bearer …` (overrides the client's). */
  key?: string;
  /** Sent as JSON unless `raw` is given. */
  body?: unknown;
  raw?: string | Buffer;
  headers?: Record<string, string>;
  /** Query parameters, appended to the path (arrays repeat the name). */
  query?: Record<string, string | number | boolean | (string | number)[] | undefined>;
}

function withQuery(path: string, query: RequestOptions['query']): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) params.append(name, String(v));
  }
  const qs = params.toString();
  return qs ? `${path}${path.includes('?') ? '&' : '?'}${qs}` : path;
}

/** One HTTP request as a client makes it; `body` is sent as JSON unless `raw` is given. */
export async function http(base: string, method: string, path: string, opts: RequestOptions = {}): Promise<HttpResult> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key) headers.authorization ??= `Bearer ${opts.key}`;
  let payload: string | Buffer | undefined;
  if (opts.raw !== undefined) payload = opts.raw;
  else if (opts.body !== undefined) {
    payload = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${base}${withQuery(path, opts.query)}`, { method, headers, body: payload });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body, text, headers: res.headers };
}

/**
 * The test suites' one HTTP client: a base URL (the suite's API by default) and a credential,
 * with a method per verb. `as(key)` is the same client with another credential (`null`: none).
 */
export class ApiClient {
  constructor(
    readonly key: string | null = null,
    readonly base: string = testStack().apiUrl,
  ) {}

  as(key: string | null): ApiClient {
    return new ApiClient(key, this.base);
  }

  request(method: string, path: string, opts: RequestOptions = {}): Promise<HttpResult> {
    return http(this.base, method, path, { ...(this.key ? { key: this.key } : {}), ...opts });
  }

  get(path: string, opts?: Omit<RequestOptions, 'body' | 'raw'>) {
    return this.request('GET', path, opts);
  }

  post(path: string, body?: unknown, opts?: RequestOptions) {
    return this.request('POST', path, { ...opts, ...(body !== undefined ? { body } : {}) });
  }

  put(path: string, body?: unknown, opts?: RequestOptions) {
    return this.request('PUT', path, { ...opts, ...(body !== undefined ? { body } : {}) });
  }

  patch(path: string, body?: unknown, opts?: RequestOptions) {
    return this.request('PATCH', path, { ...opts, ...(body !== undefined ? { body } : {}) });
  }

  delete(path: string, opts?: RequestOptions) {
    return this.request('DELETE', path, opts);
  }
}

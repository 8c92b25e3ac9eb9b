import { setTimeout as sleep } from 'node:timers/promises';
import { retryAfterMs, signedHeaders, type ConnectorTarget } from '../channels/connector';
import { CATEGORY_ID_MAX, CATEGORY_NAME_MAX, CATEGORY_PATH_MAX_DEPTH } from './assignment';

/**
 * A channel's category predictor: given a title, the marketplace's ranked guesses of the category
 * it belongs in. Two protocols:
 *
 * - `mercadolibre`: Mercado Libre's own `GET <endpointUrl>/sites/<site_id>/domain_discovery/search?q=<title>&limit=<n>`,
 *   answering a JSON array of `{domain_id, domain_name, category_id, category_name, attributes?}`, best first.
 * - every other type (the generic connector): `GET <endpointUrl>/categories/suggest?q=<title>&site=<siteId>&limit=<n>`,
 *   answering `{suggestions: [{categoryId, categoryName, path?: string[], domainId?, domainName?}]}`, best first.
 *
 * Both are signed like every call of the connector (X-Timestamp, X-Signature over the empty body).
 * An empty list is an answer (nothing fits); a 404 or 501 says the channel has no predictor; a
 * 429 is waited out as Retry-After says while the caller's patience lasts; a body we cannot read
 * is an error, never an empty success.
 */
export interface CategorySuggestion {
  categoryId: string;
  categoryName: string;
  /** Names from the root down, when the predictor says. */
  path: string[] | null;
  domainId: string | null;
  domainName: string | null;
}

/**
 * unsupported: no predictor (404, 501); throttled: 429 past the caller's patience; unavailable:
 * unreachable, too slow or 5xx (worth trying again); refused: any other 4xx; bad-response: a body
 * we cannot read.
 */
export type PredictorFailure = 'unsupported' | 'throttled' | 'unavailable' | 'refused' | 'bad-response';

export class PredictorError extends Error {
  constructor(
    readonly kind: PredictorFailure,
    message: string,
    /** For `throttled`: how long the channel asked to wait, in ms. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'PredictorError';
  }
}

export interface PredictRequest {
  target: ConnectorTarget;
  channelType: string;
  siteId: string;
  title: string;
  limit: number;
  /** Waits for a slot of the channel's rate limit; called before every request. */
  slot: () => Promise<void>;
  /** The longest total wait for 429s before giving up as `throttled`. */
  maxThrottleWaitMs: number;
  cancelled?: AbortSignal;
}

/** 429s waited out within one call, whatever their Retry-After (a `0` must not make it ask forever). */
const MAX_THROTTLED = 5;

const text = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';
const optionalText = (v: unknown): string | null | undefined =>
  v === undefined || v === null ? null : typeof v === 'string' ? v : undefined;

function unreadable(why: string): PredictorError {
  return new PredictorError(
    'bad-response',
    `the channel's category predictor answered in a shape we cannot read: ${why}`,
  );
}

/** Mercado Libre's domain_discovery answer. */
function readMercadoLibre(body: unknown): CategorySuggestion[] {
  if (!Array.isArray(body)) throw unreadable('expected a list of domains');
  return body.map((x: Record<string, unknown>, i) => {
    if (x === null || typeof x !== 'object') throw unreadable(`item ${i} is not an object`);
    const domainId = optionalText(x.domain_id);
    const domainName = optionalText(x.domain_name);
    if (!text(x.category_id) || !text(x.category_name) || domainId === undefined || domainName === undefined)
      throw unreadable(`item ${i} lacks category_id or category_name`);
    return { categoryId: x.category_id, categoryName: x.category_name, path: null, domainId, domainName };
  });
}

/** The generic connector's answer. */
function readGeneric(body: unknown): CategorySuggestion[] {
  const list = (body as { suggestions?: unknown } | null)?.suggestions;
  if (!Array.isArray(list)) throw unreadable('expected {suggestions: [...]}');
  return list.map((x: Record<string, unknown>, i) => {
    if (x === null || typeof x !== 'object') throw unreadable(`suggestion ${i} is not an object`);
    const domainId = optionalText(x.domainId);
    const domainName = optionalText(x.domainName);
    const path = x.path === undefined || x.path === null ? null : x.path;
    if (!text(x.categoryId) || !text(x.categoryName) || domainId === undefined || domainName === undefined)
      throw unreadable(`suggestion ${i} lacks categoryId or categoryName`);
    if (path !== null && !(Array.isArray(path) && path.every(text))) throw unreadable(`suggestion ${i} has a bad path`);
    return {
      categoryId: x.categoryId,
      categoryName: x.categoryName,
      path: path as string[] | null,
      domainId,
      domainName,
    };
  });
}

/**
 * Whether a suggestion is a category an assignment can hold (the limits of POST
 * /products/marketplace-categories): one that is not would be refused if a client sent it back,
 * and a publication would store it unchecked, so it is left out of the answer: an answer of only
 * such suggestions is one where nothing fits (a store sends the product without a category, a
 * marketplace fails it CATEGORY_NOT_FOUND).
 */
function assignable(s: CategorySuggestion): boolean {
  return (
    s.categoryId.length <= CATEGORY_ID_MAX &&
    s.categoryName.length <= CATEGORY_NAME_MAX &&
    (s.path === null ||
      (s.path.length <= CATEGORY_PATH_MAX_DEPTH && s.path.every((level) => level.length <= CATEGORY_NAME_MAX)))
  );
}

function urlOf(r: PredictRequest): string {
  const base = r.target.endpointUrl.replace(/\/+$/, '');
  const limit = String(r.limit);
  if (r.channelType === 'mercadolibre')
    return `${base}/sites/${encodeURIComponent(r.siteId)}/domain_discovery/search?${new URLSearchParams({ q: r.title, limit })}`;
  return `${base}/categories/suggest?${new URLSearchParams({ q: r.title, site: r.siteId, limit })}`;
}

async function reason(res: Response): Promise<string> {
  const body = await res.text().catch(() => '');
  return body.slice(0, 300) || `HTTP ${res.status}`;
}

/** The predictor's suggestions for a title, best first (at most `limit`). Throws PredictorError. */
export async function predictCategories(r: PredictRequest): Promise<CategorySuggestion[]> {
  const url = urlOf(r);
  let waited = 0;
  let throttled = 0;
  for (;;) {
    await r.slot();
    const headers = { accept: 'application/json', ...signedHeaders(r.target.secret, '') };
    const timeout = AbortSignal.timeout(r.target.timeoutMs);
    let res: Response;
    try {
      res = await fetch(url, {
        headers,
        redirect: 'manual', // not followed: its target was never checked as the endpoint was
        signal: r.cancelled ? AbortSignal.any([r.cancelled, timeout]) : timeout,
      });
    } catch (err) {
      if (r.cancelled?.aborted) throw err;
      throw new PredictorError(
        'unavailable',
        `the channel's category predictor is unreachable or too slow (${(err as Error).name}: ${(err as Error).message})`,
      );
    }
    if (res.status === 429) {
      // the channel's own wait is what a caller told to come back gets; a wait here is bounded
      const asked = retryAfterMs(res.headers.get('retry-after'), Date.now(), Infinity);
      const wait = retryAfterMs(res.headers.get('retry-after'));
      await res.body?.cancel().catch(() => undefined);
      if (++throttled > MAX_THROTTLED || waited + asked > r.maxThrottleWaitMs)
        throw new PredictorError(
          'throttled',
          "the channel's category predictor asks us to slow down",
          Math.max(asked, 1000),
        );
      waited += wait;
      await sleep(wait, undefined, r.cancelled ? { signal: r.cancelled } : undefined);
      continue;
    }
    if (res.status === 404 || res.status === 501) {
      await res.body?.cancel().catch(() => undefined);
      throw new PredictorError('unsupported', `the channel has no category predictor (it answered ${res.status})`);
    }
    if (!res.ok)
      throw new PredictorError(
        res.status >= 500 ? 'unavailable' : 'refused',
        `the channel's category predictor answered ${res.status}: ${await reason(res)}`,
      );
    // a body cut off (the connection dropped, the time-out struck while it came) is the channel
    // being unavailable; only a whole answer we cannot read is a bad response
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      if (r.cancelled?.aborted) throw err;
      throw new PredictorError(
        'unavailable',
        `the channel's category predictor stopped in the middle of its answer (${(err as Error).name}: ${(err as Error).message})`,
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw unreadable('not JSON');
    }
    const suggestions = r.channelType === 'mercadolibre' ? readMercadoLibre(body) : readGeneric(body);
    return suggestions.filter(assignable).slice(0, r.limit);
  }
}

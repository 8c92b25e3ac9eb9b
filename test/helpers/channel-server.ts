import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signature } from '../../shared/channels/connector';

export interface Received {
  sku: string;
  idempotencyKey: string;
  signatureValid: boolean;
  body: Record<string, unknown>;
  at: number;
  /**
   * How the channel ended it: the status it answered, or `aborted` when the sender was gone
   * before the answer (a killed worker); undefined while it is being handled.
   */
  outcome?: number | 'aborted';
  /** An Idempotency-Key already published: the channel answered it as the first time and published nothing again. */
  duplicate?: boolean;
}

/** What the fake predictor knows of a category. */
export interface FakeCategory {
  categoryId: string;
  categoryName: string;
  domainId?: string;
  domainName?: string;
  path?: string[];
}

/** One request to the category predictor, as received. */
export interface Prediction {
  protocol: 'mercadolibre' | 'generic';
  title: string;
  site: string;
  limit: number;
  signatureValid: boolean;
  at: number;
}

/**
 * A sales channel for tests: a real HTTP server speaking the generic connector's protocol
 * (PUT /products/<sku>, HMAC-signed; GET /products for the catalog) and both category-predictor
 * protocols: Mercado Libre's `GET /sites/<site>/domain_discovery/search?q&limit` (a list of
 * `{domain_id, domain_name, category_id, category_name, attributes}`) and the generic
 * `GET /categories/suggest?q&site&limit` (`{suggestions[...]}`). Without a `predictor` it has none
 * (404). It records what it got and
 * can be told to fail some SKUs (4xx with a message), throttle (429 + Retry-After), fail with
 * 5xx, answer slowly, or hold every request (or every one after the next n) until released.
 * Like a channel that honours Idempotency-Key, it publishes a key once: a resend of a published
 * key is answered the same and marked a duplicate.
 */
export class ChannelServer {
  received: Received[] = [];
  failSkus = new Map<string, { status: number; message: string }>();
  throttleNext = 0;
  errorNext = 0;
  delayMs = 0;
  catalogStatus = 200;
  catalog: Record<string, unknown>[] = [];
  /** The products published, by Idempotency-Key: what a resend cannot publish twice. */
  published = new Map<string, Received>();
  /** The category predictor: the categories for a title, best first; null: the channel has no predictor. */
  predictor: ((title: string, site: string) => FakeCategory[]) | null = null;
  predictions: Prediction[] = [];
  /** Answer the next n predictor requests 429 (Retry-After: predictorRetryAfter) or 503. */
  predictorThrottleNext = 0;
  predictorRetryAfter = '1';
  predictorErrorNext = 0;
  /** Answer the predictor with this body instead (a changed shape). */
  predictorRaw: unknown = undefined;
  predictorDelayMs = 0;
  private holding = false;
  private holdFrom: number | null = null;
  private held: { go: () => void; req: IncomingMessage }[] = [];
  private server!: Server;
  url = '';

  constructor(private readonly secret: string) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  hold(): void {
    this.holding = true;
  }

  /** Holds every request after the next `count`, until released. */
  holdAfter(count: number): void {
    this.holdFrom = this.received.length + count;
  }

  /** Requests being held; `senderGone`: only those whose sender has closed its connection. */
  heldCount(senderGone = false): number {
    return this.held.filter((h) => !senderGone || h.req.socket.destroyed).length;
  }

  release(): void {
    this.holding = false;
    this.holdFrom = null;
    for (const h of this.held.splice(0)) h.go();
  }

  skus(): string[] {
    return [...new Set(this.received.map((r) => r.sku))];
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url && !req.url.startsWith('/products')) return this.predict(req, send);
    if (req.method === 'GET' && req.url?.startsWith('/products')) {
      if (this.catalogStatus !== 200) return send(this.catalogStatus, { message: 'catalog unavailable' });
      return send(200, { products: this.catalog });
    }
    const m = /^\/products\/([^/?]+)$/.exec(req.url ?? '');
    if (req.method !== 'PUT' || !m) return send(404, { message: 'no such route' });
    const sku = decodeURIComponent(m[1]);
    const ts = String(req.headers['x-timestamp'] ?? '');
    const sig = String(req.headers['x-signature'] ?? '');
    if (this.throttleNext > 0) {
      this.throttleNext--;
      return send(429, { message: 'slow down' }, { 'retry-after': '1' });
    }
    if (this.errorNext > 0) {
      this.errorNext--;
      return send(503, { message: 'try later' });
    }
    const entry: Received = {
      sku,
      idempotencyKey: String(req.headers['idempotency-key'] ?? ''),
      signatureValid: sig === signature(this.secret, ts, text),
      body: JSON.parse(text),
      at: Date.now(),
    };
    this.received.push(entry);
    if (this.holding || (this.holdFrom !== null && this.received.length > this.holdFrom))
      await new Promise<void>((go) => this.held.push({ go, req }));
    if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
    // a sender gone before the answer (killed) never learns the outcome: nothing is published for it
    if (req.socket.destroyed) {
      entry.outcome = 'aborted';
      return;
    }
    const fail = this.failSkus.get(sku);
    if (fail) {
      entry.outcome = fail.status;
      return send(fail.status, { message: fail.message });
    }
    entry.outcome = 200;
    entry.duplicate = this.published.has(entry.idempotencyKey);
    if (!entry.duplicate) this.published.set(entry.idempotencyKey, entry);
    send(200, { handle: `ch-${sku.toLowerCase()}` });
  }

  private async predict(
    req: IncomingMessage,
    send: (status: number, body: unknown, h?: Record<string, string>) => void,
  ) {
    const url = new URL(req.url!, 'http://channel');
    const ml = /^\/sites\/([^/]+)\/domain_discovery\/search$/.exec(url.pathname);
    const generic = url.pathname === '/categories/suggest';
    if (!ml && !generic) return send(404, { message: 'no such route' });
    const ts = String(req.headers['x-timestamp'] ?? '');
    const p: Prediction = {
      protocol: ml ? 'mercadolibre' : 'generic',
      title: url.searchParams.get('q') ?? '',
      site: ml ? decodeURIComponent(ml[1]) : (url.searchParams.get('site') ?? ''),
      limit: Number(url.searchParams.get('limit') ?? 0),
      signatureValid: String(req.headers['x-signature'] ?? '') === signature(this.secret, ts, ''),
      at: Date.now(),
    };
    this.predictions.push(p);
    if (!this.predictor) return send(404, { message: 'no such route' }); // a channel without a predictor
    if (this.predictorDelayMs) await new Promise((r) => setTimeout(r, this.predictorDelayMs));
    if (this.predictorThrottleNext > 0) {
      this.predictorThrottleNext--;
      return send(429, { message: 'local_rate_limited', status: 429 }, { 'retry-after': this.predictorRetryAfter });
    }
    if (this.predictorErrorNext > 0) {
      this.predictorErrorNext--;
      return send(503, { message: 'try later' });
    }
    if (this.predictorRaw !== undefined) return send(200, this.predictorRaw);
    const found = this.predictor(p.title, p.site).slice(0, p.limit || undefined);
    if (ml)
      return send(
        200,
        found.map((c) => ({
          domain_id: c.domainId ?? `${p.site}-${c.categoryName.toUpperCase().replace(/\W+/g, '_')}`,
          domain_name: c.domainName ?? c.categoryName,
          category_id: c.categoryId,
          category_name: c.categoryName,
          attributes: [],
        })),
      );
    return send(200, { suggestions: found });
  }

  async close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

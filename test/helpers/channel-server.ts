import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signature } from '../../shared/channels/connector';

export interface Received {
  sku: string;
  idempotencyKey: string;
  signatureValid: boolean;
  body: Record<string, unknown>;
  at: number;
}

/**
 * A sales channel for tests: a real HTTP server speaking the generic connector's protocol
 * (PUT /products/<sku>, HMAC-signed; GET /products for the catalog). It records what it got and
 * can be told to fail some SKUs (4xx with a message), throttle (429 + Retry-After), fail with
 * 5xx, answer slowly, or hold every request until released.
 */
export class ChannelServer {
  received: Received[] = [];
  failSkus = new Map<string, { status: number; message: string }>();
  throttleNext = 0;
  errorNext = 0;
  delayMs = 0;
  catalogStatus = 200;
  catalog: Record<string, unknown>[] = [];
  private holding = false;
  private held: (() => void)[] = [];
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

  release(): void {
    this.holding = false;
    for (const go of this.held.splice(0)) go();
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
    this.received.push({
      sku,
      idempotencyKey: String(req.headers['idempotency-key'] ?? ''),
      signatureValid: sig === signature(this.secret, ts, text),
      body: JSON.parse(text),
      at: Date.now(),
    });
    if (this.holding) await new Promise<void>((r) => this.held.push(r));
    if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
    const fail = this.failSkus.get(sku);
    if (fail) return send(fail.status, { message: fail.message });
    send(200, { handle: `ch-${sku.toLowerCase()}` });
  }

  async close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

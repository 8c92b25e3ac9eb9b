import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got, verified or not. */
export interface Received {
  at: number;
  headers: Record<string, string>;
  body: string;
  /** The payload when the signature verified under one of the receiver's secrets; null otherwise. */
  payload: { type: string; timestamp: string; data: { id: string; sequence: number; resource: any } } | null;
  /** Which of the receiver's secrets verified it. */
  verifiedBy: string[];
  /** The status this receiver answered. */
  answered: number;
}

export type Responder = (req: Received) => { status: number; headers?: Record<string, string>; delayMs?: number };

/**
 * A webhook receiver for the tests: a real HTTP server on loopback that checks every delivery's
 * signature with the `standardwebhooks` library (the specification's own, not our code) under
 * each secret it knows, records everything, and answers what the test tells it to (200 by default).
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  secrets: string[] = [];
  respond: Responder = () => ({ status: 200 });
  private server: Server | null = null;
  url = '';

  async start(path = '/hooks'): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
    return this;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    const verifiedBy: string[] = [];
    let payload: Received['payload'] = null;
    for (const secret of this.secrets) {
      try {
        payload = new Webhook(secret).verify(body, headers) as Received['payload'];
        verifiedBy.push(secret);
      } catch {
        // not signed with this one
      }
    }
    const entry: Received = { at: Date.now(), headers, body, payload, verifiedBy, answered: 0 };
    const answer = this.respond(entry);
    entry.answered = answer.status;
    this.received.push(entry);
    if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
    res.writeHead(answer.status, answer.headers ?? {});
    res.end();
  }

  /** Verified events of a type (every type when omitted), in arrival order. */
  events(type?: string): NonNullable<Received['payload']>[] {
    return this.received
      .filter((r) => r.payload && r.answered >= 200 && r.answered < 300 && (!type || r.payload.type === type))
      .map((r) => r.payload!);
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/**
 * A webhook receiver to try deliveries with: listens on 127.0.0.1, verifies each delivery's
 * Standard Webhooks signature with the `standardwebhooks` library and prints one line per event,
 * `<type> <webhook-id> <data.id>`, answering 204; a delivery that does not verify is answered 400
 * (and retried by the service) and reported on stderr.
 *
 *   npx tsx scripts/webhooks/receive.ts --port 4000 --secret whsec_…   (or WEBHOOK_SECRET=whsec_…)
 */
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const port = Number(option('port') ?? process.env.PORT ?? 4000);
const secret = option('secret') ?? process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('usage: receive.ts --port <port> --secret <whsec_…>  (or WEBHOOK_SECRET)');
  process.exit(2);
}
const webhook = new Webhook(secret);

createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    try {
      const event = webhook.verify(body, headers) as { type: string; data: { id: string } };
      console.log(`${event.type} ${headers['webhook-id']} ${event.data.id}`);
      res.writeHead(204).end();
    } catch (err) {
      console.error(`refused ${headers['webhook-id'] ?? '(no webhook-id)'}: ${(err as Error).message}`);
      res.writeHead(400).end();
    }
  });
}).listen(port, '127.0.0.1', () => console.error(`listening on http://127.0.0.1:${port}/`));

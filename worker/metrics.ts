import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { METRICS_CONTENT_TYPE, metricsText } from '../shared/metrics/metrics';

/** A free loopback port, for the Temporal SDK's own exporter (it binds an address we must name). */
export async function freeLoopbackAddress(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((r) => probe.close(() => r()));
  return `127.0.0.1:${port}`;
}

/**
 * The worker's one metrics endpoint: our counters (jobs finished by type and outcome, the
 * process's own) followed by the Temporal SDK's (polls, task latencies, slots), which the SDK
 * exports on a loopback address of its own and we relay, so an operator scrapes one URL per worker.
 */
export async function serveWorkerMetrics(host: string, port: number, sdkAddress: string): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    void (async () => {
      const ours = await metricsText();
      const sdk = await fetch(`http://${sdkAddress}/metrics`, { signal: AbortSignal.timeout(5000) })
        .then((r) => (r.ok ? r.text() : ''))
        .catch(() => ''); // the SDK's exporter not up yet: ours alone
      res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(`${ours}\n${sdk}`);
    })().catch((err: Error) => res.writeHead(500).end(err.message));
  });
  await new Promise<void>((r) => server.listen(port, host, r));
  return server;
}

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { allRoutes } from '../../api/routes';
import type { Proc } from '../../scripts/stack/process';
import { startAiServer, type AiServer } from '../helpers/ai-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { startWorker } from '../helpers/worker';

/**
 * The provider's key must reach the provider only (docs/configuration.md: AI_API_KEY is "the
 * provider's key", sent under AI_API_KEY_HEADER, `api-key` for Azure; shared/ai/provider.ts: "The
 * key must never reach a message"). A provider (or a gateway in front of it) answering 307 with a
 * Location on another host is a MODEL_ERROR naming the redirect; nothing goes to that host. Before,
 * the chat client's fetch followed it and re-sent the call there, key and product data included
 * (fetch drops only `authorization` across origins, so Azure's `api-key` went along), and wrote
 * that host's answer into the product. The channel connector and the predictor refuse redirects
 * for the same reason.
 */
jest.setTimeout(180_000);

const QUEUE = `ai-redirect-${Date.now().toString(36)}`;
const KEY = 'sk-review-azure-key-0123456789';
let deps: TestDeps;
let ai: AiServer;
let worker: Proc;
let app: { url: string; close: () => Promise<void> };
let elsewhere: Server;
let elsewhereUrl: string;
const seenElsewhere: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  deps = await TestDeps.open();
  ai = await startAiServer();
  // another origin: it answers like a provider, so the product would even be changed from its answer
  elsewhere = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seenElsewhere.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: '{"title__value":"Taken over"}' },
              finish_reason: 'stop',
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
    });
  });
  await new Promise<void>((r) => elsewhere.listen(0, 'localhost', r));
  elsewhereUrl = `http://localhost:${(elsewhere.address() as AddressInfo).port}`;
  worker = startWorker(QUEUE, 'ai-redirect-worker', undefined, {
    AI_BASE_URL: ai.url,
    AI_API_KEY: KEY,
    AI_API_KEY_HEADER: 'api-key',
    AI_MODEL: 'fake-model',
    AI_TIMEOUT_MS: '4000',
    AI_MAX_OUTPUT_TOKENS: '200',
    AI_SYNC_MAX: '6',
  });
  app = await deps.serveApp(allRoutes, {
    taskQueue: QUEUE,
    ai: {
      baseUrl: ai.url,
      apiKey: KEY,
      apiKeyHeader: 'api-key',
      model: 'fake-model',
      timeoutMs: 4000,
      maxOutputTokens: 200,
    },
    aiSyncMax: 6,
  });
}, 180_000);

afterAll(async () => {
  await app?.close();
  await worker?.stop();
  await ai?.close();
  elsewhere?.closeAllConnections();
  await new Promise<void>((r) => (elsewhere ? elsewhere.close(() => r()) : r()));
  await deps?.close();
});

test('a provider answering 307 to another host: the key and the product data are not sent there, the product is not changed', async () => {
  const t = await deps.tenantWithKey();
  const api = new ApiClient(t.key, app.url);
  const sku = `AIRD${Date.now().toString(36).toUpperCase()}`;
  const made = await api.post('/products', { sku, title: { value: 'Cotton shirt' }, price: 10 });
  expect(made.status).toBe(201);
  ai.script(() => ({ status: 307, headers: { location: `${elsewhereUrl}/v1/chat/completions` } }));

  const res = await api.post('/products/bulk/ai/transform', {
    prompt: 'Make the title catchier',
    selection: { skus: [sku] },
    fields: ['title.value'],
  });

  expect(ai.requests.length).toBeGreaterThan(0); // the configured provider was asked
  // today: the call is re-sent to the other host with `api-key: <KEY>` and the product's data
  expect(seenElsewhere.map((r) => r.headers['api-key'])).not.toContain(KEY);
  expect(seenElsewhere.some((r) => r.body.includes(sku))).toBe(false);
  // and the answer of a host nobody configured is not written into the product (today: "Taken over")
  expect((await api.get(`/products/${made.body.id}`)).body.title.value).toBe('Cotton shirt');
  expect(res.status).toBe(207);
  // the error names where the provider pointed, which tells what AI_BASE_URL should be
  expect(JSON.stringify(res.body)).toContain(`redirect (307 to ${elsewhereUrl}/v1/chat/completions)`);
});

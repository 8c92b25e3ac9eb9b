import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { allRoutes } from '../../api/routes';
import { http, TestDeps } from '../helpers/stack';

/**
 * GET /docs in a real browser: Debian's chromium, headless, opens the page and dumps the DOM
 * Redoc rendered. The areas (the OpenAPI document's tags) and one operation's parameters must be
 * on screen, and the page must have asked nothing of any other origin: chromium sends every
 * request for another origin to a proxy of ours that only records it (and cannot resolve any
 * other host name), so a page needing a CDN or a web font would both show in the record and
 * render without it.
 */

const INSTALL_HINT = 'chromium is not on PATH: run scripts/install-test-tools.sh (CI runs it before npm test)';
/** The operation whose parameters must be on screen, and the query parameters it declares. */
const SUGGEST_PATH = '/products/categories/suggest';
const SUGGEST_PARAMS = ['channelId', 'title', 'sku', 'limit'];

let deps: TestDeps;
let app: { url: string; close: () => Promise<void> };
let proxy: RecordingProxy;
let profiles: string;

/**
 * Chromium's own services (component updates, sign-in, network time), which it calls whatever the
 * page; exact hosts, so a page's CDN or web-font request (fonts.googleapis.com, …) still counts.
 */
const BROWSER_SERVICE_HOSTS = new Set(['accounts.google.com', 'update.googleapis.com', 'clients2.google.com']);

/** The host of a recorded request (`GET http://host/…` or `CONNECT host:443`). */
function hostOf(asked: string): string {
  const target = asked.slice(asked.indexOf(' ') + 1);
  return target.includes('://') ? new URL(target).hostname : target.replace(/:\d+$/, '');
}

/** What the pages asked of other origins, chromium's own services left out. */
const pageRequests = (asked: string[]): string[] => asked.filter((a) => !BROWSER_SERVICE_HOSTS.has(hostOf(a)));

/** An HTTP proxy that answers nothing and records what it was asked for (`GET url`, `CONNECT host:port`). */
interface RecordingProxy {
  url: string;
  asked: string[];
  close: () => Promise<void>;
}

async function recordingProxy(): Promise<RecordingProxy> {
  const asked: string[] = [];
  const server: Server = createServer((req, res) => {
    asked.push(`${req.method} ${req.url}`);
    res.writeHead(502).end();
  });
  server.on('connect', (req, socket) => {
    asked.push(`CONNECT ${req.url}`);
    // chromium may reset a tunnel it gave up on: that is its business, not a failure of the suite
    socket.on('error', () => undefined);
    socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    asked,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The chromium executable on PATH; a missing browser fails the suite with the fix, it never skips. */
function chromiumPath(): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const file = join(dir, 'chromium');
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not in this directory
    }
  }
  throw new Error(INSTALL_HINT);
}

let runs = 0;

/** The DOM of `url` once chromium has rendered it, JavaScript run and the spec fetched. */
async function render(url: string): Promise<{ dom: string; log: string }> {
  const args = [
    '--headless',
    '--no-sandbox', // root in CI containers
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-default-apps',
    '--disable-extensions',
    '--disable-client-side-phishing-detection',
    '--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,AutofillServerCommunication',
    '--no-pings',
    '--enable-logging=stderr',
    '--v=0',
    `--user-data-dir=${join(profiles, `profile-${++runs}`)}`,
    // loopback goes direct (chromium never proxies it); everything else reaches the recording proxy
    `--proxy-server=${proxy.url}`,
    '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
    '--virtual-time-budget=20000',
    '--dump-dom',
    url,
  ];
  return new Promise((resolve, reject) => {
    execFile(chromiumPath(), args, { timeout: 90_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`chromium failed on ${url}: ${err.message}\n${stderr.slice(-2000)}`));
      else resolve({ dom: stdout, log: stderr });
    });
  });
}

/** What a reader sees: the DOM without scripts, styles and tags, entities decoded, spaces collapsed. */
function visibleText(dom: string): string {
  return dom
    .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}

/** The DOM of one operation's section: Redoc ids it by tag, path (`/` as `~1`) and method. */
function operationSection(dom: string, path: string, method: string): string {
  const id = `paths/${path.replace(/\//g, '~1')}/${method}`;
  const start = dom.search(new RegExp(`data-section-id="[^"]*${id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`));
  if (start < 0) throw new Error(`no section for ${method.toUpperCase()} ${path} in the rendered page`);
  const next = dom.indexOf('data-section-id=', start + id.length);
  return dom.slice(start, next < 0 ? undefined : next);
}

beforeAll(async () => {
  chromiumPath(); // fails the suite at once, with the fix, when the browser is missing
  deps = await TestDeps.open();
  app = await deps.serveApp(allRoutes);
  proxy = await recordingProxy();
  profiles = await mkdtemp(join(tmpdir(), 'docs-chromium-'));
}, 120_000);

afterAll(async () => {
  await app?.close();
  await proxy?.close();
  await deps?.close();
  if (profiles) await rm(profiles, { recursive: true, force: true });
});

describe('GET /docs', () => {
  test('answers an HTML page naming no other origin, and the Redoc bundle it loads, from this process', async () => {
    const page = await http(app.url, 'GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const specUrl = /<redoc spec-url="([^"]+)">/.exec(page.text)?.[1];
    expect(specUrl).toBeDefined();
    const spec = await http(app.url, 'GET', specUrl!);
    expect(spec.status).toBe(200);
    expect(spec.headers.get('content-type')).toMatch(/^application\/json/);
    expect(spec.body.openapi).toBe('3.1.0');
    expect(page.text).not.toMatch(/https?:|\/\/[a-z]/i);

    const src = /<script src="(\/docs\/[^"]+\.js)"><\/script>/.exec(page.text)?.[1];
    expect(src).toBeDefined();
    const bundle = await http(app.url, 'GET', src!);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/^(text|application)\/javascript/);
    expect(bundle.headers.get('cache-control')).toMatch(/max-age=\d{7,}/);
    expect(bundle.text).toContain('Redoc');
    expect(bundle.text).not.toContain('cdn.redoc.ly');
  });

  test('chromium shows every area and the parameters of GET /products/categories/suggest, fetching nothing elsewhere', async () => {
    const doc = (await http(app.url, 'GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { tags?: string[]; parameters?: { name: string; in: string }[] }>>;
    };
    const areas = [
      ...new Set(Object.values(doc.paths).flatMap((ops) => Object.values(ops).flatMap((op) => op.tags ?? []))),
    ];
    expect(areas).toEqual(expect.arrayContaining(['products', 'orders', 'publication']));
    const suggest = doc.paths[SUGGEST_PATH]?.get;
    expect(suggest?.parameters?.map((p) => p.name)).toEqual(expect.arrayContaining(SUGGEST_PARAMS));

    const started = Date.now();
    const { dom, log } = await render(`${app.url}/docs`);
    console.log(`chromium rendered /docs in ${Date.now() - started} ms (${dom.length} characters of DOM)`);

    const text = visibleText(dom);
    for (const area of areas) expect(text).toContain(area);
    const section = visibleText(operationSection(dom, SUGGEST_PATH, 'get'));
    expect(section).toContain(SUGGEST_PATH);
    for (const name of SUGGEST_PARAMS) expect(section).toMatch(new RegExp(`\\b${name}\\b`));

    expect(pageRequests(proxy.asked)).toEqual([]);
    // a request the page's Content-Security-Policy refused never reaches the proxy: chromium logs it
    expect(log).not.toMatch(/Content Security Policy/i);
  });

  test('the recording proxy does see a request to another origin (the check above can fail)', async () => {
    const before = proxy.asked.length;
    await render('data:text/html,<img src="http://elsewhere.test/pixel.png">');
    expect(pageRequests(proxy.asked.slice(before))).toEqual([expect.stringContaining('elsewhere.test')]);
  });
});

import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { defineRoutes } from '../route';

/**
 * `GET /docs`: the OpenAPI document rendered by Redoc's standalone bundle, which this process
 * serves from node_modules, so the page works offline and behind a firewall: no CDN, no web fonts
 * (the page names none, and Redoc's theme only names font families, it loads none).
 */

// resolved at start-up: a missing bundle fails the boot, not the first reader
const BUNDLE_FILE = require.resolve('redoc/bundles/redoc.standalone.js');
const { version: REDOC_VERSION } = JSON.parse(readFileSync(require.resolve('redoc/package.json'), 'utf8')) as {
  version: string;
};
/** The version is in the path, so the bundle can be cached for good and an upgrade still reaches every browser. */
const BUNDLE_PATH = `/docs/redoc-${REDOC_VERSION}.standalone.js`;
/** The document as the page reads it (see withHoistedDefs); /openapi.json stays as built. */
const SPEC_PATH = '/docs/openapi.json';
const ONE_YEAR_SECONDS = 365 * 24 * 3600;

/**
 * Only our own origin, whatever the bundle or the document may name. Redoc injects its styles
 * (styled-components), compiles schemas with `new Function` (ajv) and runs its search index in a
 * worker built from a blob, hence the three exceptions.
 */
const PAGE_POLICY = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'self'",
].join('; ');

let bundle: Promise<string> | undefined;

/**
 * The one thing the bundle would load from elsewhere: the "API docs by Redocly" logo, an image on
 * Redoc's CDN. A `data:,` source is no image: it fails at once and Redoc drops it (its onError), so the
 * page asks nothing of another origin and the Content-Security-Policy has nothing to refuse.
 */
const REMOTE_LOGO = '"https://cdn.redoc.ly/redoc/logo-mini.svg"';
const withoutRemoteLogo = (code: string): string => code.replace(REMOTE_LOGO, '"data:,"');

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The OpenAPI document with each embedded schema resource's `$defs` moved to components.schemas.
 * A schema with its own `$id` that refers to `#/$defs/x` (shared/flows/definition.ts) is valid
 * OpenAPI 3.1, but Redoc 2 resolves every `$ref` against the whole document and fails the page
 * on it; pointed at `#/components/schemas/<resource>.x`, the same schemas render.
 */
export function withHoistedDefs(doc: Json): Json {
  const hoisted: Json = {};
  const visit = (node: unknown, resource: string | undefined): unknown => {
    if (Array.isArray(node)) return node.map((n) => visit(n, resource));
    if (!isObject(node)) return node;
    const { $id, $defs, ...rest } = node;
    let scope = resource;
    const out: Json = rest;
    if (typeof $id === 'string' && isObject($defs)) {
      scope = $id.replace(/\.json$/, '').replace(/[^A-Za-z0-9._-]/g, '_');
      for (const [name, def] of Object.entries($defs)) hoisted[`${scope}.${name}`] ??= visit(def, scope);
    } else {
      if ($id !== undefined) out.$id = $id;
      if ($defs !== undefined) out.$defs = $defs;
    }
    for (const [key, value] of Object.entries(out)) {
      if (key === '$ref' && scope && typeof value === 'string' && value.startsWith('#/$defs/'))
        out.$ref = `#/components/schemas/${scope}.${value.slice('#/$defs/'.length)}`;
      else if (key !== '$ref') out[key] = visit(value, scope);
    }
    return out;
  };
  const out = visit(doc, undefined) as Json;
  const components = isObject(out.components) ? out.components : {};
  const schemas = isObject(components.schemas) ? components.schemas : {};
  return { ...out, components: { ...components, schemas: { ...schemas, ...hoisted } } };
}

/** One rendering per app: the document is built once, at start-up. */
const forRedoc = new WeakMap<Json, Json>();

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Absolute URLs: the page also answers at /docs/ and /v1/docs, where relative ones would miss. */
function page(title: string): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    '<style>body { margin: 0; }</style>',
    '</head>',
    '<body>',
    `<redoc spec-url="${SPEC_PATH}"></redoc>`,
    `<script src="${BUNDLE_PATH}"></script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

export const docsRoutes = defineRoutes([
  {
    method: 'get',
    path: '/docs',
    summary: 'This API’s reference: the OpenAPI document, browsable (Redoc)',
    description:
      'A page that renders /openapi.json with the Redoc bundle this process serves; it loads nothing from elsewhere.',
    tags: ['system'],
    auth: 'public',
    responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
    handler: (ctx) => {
      const info = (ctx.openapi.info ?? {}) as { title?: string };
      ctx.set('Content-Security-Policy', PAGE_POLICY);
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = page(`${info.title ?? 'API'}: API reference`);
    },
  },
  {
    method: 'get',
    path: SPEC_PATH,
    summary:
      'This OpenAPI document as GET /docs renders it: the same operations and schemas, with embedded `$defs` moved to components.schemas',
    tags: ['system'],
    auth: 'public',
    handler: (ctx) => {
      let doc = forRedoc.get(ctx.openapi);
      if (!doc) forRedoc.set(ctx.openapi, (doc = withHoistedDefs(ctx.openapi)));
      ctx.body = doc;
    },
  },
  {
    method: 'get',
    path: BUNDLE_PATH,
    summary: `Redoc’s standalone bundle (${REDOC_VERSION}), as GET /docs loads it`,
    tags: ['system'],
    auth: 'public',
    responses: { 200: { description: 'JavaScript', contentType: 'text/javascript' } },
    handler: async (ctx) => {
      // read once, on first use: most API processes never serve it
      bundle ??= readFile(BUNDLE_FILE, 'utf8').then(withoutRemoteLogo, (err: unknown) => {
        bundle = undefined;
        throw err;
      });
      ctx.set('Cache-Control', `public, max-age=${ONE_YEAR_SECONDS}, immutable`);
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.type = 'text/javascript; charset=utf-8';
      ctx.body = await bundle;
    },
  },
]);

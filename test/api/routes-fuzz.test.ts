import { PutObjectCommand } from '@aws-sdk/client-s3';
import fc from 'fast-check';
import { buildOpenApi } from '../../api/openapi';
import { allRoutes } from '../../api/routes';
import { allCollections } from '../../shared/collections';
import { nativeLayout } from '../../shared/csv/layouts/native';
import { toCsvText } from '../../shared/csv/parse';
import { ChannelServer } from '../helpers/channel-server';
import {
  caseArb,
  isWrite,
  namedValues,
  operations,
  requestPath,
  routeName,
  STAGGER_MS,
  sweepCases,
  type FuzzCase,
  type Hints,
  type Operation,
} from '../helpers/openapi-fuzz';
import { http, TestDeps } from '../helpers/stack';

/**
 * Property-based fuzzing of EVERY route of the API, generated from the OpenAPI document the API
 * serves (`GET /openapi.json`, built from the route declarations): a route is covered by being
 * declared. Each route gets a tenant of its own (a key with every scope) holding the few real
 * resources its path and body can name (test/helpers/openapi-fuzz.ts hands them to the generators
 * by parameter and property name), then a deterministic sweep (every hostile class at every place
 * the schema gives it, see `sweepCases`) and FUZZ_SCALE × 20 random cases (valid, near-valid with
 * one keyword broken, hostile); write cases are now and then sent several times at once, a few ms
 * apart (STAGGER_MS), to race. For every answer:
 *   - never a 5xx (but a 5xx the route declares: GET /health's 503);
 *   - a 4xx is the area's error envelope: `{error: {code, message}}` under /orders, a flat
 *     `{code, message}` elsewhere (api/middleware/errors.ts);
 *   - on a write route (POST/PUT/PATCH/DELETE), a 4xx wrote nothing: the tenant's document count in
 *     every collection (shared/collections.ts) is the same before and after the request.
 * A 2xx is allowed everywhere (routes whose 2xx starts jobs, revokes tokens or writes are fuzzed
 * too; after a 2xx of a write the tenant's jobs are awaited before the next count).
 *
 * Each route's property must run every planned case (no time limit stops it quietly: a route
 * over ROUTE_LIMIT_MS fails). Violations are collected, not shrunk: each route's test lists them
 * all (route, input, status, answer), and the file ends with a table of cases and statuses per route.
 * The seed is printed at the start: FUZZ_SEED=<n> replays a run (FUZZ_ROUTES=<regex> with it
 * replays just the matching routes, FUZZ_VERBOSE=1 prints each case as it goes). FUZZ_SCALE=<n>
 * multiplies the random cases; FUZZ_CONCURRENCY routes run at once (3).
 */

const SCALE = Math.max(1, Number(process.env.FUZZ_SCALE ?? 1));
const RANDOM_RUNS = Math.round(20 * SCALE);
/** The fewest cases a route may run; every route also runs its sweep, so it plans more. */
const MIN_CASES = RANDOM_RUNS;
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const CONCURRENCY = Math.max(1, Number(process.env.FUZZ_CONCURRENCY ?? 3));
/** FUZZ_VERBOSE=1 prints every case as it runs. */
const VERBOSE = Boolean(process.env.FUZZ_VERBOSE);
const ROUTE_LIMIT_MS = 150_000 * SCALE;
const REQUEST_TIMEOUT_MS = 60_000;

jest.setTimeout(600_000 * SCALE);

/**
 * Routes not fuzzed, each with the reason: only a route whose fuzzing would take the suite down
 * belongs here. None does today.
 */
const EXCLUDED: Record<string, string> = {};

/**
 * 4xx answers that report work done, as the spec has them: the count check leaves out the
 * collections named (the answer's other collections are still checked).
 */
const WRITING_4XX: { route: string; code: string; collections: string[]; why: string }[] = [
  {
    route: 'POST /products/export',
    code: 'PRODUCT_EXPORT_FAILED',
    collections: ['jobs', 'publication_items', 'publication_locks'],
    why: 'a publication that ran and failed on the channel is recorded as a job with its items (spec: 400 PRODUCT_EXPORT_FAILED)',
  },
];

/**
 * 4xx bodies the spec gives literally, outside the area's envelope: accepted as they are, on
 * their route only (the OpenAPI description of the route says so too).
 */
const SPEC_BODIES: { route: string; status: number; body: unknown; why: string }[] = [
  {
    route: 'GET /products/inventory',
    status: 400,
    body: { error: 'Missing required query parameter: locationId' },
    why: "the spec's plain answer for a missing locationId (no code)",
  },
];

// ---------------------------------------------------------------------------------------------
// The stack, the document
// ---------------------------------------------------------------------------------------------

/** FUZZ_ROUTES=<regex> fuzzes only the routes whose `METHOD /path` matches (to chase one failure). */
const ONLY = process.env.FUZZ_ROUTES ? new RegExp(process.env.FUZZ_ROUTES, 'i') : null;
const chosen = (name: string) => !(name in EXCLUDED) && (!ONLY || ONLY.test(name));
/** The routes as declared, for the tests' names; the fuzzing itself reads the document the API serves. */
const declared = operations(buildOpenApi(allRoutes)).map(routeName).filter(chosen);

let deps: TestDeps;
let app: { url: string; close: () => Promise<void> };
let channel: ChannelServer;
let served: Operation[] = [];
/** Values the document names for each property name (see `namedValues`). */
let named = new Map<string, string[]>();
/** Every route of the served document, in its order (a route's seed is SEED + its place here). */
let allNames: string[] = [];
const results = new Map<string, Promise<RouteResult>>();
const started = Date.now();

beforeAll(async () => {
  deps = await TestDeps.open();
  app = await deps.serveApp();
  channel = await new ChannelServer('fuzz-channel-secret-0123456789').start();
  // a channel with a category predictor: suggestions and publications categorize for real
  channel.predictor = (title) => [{ categoryId: 'FZ-1', categoryName: `Fuzz ${title.slice(0, 20)}`, path: ['Fuzz'] }];
  const doc = await http(app.url, 'GET', '/openapi.json');
  if (doc.status !== 200) throw new Error(`GET /openapi.json: ${doc.status} ${doc.text.slice(0, 300)}`);
  const all = operations(doc.body);
  named = namedValues(all.flatMap((op) => [op.body, op.query]));
  allNames = all.map(routeName);
  served = all.filter((op) => chosen(routeName(op)));
  process.stderr.write(
    `[routes-fuzz] ${served.length} routes, seed ${SEED} (FUZZ_SEED=${SEED} replays), FUZZ_SCALE=${SCALE}, ${CONCURRENCY} at a time\n`,
  );
  startAll(served);
});

afterAll(async () => {
  const all = await Promise.all([...results.values()].map((p) => p.catch(() => null)));
  report(all.filter((r): r is RouteResult => r !== null));
  await channel?.close();
  await app?.close();
  await deps?.close();
});

test('the served document lists every declared route, and every excluded route exists', () => {
  expect(served.map(routeName)).toEqual(declared);
  const all = operations(buildOpenApi(allRoutes)).map(routeName);
  for (const name of Object.keys(EXCLUDED)) expect(all).toContain(name);
});

describe('every route of /openapi.json, fuzzed', () => {
  test.each(declared)('%s', async (name) => {
    const result = results.get(name);
    if (!result) throw new Error(`${name} is declared but the served document does not list it`);
    const r = await result;
    if (r.error) throw new Error(`${name}: ${r.error}`);
    if (r.violations.length)
      throw new Error(`${name}: ${r.violations.length} violations\n${formatViolations(r.violations)}`);
    // every planned case ran: a property cut short is a failure, never a quiet pass
    expect(r.ran).toBe(r.planned);
    expect(r.ran).toBeGreaterThanOrEqual(MIN_CASES);
  });
});

// ---------------------------------------------------------------------------------------------
// Tenants and what they hold
// ---------------------------------------------------------------------------------------------

/** Kinds of real values a tenant may hold, each seeded on demand by `seed`. */
type Kind =
  | 'productIds'
  | 'skus'
  | 'productRefs'
  | 'locationIds'
  | 'zoneCodes'
  | 'postalCodes'
  | 'orderIds'
  | 'externalIds'
  | 'channelIds'
  | 'transferIds'
  | 'adjustmentIds'
  | 'lotNumbers'
  | 'countIds'
  | 'handlerIds'
  | 'bulkOpIds'
  | 'csvImportJobs'
  | 'csvExportJobs'
  | 'publicationJobs'
  | 'flowJobs'
  | 's3Keys'
  | 'refreshTokens'
  | 'materialSkus'
  | 'supplySkus'
  | 'modifierGroupIds'
  | 'customerIds';

/** The kind of a path parameter, by its name and the segment before it. */
function pathKind(path: string, param: string): Kind | undefined {
  const before = path.split(`/{${param}}`)[0].split('/').pop();
  switch (param) {
    case 'orderId':
      return 'orderIds';
    case 'sku':
      if (path.startsWith('/products/materials')) return 'materialSkus';
      if (path.startsWith('/products/supplies')) return 'supplySkus';
      return 'skus';
    case 'locationId':
      return 'locationIds';
    case 'groupId':
      return 'modifierGroupIds';
    case 'channelId':
      return 'channelIds';
    case 'lotNumber':
      return 'lotNumbers';
    case 'postalCode':
      return 'postalCodes';
    case 'code':
      return 'zoneCodes';
    case 'jobId':
      if (path.startsWith('/products/bulk/csv/import')) return 'csvImportJobs';
      if (path.startsWith('/products/bulk/csv/export')) return 'csvExportJobs';
      if (path.startsWith('/products/export')) return 'publicationJobs';
      if (path.startsWith('/products/bulk/flow')) return 'flowJobs';
      return undefined;
    case 'id':
      return (
        {
          products: 'productIds',
          locations: 'locationIds',
          channels: 'channelIds',
          transfers: 'transferIds',
          adjustments: 'adjustmentIds',
          counts: 'countIds',
          handlers: 'handlerIds',
          operations: 'bulkOpIds',
          customers: 'customerIds',
        } as Record<string, Kind>
      )[before ?? ''];
    default:
      return undefined;
  }
}

/** The kind of a body or query property, by its name. */
function valueKind(name: string): Kind | undefined {
  if (/^(sku|productSku|parentSku|skus|variantSkus)$/.test(name)) return 'skus';
  if (/^(locationId|originId|destinationId|locationIds)$/.test(name)) return 'locationIds';
  if (name === 'availableAt') return 'locationIds';
  if (name === 'channelId') return 'channelIds';
  if (name === 'externalId') return 'externalIds';
  if (name === 'productIds') return 'productRefs';
  if (name === 's3Key') return 's3Keys';
  if (name === 'refreshToken') return 'refreshTokens';
  if (name === 'orderId') return 'orderIds';
  if (name === 'materialSku') return 'materialSkus';
  if (name === 'supplySku') return 'supplySkus';
  if (name === 'groupId') return 'modifierGroupIds';
  if (name === 'customerId') return 'customerIds';
  return undefined;
}

/** Property names anywhere in a schema (what `valueKind` reads). */
function propertyNames(schema: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const s of schema) propertyNames(s, out);
  else if (schema && typeof schema === 'object') {
    for (const [k, v] of Object.entries(schema)) {
      if (k === 'properties' && v && typeof v === 'object') for (const name of Object.keys(v)) out.add(name);
      if (k !== 'enum' && k !== 'const' && k !== 'default') propertyNames(v, out);
    }
  }
  return out;
}

/** What a route's requests can name, plus what its area lists (so its reads find something). */
function kindsFor(op: Operation): Kind[] {
  const kinds = new Set<Kind>();
  for (const p of op.params) {
    const k = pathKind(op.path, p);
    if (k) kinds.add(k);
  }
  for (const name of propertyNames([op.body, op.query])) {
    const k = valueKind(name);
    if (k) kinds.add(k);
  }
  if (op.path.startsWith('/inventory')) kinds.add('lotNumbers').add('adjustmentIds');
  if (op.path.startsWith('/products')) kinds.add('productIds');
  if (op.path.startsWith('/orders')) kinds.add('orderIds');
  if (op.path.startsWith('/locations')) kinds.add('locationIds');
  if (op.path.startsWith('/channels')) kinds.add('channelIds');
  if (op.path.startsWith('/customers')) kinds.add('customerIds');
  if (op.path.startsWith('/products/materials')) kinds.add('materialSkus').add('locationIds');
  if (op.path.startsWith('/products/supplies')) kinds.add('supplySkus').add('locationIds');
  // a bill of materials and modifiers (on the catalog's products) for BOM, modifier and consumption routes
  if (/\/(bom|modifiers)\b|\/consumption\//.test(op.path)) kinds.add('modifierGroupIds').add('locationIds');
  return [...kinds];
}

interface Tenant {
  tenantId: string;
  key: string;
  known: Map<Kind, string[]>;
  seeded: Map<string, Promise<void>>;
  /** The counts after the last request, while nothing else can have written since. */
  counts: Record<string, number> | null;
  /** Jobs found never ending: reported once, then no longer awaited. */
  stuckJobs: Set<string>;
}

async function newTenant(op: Operation): Promise<Tenant> {
  const { tenantId, key } = await deps.tenantWithKey(undefined, `fuzz ${routeName(op)}`);
  const tenant: Tenant = {
    tenantId,
    key,
    known: new Map(),
    seeded: new Map(),
    counts: null,
    stuckJobs: new Set(),
  };
  for (const kind of kindsFor(op)) await seed(tenant, kind);
  return tenant;
}

function remember(t: Tenant, kind: Kind, ...values: string[]): void {
  for (const v of values)
    if (typeof v !== 'string' || !v) throw new Error(`seeding ${kind}: got ${JSON.stringify(v)}, not an id`);
  t.known.set(kind, [...(t.known.get(kind) ?? []), ...values]);
}

/** A request the seed needs to succeed. */
async function call(t: Tenant, method: string, path: string, body?: unknown): Promise<any> {
  const res = await http(app.url, method, path, { key: t.key, body });
  if (res.status >= 300) throw new Error(`seeding ${method} ${path}: ${res.status} ${res.text.slice(0, 500)}`);
  return res.body;
}

const SKUS = { withVariant: 'FZ-A', variant: 'FZ-A-V1', plain: 'FZ-B' };

/** Seeds what `kind` needs once per tenant (and what that needs first). */
const seed = (t: Tenant, kind: Kind): Promise<void> => kit(t, KIT_OF[kind]);

/** Runs a kit once per tenant. */
function kit(t: Tenant, name: keyof typeof KITS): Promise<void> {
  let done = t.seeded.get(name);
  if (!done) {
    done = KITS[name](t);
    t.seeded.set(name, done);
  }
  return done;
}

const KIT_OF: Record<Kind, keyof typeof KITS> = {
  productIds: 'catalog',
  skus: 'catalog',
  productRefs: 'catalog',
  locationIds: 'locations',
  zoneCodes: 'locations',
  postalCodes: 'locations',
  orderIds: 'orders',
  externalIds: 'orders',
  channelIds: 'channel',
  transferIds: 'transfer',
  adjustmentIds: 'adjustments',
  lotNumbers: 'adjustments',
  countIds: 'count',
  handlerIds: 'handler',
  bulkOpIds: 'bulkOps',
  csvImportJobs: 'csvImport',
  csvExportJobs: 'csvExport',
  publicationJobs: 'publication',
  flowJobs: 'flow',
  s3Keys: 'upload',
  refreshTokens: 'token',
  materialSkus: 'materials',
  supplySkus: 'materials',
  modifierGroupIds: 'recipes',
  customerIds: 'customers',
};

const csvOf = (rows: Record<string, string>[]) => toCsvText(nativeLayout.columns, rows);

const KITS = {
  async catalog(t: Tenant) {
    const a = await call(t, 'POST', '/products', {
      sku: SKUS.withVariant,
      title: { value: 'Linen shirt' },
      price: 20,
      brand: 'Acme',
      tags: ['linen'],
      status: 'active',
      options: [{ id: 'size', name: 'Size', values: ['M'] }],
      variants: [
        {
          sku: SKUS.variant,
          title: { value: 'M' },
          price: 20,
          position: 0,
          options: [{ id: 'size', name: 'Size', value: 'M' }],
        },
      ],
    });
    const b = await call(t, 'POST', '/products', {
      sku: SKUS.plain,
      title: { value: 'Mug' },
      price: 5,
      status: 'active',
    });
    remember(t, 'productIds', a.id, b.id);
    remember(t, 'skus', SKUS.withVariant, SKUS.variant, SKUS.plain);
    remember(t, 'productRefs', a.id, SKUS.plain);
  },
  async locations(t: Tenant) {
    const store = await call(t, 'POST', '/locations', {
      name: 'Store',
      type: 'location',
      code: 'ST1',
      address: { street: 'Calle 1', city: 'CDMX', postalCode: '06700', country: 'MX' },
    });
    await call(t, 'POST', `/locations/${store.id}/zones`, { code: 'A1', name: 'Aisle 1', type: 'zone' });
    const list = await call(t, 'GET', '/locations?limit=10');
    const system = (list.locations as { id: string; isSystem: boolean }[]).find((l) => l.isSystem);
    remember(t, 'locationIds', ...(system ? [system.id] : []), store.id);
    remember(t, 'zoneCodes', 'A1');
    remember(t, 'postalCodes', '06700');
  },
  async materials(t: Tenant) {
    await seed(t, 'locationIds');
    const [system, store] = t.known.get('locationIds')!;
    await call(t, 'POST', '/products/materials', {
      sku: 'FZ-FLOUR',
      title: 'Flour',
      baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
      alternativeUnits: [{ code: 'bag', conversionFactor: 25 }],
      costingMethod: 'fifo',
      initialCost: 1.5,
      lotTrackingEnabled: true,
      stockAlerts: { minStock: 2, reorderPoint: 5, reorderQuantity: 20 },
    });
    await call(t, 'POST', `/products/materials/FZ-FLOUR/stock/${store}`, {
      quantity: 12.5,
      lot: { lotNumber: 'L1', costPerUnit: 2 },
    });
    await call(t, 'POST', `/products/materials/FZ-FLOUR/stock/${system}`, {
      quantity: 3,
      lot: { lotNumber: 'L2', costPerUnit: 2.5 },
    });
    await call(t, 'POST', '/products/supplies', { sku: 'FZ-BOX', title: 'Box', supplyCategory: 'packaging' });
    await call(t, 'POST', `/products/supplies/FZ-BOX/stock/${store}`, { quantity: 40 });
    remember(t, 'materialSkus', 'FZ-FLOUR');
    remember(t, 'supplySkus', 'FZ-BOX');
  },
  async recipes(t: Tenant) {
    await Promise.all([seed(t, 'skus'), seed(t, 'materialSkus')]);
    await call(t, 'PUT', `/products/${SKUS.plain}/bom`, {
      consumptionMode: 'on_sale',
      yield: { quantity: 1, unit: 'pza' },
      components: [{ materialSku: 'FZ-FLOUR', quantity: 0.25, unit: 'kg' }],
      wastagePercent: 5,
    });
    const res = await call(t, 'PUT', `/products/${SKUS.withVariant}/modifiers`, {
      enabled: true,
      groups: [
        {
          name: 'Size',
          selectionRule: { minSelections: 1, maxSelections: 1, exactlyOne: true },
          modifiers: [{ name: 'Regular' }, { name: 'Large', priceAdjustment: { type: 'fixed', value: 2 } }],
        },
        {
          name: 'Extras',
          selectionRule: { minSelections: 0, maxSelections: 3, allowDuplicates: true, maxPerModifier: 2 },
          modifiers: [{ name: 'Flour', inventoryConsumption: { materialSku: 'FZ-FLOUR', quantity: 0.1, unit: 'kg' } }],
        },
      ],
    });
    remember(t, 'modifierGroupIds', ...res.modifiersConfig.groups.map((g: { id: string }) => g.id));
  },
  async stock(t: Tenant) {
    await Promise.all([seed(t, 'skus'), seed(t, 'locationIds')]);
    const [system, store] = t.known.get('locationIds')!;
    await call(t, 'PUT', `/inventory/location/${store}/product/${SKUS.withVariant}`, { stock: 20 });
    await call(t, 'PUT', `/inventory/location/${store}/product/${SKUS.variant}`, { stock: 4 });
    await call(t, 'PUT', `/inventory/location/${system}/product/${SKUS.plain}`, { stock: 5 });
  },
  async orders(t: Tenant) {
    await seed(t, 'skus');
    for (const externalId of ['EXT-1', 'EXT-2']) {
      const o = await call(t, 'POST', '/orders', {
        externalId,
        customerInfo: { name: 'Ana' },
        items: [{ sku: SKUS.plain, quantity: 1 }],
      });
      remember(t, 'orderIds', o.data._id);
      remember(t, 'externalIds', externalId);
    }
  },
  async customers(t: Tenant) {
    await seed(t, 'skus');
    // one with every member and an order (delete refuses it, redact changes the order), one bare
    const withOrder = await call(t, 'POST', '/customers', {
      name: 'Ana López',
      email: 'Ana@Example.com',
      phone: '+52 55 0000',
      addresses: [{ street: 'Calle 1', city: 'CDMX', zipCode: '06700', country: 'MX' }],
      taxId: 'LOAA800101',
      tags: ['vip'],
      notes: 'fuzz',
    });
    const bare = await call(t, 'POST', '/customers', { name: 'Bruno' });
    await call(t, 'POST', '/orders', {
      externalId: 'EXT-C1',
      customerInfo: { name: 'Ana López', email: 'ana@example.com' },
      shippingAddress: { street: 'Calle 1', city: 'CDMX', zipCode: '06700', country: 'MX' },
      customerId: withOrder.id,
      items: [{ sku: SKUS.plain, quantity: 1 }],
    });
    remember(t, 'customerIds', withOrder.id, bare.id);
  },
  async channel(t: Tenant) {
    const c = await call(t, 'POST', '/channels', {
      name: 'Fuzz channel',
      type: 'custom',
      settings: { endpointUrl: channel.url },
      secret: 'fuzz-channel-secret-0123456789',
    });
    remember(t, 'channelIds', c.id);
  },
  async transfer(t: Tenant) {
    await kit(t, 'stock');
    const [system, store] = t.known.get('locationIds')!;
    const tr = await call(t, 'POST', '/inventory/transfers', {
      originId: store,
      destinationId: system,
      productsList: [{ sku: SKUS.withVariant, quantity: 1 }],
    });
    remember(t, 'transferIds', tr.id);
  },
  async adjustments(t: Tenant) {
    await kit(t, 'stock');
    const [, store] = t.known.get('locationIds')!;
    const approved = await call(t, 'POST', '/inventory/adjustments', {
      locationId: store,
      sku: SKUS.withVariant,
      newQuantity: 25,
      reason: 'restock',
    });
    await call(t, 'POST', `/inventory/adjustments/${approved.id}/approve`, {});
    const pending = await call(t, 'POST', '/inventory/adjustments', {
      locationId: store,
      sku: SKUS.variant,
      newQuantity: 7,
      reason: 'found',
    });
    remember(t, 'adjustmentIds', pending.id, approved.id);
    const lots = await call(t, 'GET', '/inventory/lots?limit=10');
    remember(t, 'lotNumbers', ...(lots.lots as { lotNumber: string }[]).map((l) => l.lotNumber));
  },
  async count(t: Tenant) {
    await kit(t, 'stock');
    const [, store] = t.known.get('locationIds')!;
    const c = await call(t, 'POST', '/inventory/counts', { name: 'Cycle', locationId: store, countType: 'cycle' });
    remember(t, 'countIds', c.id);
  },
  async handler(t: Tenant) {
    const h = await call(t, 'POST', '/inventory/handlers', { name: 'ERP', type: 'erp' });
    remember(t, 'handlerIds', h.id);
  },
  async bulkOps(t: Tenant) {
    await seed(t, 'skus');
    // imports of products of their own: each can be rolled back (and raced on)
    for (const sku of ['FZ-C', 'FZ-D', 'FZ-E', 'FZ-F', 'FZ-G'])
      await call(t, 'POST', '/products/bulk/csv/import', {
        content: csvOf([{ sku, title: `Imported ${sku}`, price: '3' }]),
        createIfNotExists: true,
      });
    const ops = await call(t, 'GET', '/products/bulk/operations');
    remember(t, 'bulkOpIds', ...(ops.operations as { id: string }[]).map((o) => o.id));
  },
  async upload(t: Tenant) {
    const s3Key = `uploads/${t.tenantId}/fuzz.csv`;
    await deps.s3.send(
      new PutObjectCommand({
        Bucket: deps.config.s3.bucket,
        Key: s3Key,
        Body: csvOf([{ sku: 'FZ-U', title: 'Uploaded', price: '2' }]),
      }),
    );
    remember(t, 's3Keys', s3Key);
  },
  async csvImport(t: Tenant) {
    await seed(t, 's3Keys');
    const job = await call(t, 'POST', '/products/bulk/csv/import', {
      s3Key: t.known.get('s3Keys')![0],
      config: { format: 'native', createIfNotExists: true },
    });
    remember(t, 'csvImportJobs', job.jobId);
    if ((await settleJobs(t)).length) throw new Error('seeding: the CSV import job did not finish');
  },
  async csvExport(t: Tenant) {
    await seed(t, 'skus');
    const job = await call(t, 'POST', '/products/bulk/csv/export', { format: 'native', selection: 'all' });
    remember(t, 'csvExportJobs', job.jobId);
    if ((await settleJobs(t)).length) throw new Error('seeding: the CSV export job did not finish');
  },
  async publication(t: Tenant) {
    await Promise.all([seed(t, 'skus'), seed(t, 'channelIds')]);
    const job = await call(t, 'POST', '/products/export', {
      channelId: t.known.get('channelIds')![0],
      mode: 'single',
      productIds: [SKUS.plain],
    });
    remember(t, 'publicationJobs', job.jobId);
  },
  async flow(t: Tenant) {
    await seed(t, 'skus');
    const run = await call(t, 'POST', '/products/bulk/flow/preview', {
      selection: { skus: [SKUS.plain] },
      rules: [{ actions: [{ type: 'add', field: 'tags', values: ['fuzz'] }] }],
    });
    remember(t, 'flowJobs', run.jobId);
  },
  async token(t: Tenant) {
    const tokens = await call(t, 'POST', '/auth/token');
    remember(t, 'refreshTokens', tokens.refreshToken);
  },
};

function hintsFor(op: Operation, t: Tenant): Hints {
  return {
    path: (name) => {
      const kind = pathKind(op.path, name);
      return kind ? (t.known.get(kind) ?? []) : [];
    },
    value: (name) => {
      const kind = valueKind(name);
      return kind ? (t.known.get(kind) ?? []) : (named.get(name) ?? []);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

const COLLECTIONS = allCollections.map((c) => c.name);

/** The tenant's document count in every collection (by `tenantId` only: cheap while the tenant is small). */
async function snapshot(t: Tenant): Promise<Record<string, number>> {
  const counts = await Promise.all(
    COLLECTIONS.map((name) => deps.db.collection(name).countDocuments({ tenantId: t.tenantId })),
  );
  return Object.fromEntries(COLLECTIONS.map((name, i) => [name, counts[i]]));
}

const SETTLE_MS = 20_000;

/**
 * Waits until none of the tenant's jobs is queued or running (a 2xx may have started one), but
 * for jobs already found stuck. Answers the jobs that are still running after SETTLE_MS (each
 * reported once, then no longer awaited: a job that never ends must not stall the route).
 */
async function settleJobs(t: Tenant): Promise<string[]> {
  const until = Date.now() + SETTLE_MS;
  for (;;) {
    const running = (
      await deps.db
        .collection<{ _id: string }>('jobs')
        .find({ tenantId: t.tenantId, status: { $in: ['queued', 'processing'] } }, { projection: { _id: 1 } })
        .toArray()
    )
      .map((j) => j._id)
      .filter((id) => !t.stuckJobs.has(id));
    if (!running.length) return [];
    if (Date.now() > until) {
      for (const id of running) t.stuckJobs.add(id);
      return running;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Answer {
  status: number;
  text: string;
  body: any;
  ms: number;
}

async function send(method: string, url: string, key: string, body: FuzzCase['body']): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body) headers['content-type'] = body.contentType ?? 'application/json';
  const at = Date.now();
  try {
    const res = await fetch(url, {
      method: method.toUpperCase(),
      headers,
      body: body?.text,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: kept as text
    }
    return { status: res.status, text, body: parsed, ms: Date.now() - at };
  } catch (err) {
    return { status: 0, text: `no answer: ${(err as Error).message}`, body: undefined, ms: Date.now() - at };
  }
}

/** The envelope a path's 4xx must have: orders' nested one, or the flat one (see api/middleware/errors.ts). */
function isOrdersArea(pathname: string): boolean {
  const first =
    pathname
      .toLowerCase()
      .replace(/^\/v1(?=\/|$)/, '')
      .split('/')[1] ?? '';
  return first === 'orders';
}

function envelopeProblem(answer: Answer, orders: boolean): string | null {
  const b = answer.body;
  if (!b || typeof b !== 'object' || Array.isArray(b)) return 'the 4xx body is not a JSON object';
  if (orders) {
    const e = b.error;
    if (!e || typeof e.code !== 'string' || typeof e.message !== 'string' || !e.code || !e.message)
      return 'an orders 4xx must be {error: {code, message}}';
    return null;
  }
  if (typeof b.code !== 'string' || typeof b.message !== 'string' || !b.code || !b.message)
    return 'a 4xx outside orders must be a flat {code, message}';
  if ('error' in b) return 'a flat error must not carry `error`';
  return null;
}

interface Violation {
  route: string;
  problem: string;
  input: string;
  request: string;
  status: number;
  answer: string;
}

interface RouteResult {
  name: string;
  planned: number;
  ran: number;
  requests: number;
  countChecks: number;
  statuses: Map<number, number>;
  violations: Violation[];
  error?: string;
  ms: number;
}

const clip = (s: string, max = 400) => (s.length > max ? `${s.slice(0, max)}… (${s.length} chars)` : s);
const show = (s: string, max = 400) => clip(JSON.stringify(s).slice(1, -1), max);

/** Sends one case and checks its answers; answers their statuses. */
async function runCase(op: Operation, t: Tenant, c: FuzzCase, r: RouteResult): Promise<string[]> {
  const name = routeName(op);
  const url = app.url + requestPath(op, c);
  const orders = isOrdersArea(new URL(url).pathname);
  const write = isWrite(op);
  const declared5xx = new Set(op.statuses.filter((s) => s >= 500));
  const before = write ? (t.counts ?? (await snapshot(t))) : null;
  t.counts = null;
  const answers = await Promise.all(
    Array.from({ length: c.concurrency }, async (_, i) => {
      await new Promise((r) => setTimeout(r, STAGGER_MS[i] ?? 0));
      return send(op.method, url, t.key, c.body);
    }),
  );

  const requestLine = () =>
    `${op.method.toUpperCase()} ${clip(url.slice(app.url.length), 300)}${c.concurrency > 1 ? ` (×${c.concurrency}, ${STAGGER_MS.slice(0, c.concurrency).join('/')} ms apart)` : ''}${
      c.body ? ` body ${show(c.body.text, 300)}` : ''
    }`;
  const violate = (problem: string, a: Answer) =>
    r.violations.push({
      route: name,
      problem,
      input: c.label,
      request: requestLine(),
      status: a.status,
      answer: show(a.text, 600),
    });

  r.requests += answers.length;
  for (const a of answers) {
    r.statuses.set(a.status, (r.statuses.get(a.status) ?? 0) + 1);
    if (a.status === 0) violate(`no answer within ${REQUEST_TIMEOUT_MS} ms`, a);
    else if (a.status >= 500 && !declared5xx.has(a.status)) violate(`${a.status}`, a);
    else if (a.status < 200 || (a.status >= 300 && a.status < 400)) violate(`unexpected status ${a.status}`, a);
    else if (a.status >= 400 && a.status < 500) {
      const literal = SPEC_BODIES.some(
        (x) => x.route === name && x.status === a.status && JSON.stringify(x.body) === JSON.stringify(a.body),
      );
      const problem = literal ? null : envelopeProblem(a, orders);
      if (problem) violate(problem, a);
    }
  }
  const statuses = answers.map((a) => {
    const code = orders ? a.body?.error?.code : a.body?.code;
    return a.status >= 400 && typeof code === 'string' ? `${a.status} ${code}` : String(a.status);
  });
  if (!write || !before) return statuses;

  const all4xx = answers.every((a) => a.status >= 400 && a.status < 500);
  if (!all4xx) {
    // a 2xx (or a failure) may have written, or started a job that still writes: wait for it, count afresh
    const stuck = await settleJobs(t);
    if (stuck.length)
      violate(
        `the job it started (${stuck.join(', ')}) was still queued or running ${SETTLE_MS / 1000} s later`,
        answers[0],
      );
    return statuses;
  }
  const after = await snapshot(t);
  t.counts = after;
  const exempt = new Set(
    WRITING_4XX.filter((w) => w.route === name && answers.some((a) => a.body?.code === w.code)).flatMap(
      (w) => w.collections,
    ),
  );
  const changed = COLLECTIONS.filter((col) => !exempt.has(col) && before[col] !== after[col]).map(
    (col) => `${col} ${before[col]} → ${after[col]}`,
  );
  r.countChecks++;
  if (changed.length) violate(`a ${answers.map((a) => a.status).join('/')} wrote: ${changed.join(', ')}`, answers[0]);
  return statuses;
}

async function runRoute(op: Operation, index: number): Promise<RouteResult> {
  const name = routeName(op);
  const r: RouteResult = {
    name,
    planned: 0,
    ran: 0,
    requests: 0,
    countChecks: 0,
    statuses: new Map(),
    violations: [],
    ms: 0,
  };
  const at = Date.now();
  try {
    if (VERBOSE) process.stderr.write(`[routes-fuzz] ${name}: seeding\n`);
    const tenant = await newTenant(op);
    if (VERBOSE) process.stderr.write(`[routes-fuzz] ${name}: seeded in ${Date.now() - at} ms\n`);
    const hints = hintsFor(op, tenant);
    const options = { concurrent: isWrite(op) };
    const sweep = sweepCases(op, hints, options);
    r.planned = sweep.length + RANDOM_RUNS;
    await fc.assert(
      fc.asyncProperty(caseArb(op, hints, options), async (c) => {
        r.ran++;
        const t0 = Date.now();
        if (VERBOSE)
          process.stderr.write(
            `[routes-fuzz] ${name} #${r.ran} starts: ${c.label.slice(0, 100)}: ${clip(requestPath(op, c), 500)}\n`,
          );
        const statuses = await runCase(op, tenant, c, r);
        if (VERBOSE)
          process.stderr.write(
            `[routes-fuzz] ${name} #${r.ran} ${Date.now() - t0} ms ${statuses.join('/')} ${c.label.slice(0, 100)}\n`,
          );
      }),
      {
        numRuns: r.planned,
        examples: sweep.map((c): [FuzzCase] => [c]),
        seed: SEED + index,
        endOnFailure: true, // violations are collected by runCase; a throw is the test's own failure
        interruptAfterTimeLimit: ROUTE_LIMIT_MS,
        markInterruptAsFailure: true,
      },
    );
  } catch (err) {
    r.error = (err as Error).stack ?? String(err);
  }
  r.ms = Date.now() - at;
  return r;
}

/** Runs the routes, CONCURRENCY at a time, in the document's order; each test awaits its own. */
function startAll(ops: Operation[]): void {
  let next = 0;
  const settle = new Map<string, (r: RouteResult) => void>();
  for (const op of ops) results.set(routeName(op), new Promise((resolve) => settle.set(routeName(op), resolve)));
  const worker = async () => {
    while (next < ops.length) {
      const i = next++;
      // seeded by the route's place in the whole document, so FUZZ_SEED with FUZZ_ROUTES replays it
      const place = allNames.indexOf(routeName(ops[i]));
      settle.get(routeName(ops[i]))!(await runRoute(ops[i], place));
    }
  };
  for (let k = 0; k < CONCURRENCY; k++) void worker();
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

function formatViolations(vs: Violation[], max = 40): string {
  // one line per (problem, input kind): the same failure repeated by random cases is shown once, with its count
  const groups = new Map<string, { v: Violation; n: number }>();
  for (const v of vs) {
    const k = `${v.problem.replace(/\d+ → \d+/g, '')}|${v.input.replace(/: .*/, '')}|${v.status}`;
    const g = groups.get(k);
    if (g) g.n++;
    else groups.set(k, { v, n: 1 });
  }
  return [...groups.values()]
    .slice(0, max)
    .map(
      ({ v, n }) =>
        `  - ${v.problem}${n > 1 ? ` (${n} cases)` : ''}\n      input: ${v.input}\n      request: ${v.request}\n      answer: ${v.status} ${v.answer}`,
    )
    .join('\n');
}

function report(rs: RouteResult[]): void {
  const width = Math.max(...rs.map((r) => r.name.length), 10);
  const lines = [
    '',
    `[routes-fuzz] seed ${SEED}, FUZZ_SCALE=${SCALE}: ${rs.reduce((n, r) => n + r.ran, 0)} cases, ${rs.reduce(
      (n, r) => n + r.requests,
      0,
    )} requests over ${rs.length} routes in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    `${'route'.padEnd(width)}  cases  counts  violations  time    statuses`,
  ];
  for (const r of rs) {
    const statuses = [...r.statuses.entries()]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s}×${n}`)
      .join(' ');
    lines.push(
      `${r.name.padEnd(width)}  ${`${r.ran}/${r.planned}`.padStart(5)}  ${String(r.countChecks).padStart(6)}  ${String(
        r.violations.length,
      ).padStart(10)}  ${`${(r.ms / 1000).toFixed(1)}s`.padStart(6)}  ${statuses}${r.error ? '  ERROR' : ''}`,
    );
  }
  const bad = rs.filter((r) => r.violations.length);
  if (bad.length) {
    lines.push('', `[routes-fuzz] violations on ${bad.length} routes:`);
    for (const r of bad) lines.push(`${r.name}:`, formatViolations(r.violations, 12));
  }
  process.stderr.write(`${lines.join('\n')}\n`);
}

import { storabilityErrors } from '../../shared/products/rules';
import fc from 'fast-check';
import { ObjectId } from 'mongodb';
import { productProperties } from '../../shared/products/schema';
import { http, TestDeps, type HttpResult } from '../helpers/stack';

/**
 * Property-based fuzzing of the product write bodies (POST /products, PUT /products/{id}) through
 * HTTP against an in-process app on the suite's real stack. For every generated body:
 *   - never a 5xx;
 *   - a 4xx is the flat {code, message} error with a product write code, and nothing was stored
 *     (the tenant's product and SKU-claim counts, and on a PUT the stored product and its claims,
 *     are unchanged);
 *   - a 2xx reads back equal: GET /products/{id} answers exactly what the write answered, and the
 *     product's SKU claims are its SKU and its variants' SKUs.
 * Valid bodies must be accepted (201/200, or 409 duplicate-sku when they reuse a SKU on purpose)
 * and near-valid bodies (one rule broken) must be a 400 with the rule's code naming the broken field.
 *
 * Bodies: valid products built from the schema's rules, near-valid ones (one rule broken) and
 * arbitrary JSON, as POST (1,500) and PUT (500) bodies; then content the schema accepts anywhere
 * (any JSON in the free-form fields, any Unicode text) through both. FUZZ_SCALE=<n> multiplies
 * the number of runs (and the time limits) for a longer hunt. Each property must run all its
 * planned runs (a time limit that cuts one short fails it) and prints how many it did.
 */

jest.setTimeout(180_000 * Math.max(1, Number(process.env.FUZZ_SCALE ?? 1)));

type Body = Record<string, any>;

const SCALE = Number(process.env.FUZZ_SCALE ?? 1); // e.g. FUZZ_SCALE=5 for a longer hunt
/**
 * Every property runs all its planned runs: `numRuns` is sized to end well inside the time limit on
 * a loaded 2-core machine, and the time limit is only a safety net that fails the property
 * (markInterruptAsFailure), so that a machine far slower than planned (or a failure's shrinking)
 * ends inside jest's timeout with what it found, never as a quiet early pass. `assertRuns` reports
 * how many runs each property did and fails below its plan. FUZZ_SCALE raises both.
 */
const runs = (n: number) => ({
  numRuns: Math.max(1, Math.round(n * SCALE)),
  interruptAfterTimeLimit: 160_000 * Math.max(1, SCALE),
  markInterruptAsFailure: true,
});
const RUNS = {
  postValid: runs(400),
  postNearValid: runs(650),
  postArbitrary: runs(450),
  put: runs(500),
  freeForm: runs(100),
  unicode: runs(100),
};

let deps: TestDeps;
let app: { url: string; close: () => Promise<void> };
let tenant: { tenantId: string; key: string };

/** What the tenant should hold: products and SKU claims, kept in step with every 2xx. */
const expected = { products: 0, skus: 0 };
/**
 * Products the POST properties created and still keep (the latest, for deliberate duplicates).
 * Older ones are deleted in batches once checked, and all of them before each test, so the
 * collection stays small: FerretDB over SQLite decodes every document of a collection for a
 * filter, and the counts are taken after every 4xx.
 */
const live: { id: string; sku: string; claims: number }[] = [];
const KEEP_LIVE = 1;
const RETIRE_BATCH = 10;
let seq = 0;
/** A SKU not used before in this run. */
const freshSku = (): string => `FZ${++seq}-${(seq * 7919).toString(36)}`;

const SEED = {
  product: 'SEED-P',
  variants: ['SEED-V1', 'SEED-V2'],
  component: 'SEED-C',
  componentVariant: 'SEED-C-V1',
};

beforeAll(async () => {
  deps = await TestDeps.open();
  app = await deps.serveApp();
  tenant = await deps.tenantWithKey(undefined, 'products fuzz');
  // duplicates collide with SEED-P's SKUs; bundles reference SEED-C's (never both in one body)
  for (const body of [
    {
      sku: SEED.product,
      title: { value: 'seed' },
      price: 10,
      options: [{ id: 'size', name: 'Size', values: ['S', 'M'] }],
      variants: SEED.variants.map((sku, i) => ({
        sku,
        title: { value: sku },
        price: 10,
        position: i,
        options: [{ id: 'size', name: 'Size', value: i ? 'M' : 'S' }],
      })),
    },
    {
      sku: SEED.component,
      title: { value: 'component' },
      price: 3,
      variants: [{ sku: SEED.componentVariant, title: { value: 'component variant' }, price: 3, position: 0 }],
    },
  ]) {
    const res = await http(app.url, 'POST', '/products', { key: tenant.key, body });
    if (res.status !== 201) throw new Error(`seed product: ${res.status} ${res.text}`);
  }
  for (const sku of MATERIALS) {
    const body = {
      sku,
      title: sku,
      baseUnit: { code: 'kg', name: 'Kilogram', precision: 3 },
      alternativeUnits: ['g', 'ml', 'pza'].map((code) => ({ code, conversionFactor: code === 'pza' ? 1 : 0.001 })),
    };
    const res = await http(app.url, 'POST', '/products/materials', { key: tenant.key, body });
    if (res.status !== 201) throw new Error(`seed material: ${res.status} ${res.text}`);
  }
  Object.assign(expected, await counts());
});

/**
 * The last run of a property. An interrupted async property (interruptAfterTimeLimit) leaves its
 * run going, so the next test waits for it before taking the tenant's counts.
 */
let inFlight: Promise<unknown> = Promise.resolve();
/** Runs started by properties so far (`assertRuns` reads how many one property did). */
let runsStarted = 0;
function tracked<A extends unknown[]>(predicate: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return (...args: A) => {
    runsStarted++;
    const run = predicate(...args);
    inFlight = run.catch(() => undefined);
    return run;
  };
}

/**
 * Checks a property with its planned parameters, reports how many runs it did, and fails when
 * fewer than planned ran (a time limit that stopped it is a failure, not a pass).
 */
async function assertRuns<Ts extends [unknown, ...unknown[]]>(
  property: fc.IAsyncPropertyWithHooks<Ts>,
  which: keyof typeof RUNS,
): Promise<void> {
  const planned = RUNS[which].numRuns;
  const first = runsStarted;
  const at = Date.now();
  const ran = () => runsStarted - first;
  try {
    await fc.assert(property, RUNS[which]);
  } finally {
    await inFlight; // a run the time budget cut short may still be writing: count after it
    process.stderr.write(
      `[products-fuzz] ${which}: ${ran()} runs of ${planned} planned in ${((Date.now() - at) / 1000).toFixed(1)} s\n`,
    );
  }
  expect(ran()).toBeGreaterThanOrEqual(planned);
}

/** Waits for any run left over, then takes the tenant's counts as the expected ones and retires what piled up. */
async function settle(): Promise<void> {
  await inFlight;
  Object.assign(expected, await counts());
  await retire(true);
}

beforeEach(settle);

afterAll(async () => {
  await inFlight;
  await app?.close();
  await deps?.close();
});

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

const ERROR_CODES = ['validation-error', 'invalid-status', 'duplicate-sku'];

async function counts(): Promise<{ products: number; skus: number }> {
  const [products, skus] = await Promise.all([
    deps.db.collection('products').countDocuments({ tenantId: tenant.tenantId }),
    deps.db.collection('product_skus').countDocuments({ tenantId: tenant.tenantId }),
  ]);
  return { products, skus };
}

async function claimsOf(productId: string): Promise<string[]> {
  const rows = await deps.db.collection('product_skus').find({ tenantId: tenant.tenantId, productId }).toArray();
  return rows.map((r) => `${r.sku}:${r.kind}`).sort();
}

const claimsWanted = (product: Body): string[] =>
  [`${product.sku}:product`, ...((product.variants ?? []) as Body[]).map((v) => `${v.sku}:variant`)].sort();

const clip = (value: unknown, max = 1500): string => {
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  return s === undefined ? String(value) : s.length > max ? `${s.slice(0, max)}…` : s;
};

/** Runs `check`; a failure names the request body and the answer, so a counterexample is reproducible by hand. */
async function about(what: string, body: unknown, res: HttpResult, check: () => void | Promise<void>): Promise<void> {
  try {
    await check();
  } catch (err) {
    const e = err as Error;
    e.message = `${what}\n  body: ${clip(body)}\n  answer: ${res.status} ${clip(res.text, 800)}\n${e.message}`;
    throw e;
  }
}

function flatError(res: HttpResult): void {
  expect(res.body).toEqual(expect.objectContaining({ code: expect.any(String), message: expect.any(String) }));
  expect(ERROR_CODES).toContain(res.body.code);
  expect(res.body.message.length).toBeGreaterThan(0);
  expect(res.body).not.toHaveProperty('error');
}

const fieldsNamed = (res: HttpResult): string[] => [
  res.body?.field,
  ...((res.body?.fieldErrors ?? []) as { field: string }[]).map((f) => f.field),
];

async function post(body: unknown): Promise<HttpResult> {
  return http(app.url, 'POST', '/products', { key: tenant.key, body });
}

/**
 * The invariants of every POST answer. Returns the stored product on a 2xx.
 */
async function checkPost(what: string, body: unknown, res: HttpResult): Promise<Body | null> {
  let stored: Body | null = null;
  await about(what, body, res, async () => {
    expect(res.status).toBeLessThan(500);
    expect(res.status).toBeGreaterThanOrEqual(200);
    if (res.status >= 400) {
      flatError(res);
      expect(await counts()).toEqual(expected);
      return;
    }
    expect(res.status).toBe(201);
    const got = await http(app.url, 'GET', `/products/${res.body.id}`, { key: tenant.key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    expect(res.headers.get('location')).toBe(`/products/${res.body.id}`);
    expect(await claimsOf(res.body.id)).toEqual(claimsWanted(res.body));
    // the tenant's counts are checked after every 4xx (and at the end of each property), against these
    expected.products += 1;
    expected.skus += 1 + res.body.variants.length;
    live.push({ id: res.body.id, sku: res.body.sku, claims: 1 + res.body.variants.length });
    stored = res.body;
  });
  await retire();
  return stored;
}

/** Takes a product out of the retirement queue (a PUT target) and answers it. */
function pin(product: Body): Body {
  const i = live.findIndex((p) => p.id === product.id);
  if (i >= 0) live.splice(i, 1);
  return product;
}

/** Once enough have piled up (or when `now`), deletes all but the latest `KEEP_LIVE` products the POST properties created (in the db). */
async function retire(now = false): Promise<void> {
  if (live.length <= KEEP_LIVE || (!now && live.length < KEEP_LIVE + RETIRE_BATCH)) return;
  const gone = live.splice(0, live.length - KEEP_LIVE);
  const [products, skus] = await Promise.all([
    deps.db
      .collection('products')
      .deleteMany({ tenantId: tenant.tenantId, _id: { $in: gone.map((p) => new ObjectId(p.id)) } }),
    deps.db
      .collection('product_skus')
      .deleteMany({ tenantId: tenant.tenantId, productId: { $in: gone.map((p) => p.id) } }),
  ]);
  expected.products -= products.deletedCount;
  expected.skus -= skus.deletedCount;
  if (products.deletedCount !== gone.length || skus.deletedCount !== gone.reduce((n, p) => n + p.claims, 0)) {
    throw new Error(
      `retiring ${gone.length} checked products removed ${products.deletedCount} products and ${skus.deletedCount} SKU claims`,
    );
  }
}

async function put(id: string, body: unknown): Promise<HttpResult> {
  return http(app.url, 'PUT', `/products/${id}`, { key: tenant.key, body });
}

/**
 * The invariants of every PUT answer, given the product as it was shown before. Returns the
 * product as it is now.
 */
async function checkPut(what: string, current: Body, body: unknown, res: HttpResult): Promise<Body> {
  let now = current;
  await about(what, body, res, async () => {
    expect(res.status).toBeLessThan(500);
    expect(res.status).toBeGreaterThanOrEqual(200);
    const got = await http(app.url, 'GET', `/products/${current.id}`, { key: tenant.key });
    expect(got.status).toBe(200);
    if (res.status >= 400) {
      flatError(res);
      expect(got.body).toEqual(current);
      expect(await claimsOf(current.id)).toEqual(claimsWanted(current));
      return; // the tenant's counts: at the end of the property
    }
    expect(res.status).toBe(200);
    expect(got.body).toEqual(res.body);
    expect(res.body.id).toBe(current.id);
    expect(res.body.createdAt).toBe(current.createdAt);
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(current.updatedAt));
    expect(await claimsOf(current.id)).toEqual(claimsWanted(res.body));
    expected.skus += res.body.variants.length - current.variants.length;
    now = res.body;
  });
  return now;
}

// ---------------------------------------------------------------------------------------------
// Generators: valid products
// ---------------------------------------------------------------------------------------------

const CURRENCIES = ['USD', 'MXN', 'EUR', 'BRL', 'COP', 'JPY', 'CLP'];
/** Both spellings of the types that have two, and the others. */
const BINDING_TYPES = [
  'mercadolibre',
  'mercado-libre',
  'meli',
  't1',
  't1-comercios',
  'claroshop',
  'amazon',
  'walmart',
  'shopify',
  'woocommerce',
  'woo-commerce',
  'liverpool',
  'coppel',
  'tiktokshop',
  'tiktok-shop',
  'custom',
  'custom-api',
];
const CANONICAL: Record<string, string> = {
  'mercado-libre': 'mercadolibre',
  meli: 'mercadolibre',
  't1-comercios': 't1',
  claroshop: 't1',
  'woo-commerce': 'woocommerce',
  'tiktok-shop': 'tiktokshop',
  'custom-api': 'custom',
};
const STATUSES = ['active', 'disabled', 'draft'];
const KNOWN_FIELDS = new Set(Object.keys(productProperties));
const PROTO_WORDS = ['__proto__', 'constructor', 'prototype'];
/** Keys the free-form content property probes on purpose; the valid generators keep clear of them. */
const TRICKY_KEYS = [...Object.getOwnPropertyNames(Object.prototype), '_bsontype'];

const text = (min = 0, max = 30) => fc.string({ minLength: min, maxLength: max });
/** A title's rule (shared/products/rules.ts): something besides white space, control and format characters. */
const visible = (t: string) => !/^[\s\p{Cc}\p{Cf}]*$/u.test(t);
const word = fc.stringMatching(/^[A-Za-z][A-Za-z0-9 ]{0,15}$/);
const money = fc.oneof(
  fc.integer({ min: 0, max: 10_000_000 }).map((cents) => cents / 100),
  fc.double({ min: 0, max: 1e9, noNaN: true }),
);
const locale = fc.constantFrom('es', 'en', 'pt-BR', 'es_MX', 'fr', 'zh-Hans');
const translated = (required: boolean) =>
  fc.record(
    {
      // a required title has a visible character: one of blanks only is refused (title-empty)
      value: required ? text(1, 30).filter(visible) : text(0, 30),
      translations: fc.array(fc.record({ locale, value: text(0, 15) }), { maxLength: 2 }),
    },
    { requiredKeys: ['value'] },
  );
const isoDate = fc.date({
  min: new Date('1990-01-01T00:00:00Z'),
  max: new Date('2090-01-01T00:00:00Z'),
  noInvalidDate: true,
});

/**
 * JSON for the free-form fields of valid bodies: keys without `.`, a leading `$` or the names the
 * content property probes, and no array directly inside an array (see the content property below).
 */
const safeKey = fc
  .string({ minLength: 1, maxLength: 10 })
  .filter((k) => !k.includes('.') && !k.startsWith('$') && !PROTO_WORDS.includes(k) && !TRICKY_KEYS.includes(k));
const scalar = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  text(0, 20),
);
const storable = fc.letrec<{ value: unknown; obj: Record<string, unknown> }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', maxDepth: 2 },
    scalar,
    tie('obj'),
    fc.array(fc.oneof(scalar, tie('obj')), { maxLength: 3 }),
  ),
  obj: fc.dictionary(safeKey, tie('value'), { maxKeys: 3 }),
}));

const metafield = fc
  .oneof(
    fc.record({ type: fc.constant('string'), value: text() }),
    fc.record({ value: text() }), // type defaults to string
    fc.record({ type: fc.constant('json'), value: storable.value }),
    fc.record({ type: fc.constant('number_integer'), value: fc.integer() }),
    fc.record({ type: fc.constant('number_decimal'), value: fc.double({ noNaN: true, noDefaultInfinity: true }) }),
    fc.record({ type: fc.constant('boolean'), value: fc.boolean() }),
    fc.record({ type: fc.constant('date'), value: isoDate.map((d) => d.toISOString().slice(0, 10)) }),
    fc.record({ type: fc.constant('date_time'), value: isoDate.map((d) => d.toISOString()) }),
    fc.record({
      type: fc.constant('url'),
      value: fc.webUrl({ validSchemes: ['http', 'https'] }).filter((u) => /^https?:\/\/\S+$/.test(u)),
    }),
  )
  .chain((m) =>
    fc
      .record(
        { namespace: fc.constantFrom('mkt_category', 'mkt_attr', 'mkt_variant', 'custom', ''), key: word },
        { requiredKeys: ['key'] },
      )
      .map((k) => ({ ...k, ...m })),
  );

const binding = fc.record(
  {
    channelId: word,
    handle: word,
    type: fc.constantFrom(...BINDING_TYPES),
    status: fc.constantFrom('active', 'inactive', 'pending', 'error', 'paused'),
    desiredStatus: fc.constantFrom('active', 'inactive', 'pending', 'error', 'paused'),
    syncStatus: fc.constantFrom('synced', 'pending', 'error'),
    reservedStock: fc.nat(100),
    overrides: fc.array(storable.obj, { maxLength: 2 }),
    customValues: fc.array(storable.obj, { maxLength: 2 }),
    data: storable.obj,
    lastError: fc.option(text(), { nil: null }),
    lastSyncedAt: fc.option(
      isoDate.map((d) => d.toISOString()),
      { nil: null },
    ),
  },
  { requiredKeys: ['channelId', 'handle', 'type'] },
);

const media = fc.record(
  {
    src: fc.webUrl({ validSchemes: ['http', 'https'] }).filter((u) => /^https?:\/\/\S+$/.test(u) && u.length <= 2000),
    name: text(1, 20),
    type: fc.constantFrom('image', 'video', 'audio', 'document'),
    size: fc.nat(10_000_000),
    position: fc.nat(20),
    alt: translated(false),
    bindings: fc.array(fc.record({ channelId: word, externalId: text(0, 10) }, { requiredKeys: ['channelId'] }), {
      maxLength: 1,
    }),
    withId: fc.boolean(),
  },
  { requiredKeys: ['src', 'name', 'position', 'alt', 'withId'] },
);

const priceSchema = fc
  .oneof(
    fc.record({ target: fc.constant('customers'), channels: fc.array(word, { minLength: 1, maxLength: 2 }) }),
    fc.record({ target: fc.constant('client'), client: word }),
    fc.record({ target: fc.constant('segment'), segment: word }),
  )
  .chain((t) =>
    fc
      .record(
        { name: word, content: storable.value, currency: fc.constantFrom(...CURRENCIES), isWholesale: fc.boolean() },
        { requiredKeys: ['name', 'content', 'currency'] },
      )
      .map((p) => ({ ...p, ...t })),
  );

const cost = fc.record(
  {
    name: text(0, 20),
    type: fc.constantFrom('money', 'rate'),
    cost: money,
    currency: fc.constantFrom(...CURRENCIES),
    reason: fc.constantFrom('tax', 'delivery-packaging', 'fees', 'material', 'inventory', 'custom'),
  },
  { requiredKeys: ['type', 'cost', 'currency', 'reason'] },
);

const stockAlerts = fc.record(
  {
    minStock: fc.nat(50),
    reorderPoint: fc.nat(50),
    reorderQuantity: fc.nat(50),
    alertEmails: fc.array(fc.emailAddress(), { maxLength: 1 }),
    alertEnabled: fc.boolean(),
  },
  { requiredKeys: ['minStock', 'reorderPoint', 'reorderQuantity'] },
);

/** Materials seeded in beforeAll (base unit kg; g, ml and pza as alternatives): BOMs and modifiers name them. */
const MATERIALS = ['fzm-a', 'fzm-b', 'fzm-c', 'fzm-d'];
const materialSku = fc.constantFrom(...MATERIALS);
const randomSku = fc.stringMatching(/^[a-z]{2,5}-[0-9]{1,3}$/);
const billOfMaterials = fc.record(
  {
    consumptionMode: fc.constantFrom('on_sale', 'on_production', 'manual'),
    yield: fc.record({ quantity: fc.integer({ min: 1, max: 10 }), unit: fc.constantFrom('pza', 'kg') }),
    // a material is one component; a substitute is another material
    components: fc.uniqueArray(
      fc
        .record(
          {
            materialSku,
            quantity: fc.integer({ min: 1, max: 100 }),
            unit: fc.constantFrom('g', 'ml'),
            required: fc.boolean(),
            substitutes: fc.array(fc.record({ materialSku, conversionFactor: fc.constantFrom(0.5, 1, 2) }), {
              maxLength: 1,
            }),
            notes: text(0, 20),
          },
          { requiredKeys: ['materialSku', 'quantity', 'unit'] },
        )
        .map((c) => ({ ...c, substitutes: (c.substitutes ?? []).filter((s) => s.materialSku !== c.materialSku) })),
      { minLength: 1, maxLength: 2, selector: (c) => c.materialSku },
    ),
    wastagePercent: fc.integer({ min: 0, max: 100 }),
    preparationNotes: fc.record({ value: text() }),
    prepTimeMinutes: fc.nat(120),
  },
  { requiredKeys: ['consumptionMode', 'yield', 'components'] },
);

const modifiersConfig = fc.record(
  {
    enabled: fc.boolean(),
    groups: fc.array(
      fc.tuple(fc.nat(3), fc.nat(3)).chain(([min, extra]) =>
        fc.record(
          {
            name: translated(true),
            description: text(0, 20),
            selectionRule: fc.record(
              {
                minSelections: fc.constant(min),
                maxSelections: fc.constant(min + extra),
                allowDuplicates: fc.boolean(),
              },
              { requiredKeys: ['minSelections', 'maxSelections'] },
            ),
            modifiers: fc.array(
              fc.record(
                {
                  name: text(1, 20),
                  type: fc.constantFrom('addon', 'option', 'removal', 'substitution'),
                  priceAdjustment: fc.record(
                    {
                      type: fc.constantFrom('fixed', 'percentage', 'replace'),
                      value: fc.integer({ min: -100, max: 100 }),
                      currency: fc.constantFrom(...CURRENCIES),
                    },
                    { requiredKeys: ['type', 'value'] },
                  ),
                  inventoryConsumption: fc.array(
                    fc.record({
                      sku: materialSku,
                      quantity: fc.integer({ min: 1, max: 5 }),
                      unit: fc.constantFrom('g', 'pza'),
                    }),
                    { maxLength: 1 },
                  ),
                  available: fc.boolean(),
                  channelBindings: fc.array(
                    fc.record(
                      {
                        channelType: fc.constantFrom(
                          'rappi',
                          'ubereats',
                          'didifood',
                          'mercadolibre',
                          'amazon',
                          'other',
                        ),
                        externalId: text(0, 10),
                      },
                      { requiredKeys: ['channelType'] },
                    ),
                    { maxLength: 1 },
                  ),
                },
                { requiredKeys: ['name'] },
              ),
              { minLength: 1, maxLength: 2 },
            ),
            active: fc.boolean(),
          },
          { requiredKeys: ['name', 'selectionRule', 'modifiers'] },
        ),
      ),
      { maxLength: 2 },
    ),
    conditions: fc.record(
      {
        variantSkus: fc.array(randomSku, { maxLength: 1 }),
        availableHours: fc.record({
          start: fc.constantFrom('00:00', '09:30', '12:00'),
          end: fc.constantFrom('18:00', '23:59'),
        }),
        availableDays: fc.subarray(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: [] },
);

const variantPart = fc.record(
  {
    title: translated(true),
    price: money,
    compareAtPrice: money, // not compared with the price at variant level
    position: fc.nat(10),
    picks: fc.array(fc.nat(), { maxLength: 2 }),
    imagePick: fc.option(fc.nat(), { nil: undefined }),
    productType: fc.constantFrom('physical', 'digital', 'service'),
    barcode: fc.stringMatching(/^[0-9]{8,13}$/),
    barcodeType: fc.constantFrom('upc', 'ean13', 'ean8', 'isbn', 'gtin14', 'code128', 'code39', 'qr', 'other'),
    satCode: fc.stringMatching(/^[0-9]{8}$/),
    countryOfOrigin: fc.constantFrom('MX', 'US', 'CN', 'BR'),
    minAlertStock: fc.option(fc.nat(20), { nil: null }),
    sellIfOutOfStock: fc.boolean(),
    taxable: fc.boolean(),
    bindings: fc.array(fc.record({ channelId: word, handle: word }), { maxLength: 1 }),
    costs: fc.array(cost, { maxLength: 1 }),
  },
  { requiredKeys: ['title', 'price', 'position', 'picks'] },
);

const productType = fc.constantFrom('physical', 'digital', 'service', 'bundle', 'supply', 'material');

const validParts = fc.record(
  {
    status: fc.constantFrom(...STATUSES),
    productType,
    title: translated(true),
    description: translated(false),
    htmlDescription: translated(false),
    price: money,
    compareAtPriceBy: fc.option(fc.integer({ min: 1, max: 1000 }), { nil: undefined, freq: 3 }),
    cost: money,
    costs: fc.array(cost, { maxLength: 2 }),
    priceSchemas: fc.array(priceSchema, { maxLength: 2 }),
    currency: fc.constantFrom(...CURRENCIES),
    upc: fc.stringMatching(/^[0-9]{12}$/),
    satCode: fc.stringMatching(/^[0-9]{8}$/),
    barcode: fc.stringMatching(/^[0-9]{8,13}$/),
    barcodeType: fc.constantFrom('upc', 'ean13', 'ean8', 'isbn', 'gtin14', 'code128', 'code39', 'qr', 'other'),
    condition: fc.constantFrom(
      'new',
      'new-open-box',
      'new-oem',
      'refurbished',
      'used-like-new',
      'used-very-good',
      'used-good',
      'used-acceptable',
      'collectible-like-new',
      'collectible-very-good',
      'collectible-good',
      'collectible-acceptable',
    ),
    categoryMap: fc.array(fc.record({ domain: word, value: word }), { maxLength: 2 }),
    brand: text(0, 20),
    model: text(0, 20),
    productKind: text(0, 20),
    taxable: fc.boolean(),
    seo: fc.record(
      {
        metaTitle: fc.oneof(text(0, 20), text(60, 60)),
        metaDescription: fc.oneof(text(0, 30), text(160, 160)),
        slug: fc.stringMatching(/^[a-z0-9-]{1,40}$/),
      },
      { requiredKeys: [] },
    ),
    tags: fc.array(text(1, 20), { maxLength: 5 }),
    bullets: fc.array(text(0, 30), { maxLength: 7 }),
    media: fc.array(media, { maxLength: 2 }),
    options: fc.array(
      fc.record({ name: text(1, 15), values: fc.array(text(1, 10), { maxLength: 3 }), withId: fc.boolean() }),
      { maxLength: 3 },
    ),
    variants: fc.array(variantPart, { maxLength: 2 }),
    attributes: fc.array(
      fc.record(
        { name: text(1, 15), value: fc.oneof(text(), fc.integer(), fc.boolean()), unit: text(0, 5) },
        { requiredKeys: ['name', 'value'] },
      ),
      { maxLength: 2 },
    ),
    shipping: fc.record(
      {
        weight: money,
        weightUnit: fc.constantFrom('g', 'kg', 'lb', 'oz'),
        dimensions: fc.record(
          {
            length: fc.nat(200),
            width: fc.nat(200),
            height: fc.nat(200),
            unit: fc.constantFrom('mm', 'cm', 'm', 'in'),
          },
          { requiredKeys: [] },
        ),
        requiresShipping: fc.boolean(),
        shippingClass: text(0, 10),
      },
      { requiredKeys: [] },
    ),
    category: fc.record(
      {
        id: text(0, 10),
        name: text(1, 20),
        path: text(1, 30),
        channels: fc.array(word, { maxLength: 2 }),
        selectable: fc.boolean(),
        mappings: storable.obj,
      },
      { requiredKeys: ['name', 'path'] },
    ),
    bindings: fc.array(binding, { maxLength: 2 }),
    metafields: fc.array(metafield, { maxLength: 3 }),
    minAlertStock: fc.nat(50),
    sellIfOutOfStock: fc.boolean(),
    fitmentConfig: storable.value,
    bundle: fc.record({
      inventoryMode: fc.option(fc.constantFrom('calculated', 'reserved'), { nil: undefined }),
      // a SKU is named once among the components (bundle-repeats-component is the near-valid case)
      components: fc.uniqueArray(
        fc.record(
          {
            productSku: fc.constantFrom(
              SEED.component,
              SEED.componentVariant,
              SEED.component.toLowerCase(),
              'seed-C-v1',
            ),
            variantMode: fc.constantFrom('fixed', 'selectable', 'any'),
            quantity: fc.integer({ min: 1, max: 5 }),
            required: fc.boolean(),
          },
          { requiredKeys: ['productSku'] },
        ),
        { minLength: 1, maxLength: 2, selector: (c) => c.productSku.toUpperCase() },
      ),
    }),
    supplyConfig: fc.record(
      {
        supplyCategory: fc.constantFrom('packaging', 'shipping', 'office', 'cleaning', 'tools', 'labels', 'other'),
        consumptionUnit: fc.constantFrom('pza', 'kg', 'm'),
        stockAlerts,
        typicalUsagePerOrder: fc.nat(5),
      },
      { requiredKeys: ['consumptionUnit'] },
    ),
    materialConfig: fc.record(
      {
        baseUnit: fc.record(
          { code: fc.constantFrom('kg', 'g', 'l'), name: text(1, 10), precision: fc.integer({ min: 0, max: 6 }) },
          { requiredKeys: ['code', 'name'] },
        ),
        alternativeUnits: fc.array(
          fc.record(
            { code: fc.constantFrom('lb', 'oz'), name: text(1, 10), factor: fc.constantFrom(0.5, 2.2, 16) },
            { requiredKeys: ['code', 'factor'] },
          ),
          { maxLength: 1 },
        ),
        costing: fc.record(
          {
            method: fc.constantFrom('fifo', 'lifo', 'average', 'last_purchase'),
            currency: fc.constantFrom(...CURRENCIES),
          },
          { requiredKeys: ['method'] },
        ),
        expiration: fc.record(
          {
            expires: fc.boolean(),
            shelfLifeDays: fc.nat(365),
            expirationPolicy: fc.constantFrom('fefo', 'fifo', 'discard', 'warn'),
          },
          { requiredKeys: [] },
        ),
        suppliers: fc.array(
          fc.record(
            { supplierId: word, name: text(0, 10), cost: money, leadTimeDays: fc.nat(30) },
            { requiredKeys: ['supplierId'] },
          ),
          { maxLength: 1 },
        ),
        stockAlerts,
        lotTrackingEnabled: fc.boolean(),
      },
      { requiredKeys: ['baseUnit', 'costing', 'stockAlerts'] },
    ),
    billOfMaterials,
    modifiersConfig,
  },
  { requiredKeys: ['title', 'price', 'bundle', 'supplyConfig', 'materialConfig'] },
);

type Parts = typeof validParts extends fc.Arbitrary<infer T> ? T : never;

/** A valid product body without its SKUs (`@SKU` and `@SKU-V<i>` until `withSkus`). */
function assemble(parts: Parts): Body {
  const {
    compareAtPriceBy,
    bundle,
    supplyConfig,
    materialConfig,
    media: mediaParts,
    options: optionParts,
    variants: variantParts,
    ...rest
  } = parts;
  const body: Body = { sku: '@SKU', ...rest };
  if (compareAtPriceBy !== undefined) body.compareAtPrice = body.price * 2 + compareAtPriceBy; // strictly greater
  if (parts.productType === 'bundle')
    body.bundleConfig = bundle.inventoryMode ? bundle : { components: bundle.components };
  if (parts.productType === 'supply') body.supplyConfig = supplyConfig;
  if (parts.productType === 'material') body.materialConfig = materialConfig;
  if (mediaParts) body.media = mediaParts.map(({ withId, ...m }, i) => (withId ? { id: `m${i}`, ...m } : m));
  if (optionParts) body.options = optionParts.map(({ withId, ...o }, i) => (withId ? { id: `o${i}`, ...o } : o));
  const optionsWithId = ((body.options ?? []) as Body[]).filter((o) => o.id);
  const mediaWithId = ((body.media ?? []) as Body[]).filter((m) => m.id);
  if (variantParts) {
    body.variants = variantParts.map(({ picks, imagePick, ...v }, i) => {
      const variant: Body = { sku: `@SKU-V${i}`, ...v };
      if (optionsWithId.length) {
        const chosen = [...new Set(picks.map((p) => p % optionsWithId.length))];
        variant.options = chosen.map((k) => ({
          id: optionsWithId[k].id,
          name: optionsWithId[k].name,
          value: optionsWithId[k].values[0] ?? 'x',
        }));
      }
      if (imagePick !== undefined && mediaWithId.length)
        variant.imageId = mediaWithId[imagePick % mediaWithId.length].id;
      return variant;
    });
  }
  return body;
}

const validTemplate = validParts.map(assemble);
type SkuCase = 'upper' | 'lower' | 'mixed';
const skuCase = fc.constantFrom<SkuCase>('upper', 'lower', 'mixed');
const cased = (sku: string, how: SkuCase): string =>
  how === 'upper' ? sku : how === 'lower' ? sku.toLowerCase() : sku.replace(/[A-Z]/, (c) => c.toLowerCase());

/** The template with real SKUs: the product's and `<sku>-V<i>` for its variants. */
function withSkus(template: Body, sku: string): Body {
  const body = structuredClone(template);
  body.sku = sku;
  if (Array.isArray(body.variants))
    (body.variants as unknown[]).forEach(
      (v, i) => typeof v === 'object' && v !== null && !Array.isArray(v) && ((v as Body).sku = `${sku}-v${i}`),
    );
  return body;
}

/** The part of the answer a valid body determines: the body itself, normalised as the service says it stores it. */
function normalizedView(body: Body, before?: Body | null): Body {
  const view: Body = JSON.parse(JSON.stringify(body));
  // a PUT sending an inheriting variant's shown minAlertStock back keeps it inheriting
  // (shared/products/catalog.ts keepInherited): it then shows the product's new value
  if (before) {
    const shown = before.minAlertStock ?? 5;
    const inheriting = new Set(
      ((before.variants ?? []) as Body[]).filter((v) => v.minAlertStock == null).map((v) => v.sku),
    );
    for (const v of (view.variants ?? []) as Body[])
      if (inheriting.has(v.sku.toUpperCase()) && v.minAlertStock === shown) delete v.minAlertStock;
  }
  view.sku = view.sku.toUpperCase();
  view.status ??= 'draft';
  view.productType ??= 'physical';
  view.currency ??= 'USD';
  for (const b of (view.bindings ?? []) as Body[]) b.type = CANONICAL[b.type] ?? b.type;
  for (const v of (view.variants ?? []) as Body[]) {
    v.sku = v.sku.toUpperCase();
    v.parentSku = view.sku;
    v.productSku = view.sku;
    v.minAlertStock ??= view.minAlertStock ?? 5; // shown as the effective value: its own, else the product's, else 5
  }
  for (const c of (view.bundleConfig?.components ?? []) as Body[]) c.productSku = c.productSku.toUpperCase();
  (view.billOfMaterials?.components as Body[] | undefined)?.forEach((c, i) => {
    c.materialSku = c.materialSku.toUpperCase();
    c.sequence = i;
    for (const s of (c.substitutes ?? []) as Body[]) s.materialSku = s.materialSku.toUpperCase();
  });
  for (const g of (view.modifiersConfig?.groups ?? []) as Body[])
    for (const m of g.modifiers as Body[])
      for (const c of (m.inventoryConsumption ?? []) as Body[]) c.sku = c.sku.toUpperCase();
  if (view.modifiersConfig?.conditions?.variantSkus)
    view.modifiersConfig.conditions.variantSkus = view.modifiersConfig.conditions.variantSkus.map((s: string) =>
      s.toUpperCase(),
    );
  return view;
}

// ---------------------------------------------------------------------------------------------
// Generators: near-valid bodies (exactly one rule broken)
// ---------------------------------------------------------------------------------------------

const extraVariant = (body: Body, n: number, more: Body = {}): Body => ({
  sku: `${body.sku}-X${n}`,
  title: { value: `extra ${n}` },
  price: 1,
  position: 0,
  ...more,
});
const push = (body: Body, key: string, item: unknown): number => {
  body[key] = [...((body[key] ?? []) as unknown[]), item];
  return body[key].length - 1;
};

const breakage = fc.oneof(
  fc.record({
    kind: fc.constant('compareAtPrice-not-greater' as const),
    ratio: fc.double({ min: 0, max: 1, noNaN: true }),
  }),
  fc.record({
    kind: fc.constant('upc' as const),
    upc: fc.oneof(
      fc.stringMatching(/^[0-9]{11}$/),
      fc.stringMatching(/^[0-9]{13}$/),
      fc.stringMatching(/^[0-9]{11}[a-zA-Z ]$/),
      fc.constant(''),
    ),
  }),
  fc.record({
    kind: fc.constant('satCode' as const),
    satCode: fc.oneof(fc.stringMatching(/^[0-9]{7}$/), fc.stringMatching(/^[0-9]{9}$/), fc.constant('1234567a')),
  }),
  fc.record({
    kind: fc.constant('slug' as const),
    slug: fc.constantFrom('Has Space', 'UPPER', 'under_score', '', 'ñandú', 'a/b', 'a.b', 'trailing\n'),
  }),
  fc.record({
    kind: fc.constant('seo-length' as const),
    which: fc.constantFrom('metaTitle', 'metaDescription'),
    extra: fc.integer({ min: 1, max: 20 }),
  }),
  fc.record({ kind: fc.constant('bullets' as const), n: fc.integer({ min: 8, max: 12 }) }),
  fc.record({
    kind: fc.constant('media-src' as const),
    src: fc.constantFrom(
      'ftp://files.example.com/a.png',
      'file:///etc/passwd',
      '//cdn.example.com/a.png',
      'javascript:alert(1)',
      'https://',
      'http://a b',
      'HTTPS://x.example/a',
      'data:image/png;base64,AAAA',
    ),
  }),
  fc.record({
    kind: fc.constant('unknown-field' as const),
    key: fc.string({ maxLength: 12 }).filter((k) => !KNOWN_FIELDS.has(k) && !PROTO_WORDS.includes(k)),
    value: scalar,
  }),
  fc.record({
    kind: fc.constant('not-stored-field' as const),
    key: fc.constantFrom(
      'type',
      'inventoryQuantity',
      'stock',
      'categoryString',
      'attributeGroups',
      'warranty',
      'preparationTime',
      'localization',
      'marketplaceCategories',
      'inventoryCost',
      'inventoryCostMethod',
      'embeddings',
      'embeddingMetadata',
      'calculatedCost',
      'id',
      'tenantId',
      'createdAt',
      'updatedAt',
    ),
    value: fc.constantFrom<unknown>('simple', 'variable', 10, 0, { text: [] }, null),
  }),
  fc.record({
    kind: fc.constant('status' as const),
    status: fc.constantFrom<unknown>('inactive', 'out_of_stock', 'ACTIVE', 'Draft', '', 1, null, true, ['active']),
  }),
  fc.record({
    kind: fc.constant('productType' as const),
    productType: fc.constantFrom<unknown>('simple', 'variable', 'Physical', '', 'kit', 3),
  }),
  fc.record({
    kind: fc.constant('negative-price' as const),
    price: fc.oneof(
      fc.integer({ min: -1_000_000, max: -1 }).map((c) => c / 100),
      fc.double({ min: -1e9, max: -Number.MIN_VALUE, noNaN: true }),
    ),
  }),
  fc.record({
    kind: fc.constant('price-type' as const),
    price: fc.constantFrom<unknown>('10', null, true, { amount: 10 }, [10]),
  }),
  fc.record({
    kind: fc.constant('bundle-on-non-bundle' as const),
    productType: fc.constantFrom('physical', 'digital', 'service', 'supply', 'material'),
  }),
  fc.record({ kind: fc.constant('bundle-unknown-component' as const) }),
  fc.record({ kind: fc.constant('bundle-contains-itself' as const), viaVariant: fc.boolean() }),
  fc.record({ kind: fc.constant('bundle-repeats-component' as const) }),
  fc.record({
    kind: fc.constant('variant-option-unknown' as const),
    optionId: fc.constantFrom('nope', 'o9', 'O0', 'size'),
  }),
  fc.record({ kind: fc.constant('variant-sku-is-product' as const) }),
  fc.record({ kind: fc.constant('variant-sku-twice' as const) }),
  fc.record({ kind: fc.constant('option-id-twice' as const) }),
  fc.record({ kind: fc.constant('variant-image-unknown' as const) }),
  fc.record({ kind: fc.constant('variant-parent-sku' as const), key: fc.constantFrom('parentSku', 'productSku') }),
  fc.record({
    kind: fc.constant('binding-type' as const),
    type: fc.constantFrom('pos', 'point-of-sale', 'MercadoLibre', 'Mercado-Libre', 'ebay', '', 'mercado_libre'),
  }),
  fc.record({
    kind: fc.constant('metafield-value' as const),
    pair: fc.constantFrom<[string | undefined, unknown]>(
      ['number_integer', 1.5],
      ['number_integer', '1'],
      ['number_decimal', '1.0'],
      ['boolean', 'true'],
      ['date', '2024-13-01'],
      ['date', '2024-01-01T00:00:00Z'],
      ['date_time', '2024-01-01'],
      ['url', 'ftp://x.example'],
      ['url', 'example.com'],
      ['string', 5],
      [undefined, 5],
      ['string', null],
    ),
  }),
  fc.record({
    kind: fc.constant('currency' as const),
    currency: fc.constantFrom<unknown>('usd', 'ZZZ', 'US', 'MXNN', '', 840),
  }),
  fc.record({ kind: fc.constant('missing' as const), field: fc.constantFrom('sku', 'title', 'price') }),
  fc.record({ kind: fc.constant('title-empty' as const), value: fc.constantFrom('', ' ', '\t\n', '\u3000') }),
  fc.record({
    kind: fc.constant('sku-bad' as const),
    sku: fc.constantFrom<unknown>('has space', '', 'tab\there', 'x'.repeat(101), 42, null),
  }),
  fc.record({ kind: fc.constant('selection-rule' as const), min: fc.integer({ min: 2, max: 5 }) }),
  fc.record({
    kind: fc.constant('nested-unknown' as const),
    where: fc.constantFrom('title', 'seo', 'shipping', 'variant', 'binding', 'category'),
  }),
  fc.record({
    kind: fc.constant('too-many' as const),
    what: fc.constantFrom('options', 'tags', 'media', 'translations'),
  }),
);
type Breakage = typeof breakage extends fc.Arbitrary<infer T> ? T : never;

/** Breaks one rule of a valid body (with its real SKUs); answers the status, code and field the API must name. */
function applyBreakage(body: Body, b: Breakage): { code: string; field: string } {
  const v = 'validation-error';
  switch (b.kind) {
    case 'compareAtPrice-not-greater':
      body.compareAtPrice = body.price * b.ratio;
      return { code: v, field: 'compareAtPrice' };
    case 'upc':
      body.upc = b.upc;
      return { code: v, field: 'upc' };
    case 'satCode':
      body.satCode = b.satCode;
      return { code: v, field: 'satCode' };
    case 'slug':
      body.seo = { ...(body.seo ?? {}), slug: b.slug };
      return { code: v, field: 'seo.slug' };
    case 'seo-length':
      body.seo = { ...(body.seo ?? {}), [b.which]: 'x'.repeat((b.which === 'metaTitle' ? 60 : 160) + b.extra) };
      return { code: v, field: `seo.${b.which}` };
    case 'bullets':
      body.bullets = Array.from({ length: b.n }, (_, i) => `bullet ${i}`);
      return { code: v, field: 'bullets' };
    case 'media-src': {
      const i = push(body, 'media', { src: b.src, name: 'img', position: 0, alt: { value: '' } });
      return { code: v, field: `media.${i}.src` };
    }
    case 'unknown-field':
    case 'not-stored-field':
      body[b.key] = b.value;
      return { code: v, field: b.key };
    case 'status':
      body.status = b.status;
      return { code: 'invalid-status', field: 'status' };
    case 'productType':
      body.productType = b.productType;
      return { code: v, field: 'productType' };
    case 'negative-price':
    case 'price-type':
      body.price = b.price;
      return { code: v, field: 'price' };
    case 'bundle-on-non-bundle':
      body.productType = b.productType;
      body.bundleConfig = { components: [{ productSku: SEED.component }] };
      return { code: v, field: 'bundleConfig' };
    case 'bundle-unknown-component':
      body.productType = 'bundle';
      body.bundleConfig = { components: [{ productSku: `NOPE-${freshSku()}` }] };
      return { code: v, field: 'bundleConfig.components.0.productSku' };
    case 'bundle-contains-itself': {
      body.productType = 'bundle';
      const self = b.viaVariant ? `${body.sku}-Y` : body.sku.toLowerCase();
      if (b.viaVariant) push(body, 'variants', extraVariant(body, 0, { sku: self }));
      body.bundleConfig = { components: [{ productSku: SEED.component }, { productSku: self }] };
      return { code: v, field: 'bundleConfig.components.1.productSku' };
    }
    case 'bundle-repeats-component':
      body.productType = 'bundle';
      body.bundleConfig = {
        components: [{ productSku: SEED.component }, { productSku: ` ${SEED.component.toLowerCase()}` }],
      };
      return { code: v, field: 'bundleConfig.components.1.productSku' };
    case 'variant-option-unknown': {
      const i = push(
        body,
        'variants',
        extraVariant(body, 1, { options: [{ id: b.optionId, name: 'Size', value: 'M' }] }),
      );
      return { code: v, field: `variants.${i}.options.0.id` };
    }
    case 'variant-sku-is-product': {
      const i = push(body, 'variants', extraVariant(body, 2, { sku: body.sku.toLowerCase() }));
      return { code: v, field: `variants.${i}.sku` };
    }
    case 'variant-sku-twice': {
      push(body, 'variants', extraVariant(body, 3, { sku: `${body.sku}-twin` }));
      const i = push(body, 'variants', extraVariant(body, 4, { sku: `${body.sku}-TWIN` }));
      return { code: v, field: `variants.${i}.sku` };
    }
    case 'option-id-twice': {
      push(body, 'options', { id: 'twice', name: 'A', values: [] });
      const i = push(body, 'options', { id: 'twice', name: 'B', values: [] });
      return { code: v, field: `options.${i}.id` };
    }
    case 'variant-image-unknown': {
      const i = push(body, 'variants', extraVariant(body, 5, { imageId: 'no-such-media' }));
      return { code: v, field: `variants.${i}.imageId` };
    }
    case 'variant-parent-sku': {
      const i = push(body, 'variants', extraVariant(body, 6, { [b.key]: `${body.sku}-OTHER` }));
      return { code: v, field: `variants.${i}.${b.key}` };
    }
    case 'binding-type': {
      const i = push(body, 'bindings', { channelId: 'ch', handle: 'h', type: b.type });
      return { code: v, field: `bindings.${i}.type` };
    }
    case 'metafield-value': {
      const [type, value] = b.pair;
      const i = push(body, 'metafields', { key: 'k', ...(type ? { type } : {}), value });
      return { code: v, field: `metafields.${i}.value` };
    }
    case 'currency':
      body.currency = b.currency;
      return { code: v, field: 'currency' };
    case 'missing':
      delete body[b.field];
      return { code: v, field: b.field };
    case 'title-empty':
      body.title = { ...body.title, value: b.value };
      return { code: v, field: 'title.value' };
    case 'sku-bad':
      body.sku = b.sku;
      delete body.variants; // variant SKUs are derived from the product's
      if (body.bundleConfig) body.bundleConfig = { components: [{ productSku: SEED.component }] };
      return { code: v, field: 'sku' };
    case 'selection-rule':
      body.modifiersConfig = {
        groups: [
          {
            name: { value: 'g' },
            selectionRule: { minSelections: b.min, maxSelections: b.min - 1 },
            modifiers: [{ name: 'm' }],
          },
        ],
      };
      return { code: v, field: 'modifiersConfig.groups.0.selectionRule.maxSelections' };
    case 'nested-unknown':
      switch (b.where) {
        case 'title':
          body.title = { ...body.title, extra: 1 };
          return { code: v, field: 'title.extra' };
        case 'seo':
          body.seo = { ...(body.seo ?? {}), keywords: 'a,b' };
          return { code: v, field: 'seo.keywords' };
        case 'shipping':
          body.shipping = { ...(body.shipping ?? {}), volume: 3 };
          return { code: v, field: 'shipping.volume' };
        case 'variant': {
          const i = push(body, 'variants', extraVariant(body, 7, { stock: 4 }));
          return { code: v, field: `variants.${i}.stock` };
        }
        case 'binding': {
          const i = push(body, 'bindings', { channelId: 'ch', handle: 'h', type: 'amazon', url: 'x' });
          return { code: v, field: `bindings.${i}.url` };
        }
        case 'category':
          body.category = { name: 'c', path: 'c', parent: 'x' };
          return { code: v, field: 'category.parent' };
      }
      throw new Error('unreachable');
    case 'too-many':
      switch (b.what) {
        case 'options':
          body.options = Array.from({ length: 21 }, (_, i) => ({ name: `o${i}` }));
          delete body.variants; // their options would reference ids no longer there
          return { code: v, field: 'options' };
        case 'tags':
          body.tags = Array.from({ length: 101 }, (_, i) => `t${i}`);
          return { code: v, field: 'tags' };
        case 'media':
          body.media = Array.from({ length: 101 }, (_, i) => ({
            src: `https://img.example.com/${i}.png`,
            name: `m${i}`,
            position: i,
            alt: { value: '' },
          }));
          for (const variant of (body.variants ?? []) as Body[]) delete variant.imageId;
          return { code: v, field: 'media' };
        case 'translations':
          body.title = { value: 't', translations: Array.from({ length: 51 }, () => ({ locale: 'es', value: 'x' })) };
          return { code: v, field: 'title.translations' };
      }
      throw new Error('unreachable');
  }
}

// ---------------------------------------------------------------------------------------------
// Generators: arbitrary JSON
// ---------------------------------------------------------------------------------------------

/** Known product keys (not the free-form ones, which the free-form property covers) with any JSON value. */
const shapedChaos = fc.record(
  {
    sku: fc.oneof(fc.anything(), fc.constant('@FRESH')),
    title: fc.oneof(fc.anything(), translated(true)),
    price: fc.oneof(fc.anything(), money),
    status: fc.anything(),
    productType: fc.oneof(fc.anything(), productType),
    compareAtPrice: fc.anything(),
    variants: fc.oneof(fc.anything(), fc.array(fc.object(), { maxLength: 2 })),
    options: fc.anything(),
    media: fc.anything(),
    bindings: fc.anything(),
    bundleConfig: fc.anything(),
    metafields: fc.oneof(
      fc.anything(),
      fc.array(
        fc.record({
          key: text(1, 5),
          type: fc.constantFrom('string', 'json', 'date', 'url', 'boolean', 'number_integer'),
          value: scalar,
        }),
        { maxLength: 2 },
      ),
    ),
    seo: fc.anything(),
    tags: fc.anything(),
    upc: fc.anything(),
    modifiersConfig: fc.anything(),
  },
  { requiredKeys: [] },
);

const arbitraryBody = fc.oneof(
  fc.anything(),
  fc.object(),
  fc.jsonValue(),
  shapedChaos,
  fc.tuple(validTemplate, fc.object({ maxKeys: 2 })).map(([t, extra]) => ({ ...extra, ...t })),
);

/** Replaces the placeholders of a generated body with fresh SKUs. */
function instantiate(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const body = { ...(value as Body) };
  if (body.sku === '@SKU' || body.sku === '@FRESH') {
    const sku = freshSku();
    return { ...withSkus(body, sku) };
  }
  return body;
}

// ---------------------------------------------------------------------------------------------
// POST /products
// ---------------------------------------------------------------------------------------------

type Dup = 'seed-product' | 'seed-variant' | 'variant-is-seed' | 'earlier' | undefined;
/** One body in seven reuses a SKU on purpose. */
const dupArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Dup>(undefined) },
  { weight: 1, arbitrary: fc.constantFrom<Dup>('seed-product', 'seed-variant', 'variant-is-seed', 'earlier') },
);

describe('POST /products with generated bodies', () => {
  test('valid products are created and read back equal; reused SKUs are 409 duplicate-sku', async () => {
    await assertRuns(
      fc.asyncProperty(
        validTemplate,
        skuCase,
        dupArb,
        tracked(async (template, how, dup) => {
          const body = withSkus(template, cased(freshSku(), how));
          if (dup === 'seed-product') body.sku = cased(SEED.product, how);
          if (dup === 'seed-variant') body.sku = cased(SEED.variants[0], how);
          if (dup === 'earlier') body.sku = cased(live[live.length - 1]?.sku ?? SEED.product, how);
          if (dup === 'variant-is-seed')
            push(body, 'variants', extraVariant(body, 0, { sku: cased(SEED.variants[1], how) }));
          const res = await post(body);
          const stored = await checkPost('valid POST', body, res);
          await about('valid POST', body, res, () => {
            if (dup) {
              expect(res.status).toBe(409);
              expect(res.body.code).toBe('duplicate-sku');
              return;
            }
            expect(res.status).toBe(201);
            expect(stored).toMatchObject(normalizedView(body));
          });
        }),
      ),
      'postValid',
    );
    expect(await counts()).toEqual(expected); // nothing leaked from any answer
  });

  test('near-valid products (one rule broken) are a 400 naming the field, and store nothing', async () => {
    await assertRuns(
      fc.asyncProperty(
        validTemplate,
        breakage,
        tracked(async (template, b) => {
          const body = withSkus(template, freshSku());
          const want = applyBreakage(body, b);
          const res = await post(body);
          await checkPost(`near-valid POST (${b.kind})`, body, res);
          await about(`near-valid POST (${b.kind})`, body, res, () => {
            expect({ status: res.status, code: res.body?.code }).toEqual({ status: 400, code: want.code });
            expect(fieldsNamed(res)).toContain(want.field);
          });
        }),
      ),
      'postNearValid',
    );
    expect(await counts()).toEqual(expected); // nothing leaked from any answer
  });

  test('arbitrary JSON is a 4xx or a 2xx that reads back equal, never a 5xx', async () => {
    await assertRuns(
      fc.asyncProperty(
        arbitraryBody,
        tracked(async (generated) => {
          const body = instantiate(generated);
          await checkPost('arbitrary POST', body, await post(body));
        }),
      ),
      'postArbitrary',
    );
    expect(await counts()).toEqual(expected); // nothing leaked from any answer
  });
});

// ---------------------------------------------------------------------------------------------
// PUT /products/{id}
// ---------------------------------------------------------------------------------------------

type SkuMode = 'keep' | 'keep-lower' | 'fresh' | 'swap-with-variant' | 'other-product' | 'seed-variant';

const putCase = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('valid' as const),
      template: validTemplate,
      skuMode: fc.constantFrom<SkuMode>(
        'keep',
        'keep-lower',
        'fresh',
        'fresh',
        'swap-with-variant',
        'other-product',
        'seed-variant',
      ),
      keepVariants: fc.boolean(),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('near-valid' as const),
      template: validTemplate,
      breakage,
      keepSku: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('arbitrary' as const), body: arbitraryBody }) },
);

describe('PUT /products/{id} with generated bodies', () => {
  const pool: Body[] = []; // the current state of each target, as the API shows it

  beforeAll(async () => {
    await settle();
    for (let i = 0; i < 4; i++) {
      const sku = freshSku();
      const body = {
        sku,
        title: { value: `target ${i}` },
        price: 5 + i,
        variants: [0, 1]
          .slice(0, i % 3)
          .map((k) => ({ sku: `${sku}-v${k}`, title: { value: `v${k}` }, price: 5, position: k })),
      };
      const res = await post(body);
      const stored = await checkPost('PUT target', body, res);
      if (!stored) throw new Error(`PUT target: ${res.status} ${res.text}`);
      pool.push(pin(stored));
    }
  });

  test('every PUT answers 4xx leaving the product as it was, or 2xx that reads back equal; never 5xx', async () => {
    await assertRuns(
      fc.asyncProperty(
        fc.nat(pool.length - 1),
        fc.nat(pool.length - 1),
        putCase,
        tracked(async (t, o, c) => {
          const current = pool[t];
          const other = pool[o === t ? (o + 1) % pool.length : o];
          let body: unknown;
          let want: { status: number; code?: string; field?: string } | null = null;
          if (c.kind === 'valid') {
            const b = withSkus(c.template, freshSku());
            const currentVariants = (current.variants as Body[]).map((v) => v.sku as string);
            if (c.keepVariants) ((b.variants ?? []) as Body[]).forEach((v, i) => (v.sku = currentVariants[i] ?? v.sku));
            want = { status: 200 };
            switch (c.skuMode) {
              case 'keep':
                b.sku = current.sku;
                break;
              case 'keep-lower':
                b.sku = current.sku.toLowerCase();
                break;
              case 'swap-with-variant':
                if (currentVariants.length) {
                  b.sku = currentVariants[0];
                  b.variants = [
                    extraVariant(b, 0, { sku: current.sku }),
                    ...((b.variants ?? []) as Body[]).filter((v) => v.sku.toUpperCase() !== currentVariants[0]),
                  ];
                }
                break;
              case 'other-product':
                b.sku = other.sku;
                want = { status: 409, code: 'duplicate-sku' };
                break;
              case 'seed-variant':
                b.sku = SEED.variants[0].toLowerCase();
                want = { status: 409, code: 'duplicate-sku' };
                break;
              case 'fresh':
                break;
            }
            body = b;
          } else if (c.kind === 'near-valid') {
            const b = withSkus(c.template, freshSku());
            if (c.keepSku) {
              b.sku = current.sku;
              ((b.variants ?? []) as Body[]).forEach((v, i) => (v.sku = `${current.sku}-w${i}`));
            }
            const broken = applyBreakage(b, c.breakage);
            want = { status: 400, ...broken };
            body = b;
          } else {
            body = instantiate(c.body);
          }

          const before = await deps.db
            .collection('products')
            .findOne({ tenantId: tenant.tenantId, _id: new ObjectId(current.id as string) });
          const res = await put(current.id, body);
          pool[t] = await checkPut(`${c.kind} PUT`, current, body, res);
          await about(`${c.kind} PUT`, body, res, () => {
            if (!want) return;
            expect({ status: res.status, code: res.body?.code }).toEqual({ status: want.status, code: want.code });
            if (want.field) expect(fieldsNamed(res)).toContain(want.field);
            if (want.status === 200) expect(res.body).toMatchObject(normalizedView(body as Body, before));
          });
        }),
      ),
      'put',
    );
    expect(await counts()).toEqual(expected); // nothing leaked from any answer
  });
});

// ---------------------------------------------------------------------------------------------
// Content the schema accepts anywhere: free-form JSON and any Unicode text
// ---------------------------------------------------------------------------------------------

describe('product writes store any content the schema accepts', () => {
  let target: Body; // the PUT target, as the API shows it

  beforeAll(async () => {
    await settle();
    const body = { sku: freshSku(), title: { value: 'content target' }, price: 1 };
    const stored = await checkPost('content target', body, await post(body));
    if (!stored) throw new Error('content target not created');
    target = pin(stored);
  });

  /** POSTs a new product, or PUTs the target, with `fill` applied to a minimal body; checks every invariant. */
  async function write(method: 'POST' | 'PUT', what: string, fill: (body: Body) => void): Promise<HttpResult> {
    const body: Body = { sku: method === 'POST' ? freshSku() : target.sku, title: { value: 'content' }, price: 1 };
    fill(body);
    // what a document store cannot keep as sent ($ or empty keys, lone surrogates) is refused, not altered
    const storable = storabilityErrors(body).length === 0;
    if (method === 'POST') {
      const res = await post(body);
      await checkPost(`${what} POST`, body, res);
      await about(`${what} POST`, body, res, () => expect(res.status).toBe(storable ? 201 : 400));
      return res;
    }
    const res = await put(target.id, body);
    target = await checkPut(`${what} PUT`, target, body, res);
    await about(`${what} PUT`, body, res, () => expect(res.status).toBe(storable ? 200 : 400));
    return res;
  }

  const method = fc.constantFrom<'POST' | 'PUT'>('POST', 'PUT');
  const anyKey = fc
    .oneof(fc.string({ maxLength: 6 }), fc.constantFrom('', 'a.b', '$set', 'a\u0000', ...TRICKY_KEYS))
    .filter((k) => !PROTO_WORDS.includes(k));
  const anyJson = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', maxDepth: 3 },
      scalar,
      fc.array(tie('value'), { maxLength: 3 }),
      fc.dictionary(anyKey, tie('value'), { maxKeys: 3 }),
    ),
  })).value;
  const anyObject = fc.dictionary(anyKey, anyJson, { maxKeys: 3 });
  const freeFormSlot = fc.oneof(
    fc.record({ slot: fc.constant('fitmentConfig' as const), value: anyJson }),
    fc.record({ slot: fc.constant('metafields.value(json)' as const), value: anyJson }),
    fc.record({ slot: fc.constant('priceSchemas.content' as const), value: anyJson }),
    fc.record({ slot: fc.constant('category.mappings' as const), value: anyObject }),
    fc.record({ slot: fc.constant('bindings.data' as const), value: anyObject }),
    fc.record({ slot: fc.constant('bindings.overrides' as const), value: anyObject }),
  );

  test('free-form fields (fitmentConfig, json metafields, price content, mappings, binding data) take any JSON', async () => {
    await assertRuns(
      fc.asyncProperty(
        method,
        freeFormSlot,
        tracked(async (m, { slot, value }) => {
          await write(m, `free-form ${slot}`, (body) => {
            if (slot === 'fitmentConfig') body.fitmentConfig = value;
            if (slot === 'metafields.value(json)') body.metafields = [{ key: 'k', type: 'json', value }];
            if (slot === 'priceSchemas.content')
              body.priceSchemas = [{ name: 'p', content: value, currency: 'MXN', target: 'client', client: 'c' }];
            if (slot === 'category.mappings') body.category = { name: 'c', path: 'c', mappings: value };
            if (slot === 'bindings.data')
              body.bindings = [{ channelId: 'c', handle: 'h', type: 'amazon', data: value }];
            if (slot === 'bindings.overrides')
              body.bindings = [{ channelId: 'c', handle: 'h', type: 'amazon', overrides: [value] }];
          });
        }),
      ),
      'freeForm',
    );
    expect(await counts()).toEqual(expected); // nothing leaked from any answer
  });

  test('text fields keep any Unicode string as sent', async () => {
    const special = fc.constantFrom(
      '\ud800',
      '\udfff',
      '\u0000',
      '\uffff',
      '\ufeff',
      '\u202e',
      'e\u0301',
      '😀',
      'ß',
      'İ',
      '\r\n',
    );
    const anyText = fc.string({
      unit: fc.oneof(special, fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
      minLength: 1,
      maxLength: 12,
    });
    await assertRuns(
      fc.asyncProperty(
        method,
        fc.record({ title: anyText.filter(visible), brand: anyText, tag: anyText }),
        tracked(async (m, { title, brand, tag }) => {
          await write(m, 'unicode', (body) => Object.assign(body, { title: { value: title }, brand, tags: [tag] }));
        }),
      ),
      'unicode',
    );
    expect(await counts()).toEqual(expected); // nothing leaked from any answer
  });
});

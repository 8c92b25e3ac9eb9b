import { join } from 'node:path';
import { mapLimit } from '../../shared/concurrency';
import { TenantDb } from '../../shared/db/tenant-db';
import { materialMovements, materialStock, recordId, type StockMovement } from '../../shared/materials/collections';
import { decodeStock } from '../../shared/materials/stock-codec';
import { freePort, portOpen, startNodeProcess, waitFor, type Proc } from '../../scripts/stack/process';
import { ApiClient, type HttpResult } from '../helpers/client';
import { TestDeps, testStack } from '../helpers/stack';

/**
 * Material transfers run in the API process, each one version-guarded write of the SKU's single
 * stock document. Here an API process is SIGKILLed in the middle of a stream of concurrent
 * transfers (both ways) and receipts on one material, each with its own Idempotency-Key; a new
 * API process is started and every request is sent again (same key, same body) until it has a
 * final answer. Then no stock is lost or duplicated: the total is exactly what was received,
 * each location holds exactly what the answers say moved, each key made at most one movement in
 * the ledger, and a transfer applied before the kill answers its first result with replayed:true.
 * The kill is aimed between a write and its answer (the process is frozen with SIGSTOP until it
 * has stored a movement it has not answered, then SIGKILLed), so that some requests were applied
 * and never answered. The API runs as a child process over a database of its own (small scans).
 */
const DATABASE = 'material_kill_test';
const ROOT = join(__dirname, '..', '..');
/** Requests per stream (receipts and transfers, mixed), and how many are in flight at once. */
const REQUESTS = Number(process.env.MATERIAL_KILL_REQUESTS ?? 120);
/**
 * Requests after those, there to keep work in flight until the kill lands (the API answers a
 * movement in milliseconds, so a stream of REQUESTS alone may drain before it does); the ones
 * not sent by then are sent to the new process, like every other.
 */
const TAIL = 600;
const IN_FLIGHT = 16;
/** Freezes before the kill gives up aiming between a write and its answer (one or two usually do). */
const KILL_TRIES = 40;
/** Base unit kg, 3 decimals: quantities are compared as integer grams. */
const PRECISION = 3;
const P = `MK${Date.now().toString(36).toUpperCase()}`;
jest.setTimeout(180_000);

let deps: TestDeps;
let tenantDb: TenantDb;
let key: string;
let api: ApiClient;
let apiProc: Proc | null = null;
let starts = 0;
let A: string;
let B: string;

/** An API process of the suite's stack over this file's database, on a free port; resolves once it listens. */
async function startApi(): Promise<void> {
  const { env, dataDir } = testStack();
  const port = await freePort();
  const proc = startNodeProcess(`api-material-kill-${++starts}`, join(ROOT, 'api', 'server.ts'), {
    cwd: ROOT,
    logDir: join(dataDir, 'logs'),
    env: { ...process.env, ...env, MONGODB_DB: DATABASE, PORT: String(port), LOG_LEVEL: 'warn' },
  });
  // it listens only after its connections and indexes are ready
  await waitFor('the API', () => portOpen(port), { proc, timeoutMs: 60_000 });
  apiProc = proc;
  api = new ApiClient(key, `http://127.0.0.1:${port}`);
}

async function killApi(): Promise<void> {
  apiProc!.child.kill('SIGKILL');
  await apiProc!.exited;
  apiProc = null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  deps = await TestDeps.open({ database: DATABASE });
  const tenant = await deps.tenantWithKey();
  key = tenant.key;
  tenantDb = new TenantDb(deps.db, tenant.tenantId);
  await startApi();
  const location = async (name: string) => {
    const res = await api.post('/locations', { name, type: 'location' });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  A = await location('Kitchen');
  B = await location('Bakery');
});
afterAll(async () => {
  await apiProc?.stop();
  await deps?.close();
});

interface Req {
  key: string;
  type: 'receipt' | 'transfer';
  /** The receipt's location, or the transfer's origin. */
  from: string;
  to: string | null;
  /** Grams. */
  grams: number;
  path: string;
  body: Record<string, unknown>;
}

const kg = (grams: number) => grams / 10 ** PRECISION;
const grams = (kgs: number) => Math.round(kgs * 10 ** PRECISION);
const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);

/** A deterministic PRNG (mulberry32), so every run sends the same stream. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function receipt(sku: string, k: string, at: string, g: number, cost: number): Req {
  return {
    key: k,
    type: 'receipt',
    from: at,
    to: null,
    grams: g,
    path: `/products/materials/${sku}/stock/${at}`,
    body: { quantity: kg(g), lot: { costPerUnit: cost }, reason: 'delivery' },
  };
}

/** About a quarter receipts at either location (costs vary, so they make several lots), the rest transfers both ways. */
function plan(sku: string, seed: number): Req[] {
  const rand = prng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
  return Array.from({ length: REQUESTS + TAIL }, (_, i) => {
    const k = `${sku}-${i}`;
    const [from, to] = rand() < 0.5 ? [A, B] : [B, A];
    if (rand() < 0.25) return receipt(sku, k, from, pick([100, 125, 250, 1000, 2500, 3333]), pick([1, 1.5, 2.25]));
    const g = pick([100, 300, 500, 1000, 1250, 2200, 5000]);
    return {
      key: k,
      type: 'transfer',
      from,
      to,
      grams: g,
      path: '/products/materials/transfer',
      body: { materialSku: sku, fromLocationId: from, toLocationId: to, quantity: kg(g), reason: 'rebalance' },
    };
  });
}

const send = (r: Req) => api.post(r.path, r.body, { headers: { 'idempotency-key': r.key } });

const isFinal = (res: HttpResult) =>
  res.status === 200 || (res.status === 400 && (res.body as { code?: string })?.code === 'transfer-failed');

/** Idempotency-Key → movementId of every movement stored for the SKU (the document's journal and the copied ledger). */
async function storedMovements(sku: string): Promise<Map<string, string[]>> {
  const doc = decodeStock(await tenantDb.collection(materialStock).findOne({ _id: recordId(tenantDb.tenantId, sku) }));
  const copied = await tenantDb.collection(materialMovements).find({ sku }).toArray();
  const byId = new Map<string, Pick<StockMovement, 'movementId' | 'idempotencyKey'>>();
  for (const m of [...copied, ...(doc?.journal ?? [])]) byId.set(m.movementId, m);
  const byKey = new Map<string, string[]>();
  for (const m of byId.values()) byKey.set(m.idempotencyKey!, [...(byKey.get(m.idempotencyKey!) ?? []), m.movementId]);
  return byKey;
}

/** What the killed process had stored, once nothing changes any more (a write it sent may land just after it died). */
async function settledMovements(sku: string): Promise<Map<string, string[]>> {
  let before = await storedMovements(sku);
  for (;;) {
    await sleep(300);
    const now = await storedMovements(sku);
    if (JSON.stringify([...now].sort()) === JSON.stringify([...before].sort())) return now;
    before = now;
  }
}

/**
 * SIGKILLs the API between a write and its answer. Freezes it (SIGSTOP), gives the writes it had
 * sent time to land and the answers it had sent time to arrive, and kills it if it has stored a
 * movement whose request has no answer; otherwise lets it run a little longer and looks again (at
 * most KILL_TRIES times, then kills it anyway). `dying` runs just before the kill.
 */
async function killBetweenWriteAndAnswer(sku: string, answered: () => Set<string>, dying: () => void): Promise<void> {
  for (let tries = 1; ; tries++) {
    apiProc!.child.kill('SIGSTOP');
    await sleep(150);
    const unanswered = [...(await storedMovements(sku)).keys()].filter((k) => !answered().has(k));
    if (unanswered.length || tries === KILL_TRIES) {
      dying();
      return killApi();
    }
    apiProc!.child.kill('SIGCONT');
    await sleep(5 + Math.random() * 20);
  }
}

/** Every movement of the SKU through GET …/movements, all pages. */
async function ledgerOf(sku: string): Promise<{ movementId: string; type: string; quantity: number }[]> {
  const all: { movementId: string; type: string; quantity: number }[] = [];
  for (let page = 0; ; page++) {
    const res = await api.get(`/products/materials/${sku}/movements`, { query: { page, limit: 200 } });
    expect(res.status).toBe(200);
    all.push(...res.body.data);
    if (!res.body.hasMore) return all;
  }
}

test.each([
  [20, 1],
  [60, 2],
  [90, 3],
])(
  'killed after %i%% of the requests were sent: after retries, nothing lost or duplicated and each key applied once',
  async (percent, seed) => {
    const sku = `${P}-${percent}`;
    const created = await api.post('/products/materials', {
      sku,
      title: 'Flour',
      baseUnit: { code: 'kg', name: 'Kilogram', precision: PRECISION },
      costingMethod: 'fifo',
      initialCost: 1,
    });
    expect(created.status).toBe(201);
    // opening stock, before the stream
    const first = new Map<string, HttpResult>();
    const opening = [receipt(sku, `${sku}-open-a`, A, 30_000, 1), receipt(sku, `${sku}-open-b`, B, 30_000, 1)];
    for (const r of opening) {
      first.set(r.key, await send(r));
      expect(first.get(r.key)!.status).toBe(200);
    }
    const reqs = [...opening, ...plan(sku, seed)];
    const stream = reqs.slice(opening.length);

    // the stream, IN_FLIGHT at a time; once `percent`% of it is sent, the API is killed as soon as
    // it has stored a movement it has not answered
    const killFrom = Math.round((REQUESTS * percent) / 100);
    const answered = () => new Set([...first].filter(([, res]) => res.status === 200).map(([k]) => k));
    let sent = 0;
    let interrupted = 0;
    let dead = false;
    let startKilling!: () => void;
    const killed = new Promise<void>((resolve) => (startKilling = resolve)).then(() =>
      killBetweenWriteAndAnswer(sku, answered, () => (dead = true)),
    );
    await mapLimit(stream, IN_FLIGHT, async (r) => {
      if (dead) return; // never sent: sent after the restart
      if (++sent === killFrom) startKilling();
      try {
        first.set(r.key, await send(r));
      } catch {
        interrupted++; // cut off by the kill
      }
    });
    await killed;
    expect(interrupted).toBeGreaterThan(0);
    // what was answered before the kill: a final answer, or 409 (lost the race for the document too often)
    for (const res of first.values()) expect(isFinal(res) || res.status === 409 ? 'ok' : res.text).toBe('ok');
    const appliedBefore = await settledMovements(sku);
    // the kill came between a write and its answer: some request was applied and not answered
    expect([...appliedBefore.keys()].filter((k) => !answered().has(k)).length).toBeGreaterThan(0);

    await startApi();
    // every request again, same key and body, until it has a final answer (two at a time: on one
    // document more writers only lose more races)
    const final = new Map<string, HttpResult>();
    const deadline = Date.now() + 60_000;
    await mapLimit(reqs, 2, async (r) => {
      for (;;) {
        const res = await send(r);
        if (isFinal(res)) return void final.set(r.key, res);
        // 409: lost the race for the document too often; anything else is a failure
        if (res.status !== 409 || Date.now() > deadline) throw new Error(`${r.key}: ${res.status} ${res.text}`);
        await sleep(20);
      }
    });

    // receipts always succeed; a transfer applied before the kill answers its first result, replayed
    for (const r of reqs) {
      const res = final.get(r.key)!;
      if (r.type === 'receipt') {
        expect({ key: r.key, status: res.status }).toEqual({ key: r.key, status: 200 });
        continue;
      }
      const before = appliedBefore.get(r.key);
      const answer = first.get(r.key);
      if (answer?.status === 200) {
        expect(before).toEqual([answer.body.movementId]);
        expect(res.body).toEqual({ ...answer.body, replayed: true });
      } else if (before) {
        // applied, but the answer died with the process
        expect({ key: r.key, status: res.status, replayed: res.body.replayed }).toEqual({
          key: r.key,
          status: 200,
          replayed: true,
        });
        expect([res.body.movementId]).toEqual(before);
      } else if (res.status === 200) {
        // applied for the first time by the new process
        expect({ key: r.key, replayed: res.body.replayed }).toEqual({ key: r.key, replayed: false });
      }
    }

    // each key made exactly one movement if it finally succeeded, none otherwise
    const applied = reqs.filter((r) => final.get(r.key)!.status === 200);
    const ledger = await ledgerOf(sku);
    const stored = await storedMovements(sku);
    expect(Object.fromEntries(reqs.map((r) => [r.key, stored.get(r.key)?.length ?? 0]))).toEqual(
      Object.fromEntries(reqs.map((r) => [r.key, final.get(r.key)!.status === 200 ? 1 : 0])),
    );
    expect(new Set(ledger.map((m) => m.movementId)).size).toBe(ledger.length);
    expect(ledger.length).toBe(applied.length);
    expect(new Set(ledger.map((m) => m.movementId))).toEqual(new Set([...stored.values()].flat()));
    for (const r of applied.filter((x) => x.type === 'transfer'))
      expect(stored.get(r.key)).toEqual([final.get(r.key)!.body.movementId]);
    const ledgerGrams = (type: string) => sum(ledger.filter((m) => m.type === type).map((m) => grams(m.quantity)));
    const receiptGrams = sum(reqs.filter((r) => r.type === 'receipt').map((r) => r.grams));
    expect(ledgerGrams('receipt')).toBe(receiptGrams);
    expect(ledgerGrams('transfer')).toBe(sum(applied.filter((r) => r.type === 'transfer').map((r) => r.grams)));

    // the stock: exactly what was received, each location exactly what the answers moved
    const expectedAt = (loc: string) =>
      sum(applied.filter((r) => r.type === 'receipt' && r.from === loc).map((r) => r.grams)) -
      sum(applied.filter((r) => r.type === 'transfer' && r.from === loc).map((r) => r.grams)) +
      sum(applied.filter((r) => r.type === 'transfer' && r.to === loc).map((r) => r.grams));
    const total = await api.get(`/products/materials/${sku}/stock`);
    expect(total.status).toBe(200);
    expect(total.body.totalQuantity).toBe(kg(receiptGrams));
    expect(
      Object.fromEntries(
        (total.body.byLocation as { locationId: string; quantity: number }[]).map((l) => [l.locationId, l.quantity]),
      ),
    ).toEqual({ [A]: kg(expectedAt(A)), [B]: kg(expectedAt(B)) });
    for (const loc of [A, B]) {
      const at = await api.get(`/products/materials/${sku}/stock/${loc}`);
      expect(at.status).toBe(200);
      const lots = at.body.lots as { lotNumber: string; quantity: number }[];
      expect(at.body.quantity).toBeGreaterThanOrEqual(0);
      for (const lot of lots) expect(lot.quantity).toBeGreaterThanOrEqual(0);
      expect(sum(lots.map((l) => grams(l.quantity)))).toBe(grams(at.body.quantity));
    }
    // and as stored: integer grams, each location the sum of its lots, nothing below zero
    const doc = await tenantDb.collection(materialStock).findOne({ _id: recordId(tenantDb.tenantId, sku) });
    expect(sum(doc!.locations.map((l) => l.quantity))).toBe(receiptGrams);
    for (const loc of doc!.locations) {
      expect(Number.isInteger(loc.quantity) && loc.quantity >= 0).toBe(true);
      expect(loc.lots.every((l) => Number.isInteger(l.quantity) && l.quantity >= 0)).toBe(true);
      expect(sum(loc.lots.map((l) => l.quantity))).toBe(loc.quantity);
      expect(loc.quantity).toBe(expectedAt(loc.locationId));
    }
  },
);

import { reused } from '../idempotency/keys';
import { createHash } from 'node:crypto';
import type { TenantDb } from '../db/tenant-db';
import { duplicateKeyIndexes, isDuplicateKeyError } from '../db/duplicate-key';
import { AppError } from '../errors/catalog';
import { newId } from '../ids';
import { Locations } from '../locations/locations';
import { pageWindow0 } from '../paging';
import {
  KIND_LABEL,
  materialMovements,
  materialStock,
  recordId,
  type StockDoc,
  type StockKind,
  type JournalEntry,
  type StockMovement,
} from './collections';
import { fromMinor, MAX_MINOR, quantityInBase } from './quantity';
import { factsOf, recordNotFound, StockRecords, unknownUnit, type StockRecord } from './records';
import {
  applyConsumption,
  applyReceipt,
  applyReturn,
  applyTransfer,
  consumptionVoided,
  emptyStock,
  recost,
  type ReceiptInput,
  type StockFacts,
} from './stock-changes';
import { inBatch, type Outcome } from '../db/group-commit';
import { decodeStock, encodeJournal } from './stock-codec';
import { announceAlertsRetired, announceReplay, announceStockSteps, type AppliedStep } from './stock-events';

/**
 * The journal (head of the ledger) moves to material_movements, all of it in one insert, when it
 * holds this many: a movement costs its one write and a quarter of a small insert, and the
 * document stays light (every write rewrites all of it).
 */
const JOURNAL_MAX = 4;
/** Writers of one document retry a lost race this many times before answering 409. */
const MAX_ATTEMPTS = 200;

export interface Actor {
  /** The API key (or process) that asked. */
  actor: string;
  idempotencyKey?: string;
  reason?: string;
}

export interface ReceiptRequest extends Actor {
  locationId: string;
  quantity: number;
  unit?: string;
  lot?: { lotNumber?: string; costPerUnit?: number; currency?: string; expirationDate?: string };
  minStock?: number;
  reorderPoint?: number;
}

export interface TransferRequest extends Actor {
  sku: string;
  fromLocationId: string;
  toLocationId: string;
  quantity: number;
  unit?: string;
}

export interface Applied {
  doc: StockDoc;
  facts: StockFacts;
  record: StockRecord;
  movement: JournalEntry;
  /** True when the movement had been applied by an earlier request with the same Idempotency-Key. */
  replayed: boolean;
}

/** Finds a movement of this SKU by id, in the journal or the ledger (only ids a Pending names as related). */
type Seen = (movementId: string) => JournalEntry | undefined;
type Build = (doc: StockDoc, facts: StockFacts, record: StockRecord, seen: Seen) => StockDoc;

/** A movement waiting for its batch. */
interface Pending {
  movementId: string;
  keyed: boolean;
  build: Build;
  locationIds: string[];
  /** Other movements whose presence the build decides on (a consumption's void, a return's consumption). */
  related: string[];
  /** The record and stock document the caller read a moment ago (a consumption's plan): the first attempt starts from them. */
  seed?: Seed;
  /** Whether the movement found under this one's id was asked by the same request (else 409 idempotency-key-reused). */
  sameRequest?: (seen: JournalEntry) => boolean;
}

export interface Seed {
  record: StockRecord;
  /** null: the SKU had no stock document. */
  stock: StockDoc | null;
  /**
   * The movement's ids (its own and its related ones) were first given out after `stock` was
   * read (a consumption's attempt recorded after its plan): none of them can be in the ledger of
   * a document no newer than it, so the first attempt skips the ledger read for them.
   */
  newIds?: boolean;
}

/**
 * The stock document this process last wrote, per document: the next movement starts from it
 * instead of reading it again. One that another process has since replaced only costs a lost
 * race (its guarded write matches nothing) and a read. Versions only grow, so an old version
 * never matches again.
 */
const lastWritten = new Map<string, StockDoc>();
const LAST_WRITTEN_MAX = 2_000;

function remember(key: string, doc: StockDoc | null): void {
  const known = lastWritten.get(key);
  if (doc && known && known.version > doc.version) return; // answers of two writes may arrive crossed
  lastWritten.delete(key); // re-inserted last: the map's order is the order of use
  if (!doc) return;
  lastWritten.set(key, doc);
  if (lastWritten.size > LAST_WRITTEN_MAX) lastWritten.delete(lastWritten.keys().next().value!);
}

const memoryKey = (tenantDb: TenantDb, _id: string) => `${tenantDb.databaseName}:${_id}`;

/**
 * The stock document of a SKU as this process last wrote it (undefined when it knows none): a
 * copy that may be stale, for work whose every decision a fresh read confirms.
 */
export function rememberedStock(tenantDb: TenantDb, sku: string): StockDoc | undefined {
  return lastWritten.get(memoryKey(tenantDb, recordId(tenantDb.tenantId, sku)));
}

/** Of the stock documents at hand, the newest (highest version); undefined when there is none at hand. */
function newest(candidates: (StockDoc | null | undefined)[]): StockDoc | null | undefined {
  let best: StockDoc | null | undefined;
  for (const c of candidates) if (c !== undefined && (!best || (c && c.version > best.version))) best = c;
  return best;
}

function locationNotFound(locationId: string): AppError {
  return new AppError(404, 'not-found', `Location ${locationId} not found`, { field: 'locationId' });
}

function quantityRefused(message: string): AppError {
  return new AppError(400, 'bad-request', message, { parameter: 'quantity', field: 'quantity' });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The stock of one tenant's materials or supplies. Every change reads the SKU's one stock document,
 * computes the document after it (stock-changes.ts) and writes it back only if nobody wrote it in
 * between (its version); a lost race reads again. The movement goes into the document's journal in
 * the same write, so the change and its ledger entry are one atomic step, and a request retried
 * with the same Idempotency-Key finds its movement there (or, once copied, in the ledger) and
 * answers it instead of moving stock again.
 */
export class StockStore {
  readonly records: StockRecords;

  constructor(
    private readonly tenantDb: TenantDb,
    readonly kind: StockKind,
  ) {
    this.records = new StockRecords(tenantDb, kind);
  }

  private get stocks() {
    return this.tenantDb.collection(materialStock);
  }
  private get ledger() {
    return this.tenantDb.collection(materialMovements);
  }

  /** A stock document as stored (a tombstone too), its journal decoded (stock-codec.ts). */
  private async read(_id: string): Promise<StockDoc | null> {
    return decodeStock(await this.stocks.findOne({ _id }));
  }

  /** The stock document of a SKU; null when it has none (or only the tombstone of a deleted record). */
  async stockOf(sku: string): Promise<StockDoc | null> {
    const doc = await this.read(recordId(this.tenantDb.tenantId, sku));
    return doc && !doc.retired ? doc : null;
  }

  /** A movement id: derived from the Idempotency-Key (same key, same movement), else new. */
  private movementId(type: StockMovement['type'], sku: string, key?: string): string {
    if (!key) return newId('mmv');
    const hash = createHash('sha256').update(`${this.kind}\n${type}\n${sku}\n${key}`).digest('hex').slice(0, 26);
    return `mmv_${hash}`;
  }

  /** Base-unit steps of a quantity sent in `unit`: 400 for an unknown unit or a quantity that rounds to nothing. */
  private steps(record: StockRecord, facts: StockFacts, quantity: number, unit?: string): number {
    const minor = quantityInBase(
      { base: { code: facts.unit, precision: facts.precision }, alternatives: record.alternativeUnits },
      quantity,
      unit,
    );
    if (minor === null) throw unknownUnit(record, unit!);
    if (minor <= 0)
      throw quantityRefused(
        `quantity must be greater than 0 ${facts.unit} after rounding to ${facts.precision} decimals (got ${quantity} ${unit ?? facts.unit})`,
      );
    if (minor > MAX_MINOR) throw quantityRefused(`quantity is larger than can be kept exactly`);
    return minor;
  }

  /**
   * Applies one movement exactly once: `build` turns the document read into the one to write (or
   * throws a refusal, which writes nothing). Movements of one SKU that arrive together in this
   * process are applied together, in arrival order, by one write (group-commit.ts).
   */
  private apply(
    sku: string,
    movementId: string,
    keyed: boolean,
    build: Build,
    /** Locations the movement names: each must exist, unless the SKU holds stock there (then it does). */
    locationIds: string[],
    related: string[] = [],
    seed?: Seed,
    sameRequest?: Pending['sameRequest'],
  ): Promise<Applied> {
    const lane = `${this.tenantDb.databaseName}:${this.kind}:${recordId(this.tenantDb.tenantId, sku)}`;
    return inBatch(lane, { movementId, keyed, build, locationIds, related, seed, sameRequest }, (batch) =>
      this.applyBatch(sku, batch),
    );
  }

  /**
   * What a batch is decided on: the record and the stock document (on a first attempt what is at
   * hand, a seed or this process's last write, else read; either way the write is guarded by the
   * version), the batch's movements found in the ledger, and the locations it names that do not
   * exist. The ledger is read once the stock document is at hand, not waiting for the record.
   */
  private async startFrom(sku: string, batch: Pending[], attempt: number, missing: Set<string> | null) {
    const _id = recordId(this.tenantDb.tenantId, sku);
    const seeds = attempt === 0 ? batch.flatMap((p) => (p.seed ? [p.seed] : [])) : [];
    const known =
      attempt === 0 ? newest([...seeds.map((s) => s.stock), rememberedStock(this.tenantDb, sku)]) : undefined;
    const stock = known !== undefined ? Promise.resolve(known) : this.read(_id);
    const [record, current, [copied, absent]] = await Promise.all([
      seeds.length ? seeds[0].record : this.records.get(sku),
      stock,
      stock.then((current) => {
        // a deleted record's tombstone is no stock, but its version still guards the write
        const live = current && !current.retired ? current : null;
        // Not in the journal at hand: applied earlier only if moved to the ledger before that
        // document was read or written (entries go to the ledger before the write that drops them),
        // so the ledger is read after, and only for a document that has ever moved its journal.
        const inJournal = new Set(live?.journal.map((m) => m.movementId));
        // a document newer than a seed with new ids may hold them (another driver of the same consumption)
        const unseen = (p: Pending) =>
          p.seed?.newIds === true && !!current && !!p.seed.stock && current.version <= p.seed.stock.version;
        const lookUp = current?.flushed
          ? [
              ...new Set(
                batch
                  .filter((p) => !unseen(p))
                  .flatMap((p) => [...(p.keyed ? [p.movementId] : []), ...p.related])
                  .filter((id) => !inJournal.has(id)),
              ),
            ]
          : [];
        return Promise.all([
          // one read by primary key (FerretDB answers `_id $in` alone from it)
          this.ledger.findByIds(lookUp.map((id) => `${this.tenantDb.tenantId}:${id}`)) as Promise<StockMovement[]>,
          missing ??
            this.missingLocations(
              batch.flatMap((p) => p.locationIds),
              live,
            ),
        ]);
      }),
    ]);
    return { record, current, read: known === undefined, copied, absent };
  }

  private async applyBatch(sku: string, batch: Pending[]): Promise<Outcome<Applied>[]> {
    const _id = recordId(this.tenantDb.tenantId, sku);
    let missing: Set<string> | null = null;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const { record, current, read, copied, absent } = await this.startFrom(sku, batch, attempt, missing);
      const live = current && !current.retired ? current : null;
      // the record read is the one whose delete left this tombstone: its stock is gone with it
      if (current?.retired && current.retiredRecord?.getTime() === record.createdAt.getTime())
        return batch.map(() => ({ ok: false, error: recordNotFound(this.kind, sku) }));
      // Balances are counted in the units of the document that holds them; the record's apply
      // while it holds none. A unit change racing a first receipt (claimUnits) thus never counts
      // one SKU in two precisions.
      const facts = live?.locations.length
        ? { ...factsOf(record), unit: live.unit, precision: live.precision }
        : factsOf(record);
      missing = absent;
      const ledgered = new Map(copied.map((m) => [m.movementId, m as JournalEntry]));
      const seenIn =
        (d: StockDoc): Seen =>
        (id) =>
          d.journal.find((m) => m.movementId === id) ?? ledgered.get(id);
      let doc = live
        ? { ...live, unit: facts.unit, precision: facts.precision }
        : { ...emptyStock(facts, _id, new Date()), tenantId: this.tenantDb.tenantId };
      const outcomes: Outcome<Applied>[] = [];
      const applied: number[] = [];
      const steps: AppliedStep[] = [];
      const replays: JournalEntry[] = [];
      for (const [i, p] of batch.entries()) {
        const seen = seenIn(doc)(p.movementId);
        const where = p.locationIds.find((id) => absent.has(id));
        if (seen && p.sameRequest && !p.sameRequest(seen)) {
          outcomes[i] = { ok: false, error: reused() };
        } else if (seen) {
          outcomes[i] = { ok: true, value: { doc, facts, record, movement: seen, replayed: true } };
          replays.push(seen);
        } else if (where) {
          outcomes[i] = { ok: false, error: locationNotFound(where) };
        } else {
          try {
            const before = doc;
            doc = p.build(doc, facts, record, seenIn(doc));
            doc = { ...doc, seq: (before.seq ?? 0) + 1 };
            const movement = doc.journal[doc.journal.length - 1];
            outcomes[i] = { ok: true, value: { doc, facts, record, movement, replayed: false } };
            applied.push(i);
            steps.push({ before, after: doc, movement, seq: doc.seq! });
          } catch (error) {
            outcomes[i] = { ok: false, error }; // a refusal: this movement only, the others go on
          }
        }
      }
      if (!applied.length) {
        // a refusal is only as good as the document it was decided on: decide again on one read now
        if (!read && outcomes.some((o) => !o.ok)) {
          missing = null;
          continue;
        }
        for (const m of replays) await announceReplay(this.tenantDb, doc, m);
        return outcomes;
      }
      if (doc.journal.length > JOURNAL_MAX && live?.journal.length) {
        // Only movements already written may go to the ledger (a copy of one this write may yet
        // lose would read as applied), and before they leave the journal: always in one or the other.
        const written = live.journal.length;
        await this.copyToLedger(doc.journal.slice(0, written));
        doc = { ...doc, journal: doc.journal.slice(written), flushed: true };
      }
      if (await this.write(current, doc)) {
        for (const m of replays) await announceReplay(this.tenantDb, doc, m);
        await announceStockSteps(this.tenantDb, steps);
        return outcomes;
      }
      // lost a race with another process: back off a little (more as contention persists) and read again
      await sleep(Math.random() * Math.min(50, 2 * (attempt + 1)));
    }
    throw new AppError(409, 'conflict', `The stock of ${sku} is changing too fast to apply this; retry`);
  }

  /** Locations among `ids` that do not exist; one where the SKU holds stock does (a location holding stock cannot be deleted). */
  private async missingLocations(ids: string[], stock: StockDoc | null): Promise<Set<string>> {
    const holding = new Set(stock?.locations.filter((l) => l.quantity > 0).map((l) => l.locationId));
    const unknown = [...new Set(ids)].filter((id) => !holding.has(id));
    const locations = new Locations(this.tenantDb);
    const found = await Promise.all(unknown.map((id) => locations.getRaw(id)));
    return new Set(unknown.filter((_, i) => !found[i]));
  }

  /**
   * Writes `next` over `current` if it is still at its version; false when someone wrote in
   * between. What it wrote (or, on a lost race, that it knows nothing) is remembered.
   */
  private async write(current: StockDoc | null, next: StockDoc): Promise<boolean> {
    const { _id, tenantId, version: _v, ...rest } = next;
    const key = memoryKey(this.tenantDb, _id);
    const fields = {
      ...rest,
      retired: next.retired === true, // a first receipt after a re-create revives a tombstone
      flushed: next.flushed === true || current?.flushed === true, // once in the ledger, always looked for there
    };
    const version = (current?.version ?? 0) + 1;
    let written: boolean;
    // the journal goes as one text (stock-codec.ts); this process remembers it as entries
    const stored = { ...fields, journal: encodeJournal(fields.journal) as unknown as JournalEntry[] };
    if (!current) {
      try {
        await this.stocks.insertOne({ ...stored, _id, version });
        written = true;
      } catch (err) {
        remember(key, null);
        if (isDuplicateKeyError(err)) return false;
        throw err;
      }
    } else {
      try {
        const res = await this.stocks.updateOne({ _id, version: current.version }, { $set: { ...stored, version } });
        written = res.matchedCount === 1;
      } catch (err) {
        remember(key, null);
        throw err;
      }
    }
    remember(key, written ? { ...fields, _id, tenantId, version } : null);
    return written;
  }

  /**
   * Copies journal entries into material_movements; ones already there are left as they are.
   * Copies of the tenant's SKUs asked for while one is being written go together in the next
   * insert (group-commit.ts): the materials of one consumption come due together.
   */
  private async copyToLedger(entries: JournalEntry[]): Promise<void> {
    if (!entries.length) return;
    const lane = `${this.tenantDb.databaseName}:${this.tenantDb.tenantId}:ledger`;
    await inBatch(lane, entries, async (batches: JournalEntry[][]): Promise<Outcome<void>[]> => {
      const all = batches.flat();
      const ok: Outcome<void> = { ok: true, value: undefined };
      try {
        await this.ledger.insertMany(
          all.map((m) => ({ ...m, _id: `${this.tenantDb.tenantId}:${m.movementId}` })),
          { ordered: false },
        );
      } catch (error) {
        // unordered: every other entry is in, whatever a duplicate refused (already copied)
        if (duplicateKeyIndexes(error) === null) return batches.map(() => ({ ok: false, error }));
      }
      return batches.map(() => ok);
    });
  }

  /** Makes the ledger collection hold every movement of a SKU, the journal's too (before a read or a delete). */
  async flushLedger(sku: string): Promise<void> {
    const doc = await this.stockOf(sku);
    if (doc) await this.copyToLedger(doc.journal);
  }

  private movementBase(
    record: StockRecord,
    facts: StockFacts,
    movementId: string,
    a: Actor,
    type: StockMovement['type'],
    where: { locationId: string; toLocationId: string | null },
    minor: number,
    requested: { quantity: number; unit?: string },
  ): Omit<JournalEntry, 'lots'> {
    return {
      movementId,
      sku: record.sku,
      kind: this.kind,
      type,
      ...where,
      quantityMinor: minor,
      quantity: fromMinor(minor, facts.precision),
      unit: facts.unit,
      requested: { quantity: requested.quantity, unit: requested.unit ?? facts.unit },
      reason: a.reason ?? null,
      actor: a.actor,
      idempotencyKey: a.idempotencyKey ?? null,
      at: new Date(),
    };
  }

  /** Records stock received at a location (the spec's "record or adjust stock"). */
  async receive(rawSku: string, req: ReceiptRequest): Promise<Applied> {
    const sku = rawSku.trim().toUpperCase();
    const movementId = this.movementId('receipt', sku, req.idempotencyKey);
    return this.apply(
      sku,
      movementId,
      Boolean(req.idempotencyKey),
      (doc, facts, record) => {
        const minor = this.steps(record, facts, req.quantity, req.unit);
        const now = new Date();
        const input: ReceiptInput = {
          locationId: req.locationId,
          minor,
          minStock: req.minStock,
          reorderPoint: req.reorderPoint,
          ...(req.lot
            ? {
                lot: {
                  ...req.lot,
                  expirationDate: req.lot.expirationDate ? new Date(req.lot.expirationDate) : undefined,
                },
              }
            : {}),
        };
        const movement = this.movementBase(
          record,
          facts,
          movementId,
          req,
          'receipt',
          { locationId: req.locationId, toLocationId: null },
          minor,
          req,
        );
        return applyReceipt(doc, facts, input, movement, now);
      },
      [req.locationId],
    );
  }

  /** Moves stock between two locations: all of it in one write, or 400 transfer-failed naming the shortfall. */
  async transfer(req: TransferRequest): Promise<Applied> {
    const sku = req.sku.trim().toUpperCase();
    if (req.fromLocationId === req.toLocationId)
      throw new AppError(400, 'validation-error', 'fromLocationId and toLocationId must differ', {
        field: 'toLocationId',
      });
    const movementId = this.movementId('transfer', sku, req.idempotencyKey);
    return this.apply(
      sku,
      movementId,
      Boolean(req.idempotencyKey),
      (doc, facts, record) => {
        const minor = this.steps(record, facts, req.quantity, req.unit);
        const where = { locationId: req.fromLocationId, toLocationId: req.toLocationId };
        const movement = this.movementBase(record, facts, movementId, req, 'transfer', where, minor, req);
        return applyTransfer(doc, facts, { ...where, fromLocationId: req.fromLocationId, minor }, movement, new Date());
      },
      [req.fromLocationId, req.toLocationId],
      [],
      undefined,
      // the key sent again with another quantity or route is another transfer, not a retry of the first
      (seen) =>
        seen.locationId === req.fromLocationId &&
        seen.toLocationId === req.toLocationId &&
        seen.requested?.quantity === req.quantity &&
        seen.requested.unit === (req.unit ?? seen.unit),
    );
  }

  /**
   * Takes stock for a consumption (shared/consumption): `movementId` and `returnId` are derived from
   * the consumption, so a retry replays instead of taking twice, and once the return is recorded
   * (even as a void, before this applied) the consumption can never apply.
   */
  async consume(
    rawSku: string,
    req: Actor & {
      movementId: string;
      returnId: string;
      consumption: NonNullable<JournalEntry['consumption']>;
      locationId: string;
      minor: number;
      method?: 'fifo' | 'lifo';
      seed?: Seed;
    },
  ): Promise<Applied> {
    const sku = rawSku.trim().toUpperCase();
    return this.apply(
      sku,
      req.movementId,
      true,
      (doc, facts, record, seen) => {
        if (seen(req.returnId)) throw consumptionVoided(facts, req.consumption.id);
        if (req.minor > MAX_MINOR) throw quantityRefused(`quantity is larger than can be kept exactly`);
        const movement = this.movementBase(
          record,
          facts,
          req.movementId,
          req,
          'consumption',
          { locationId: req.locationId, toLocationId: null },
          req.minor,
          { quantity: fromMinor(req.minor, facts.precision) },
        );
        return applyConsumption(
          doc,
          facts,
          { locationId: req.locationId, minor: req.minor, method: req.method },
          { ...movement, consumption: req.consumption },
          new Date(),
        );
      },
      [req.locationId],
      [req.returnId],
      req.seed,
    );
  }

  /**
   * Puts back what the consumption movement `consumedId` took, once (`returnId`); when it never
   * applied, records the return as a void so that it never will. 404 (RecordNotFound) when the
   * record it was taken from has been deleted since: there is no stock to put it back into.
   */
  async giveBack(
    rawSku: string,
    req: Actor & { consumedId: string; returnId: string; consumption: NonNullable<JournalEntry['consumption']> },
  ): Promise<Applied> {
    const sku = rawSku.trim().toUpperCase();
    return this.apply(
      sku,
      req.returnId,
      true,
      (doc, facts, record, seen) => {
        const consumed = seen(req.consumedId);
        // taken from a record since deleted (this one is a record created again under its SKU):
        // that stock went with the delete, and is not the new record's to receive
        if (consumed && new Date(consumed.at).getTime() < record.createdAt.getTime())
          throw recordNotFound(this.kind, sku);
        const movement = this.movementBase(
          record,
          facts,
          req.returnId,
          req,
          'return',
          { locationId: consumed?.locationId ?? '', toLocationId: null },
          consumed?.quantityMinor ?? 0,
          { quantity: consumed?.quantity ?? 0 },
        );
        return applyReturn(doc, facts, consumed, { ...movement, consumption: req.consumption }, new Date());
      },
      [],
      [req.consumedId],
    );
  }

  /**
   * Ends the stock of a record being deleted: 400 when any location holds some; otherwise its
   * journal goes to the ledger and the document becomes a tombstone, written over its version (or
   * inserted), so that a receipt racing the delete loses its write and, reading again, finds no record.
   */
  async retire(sku: string, recordCreatedAt: Date): Promise<void> {
    const _id = recordId(this.tenantDb.tenantId, sku);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = await this.read(_id);
      if (current?.retired) return;
      const held = current?.locations.filter((l) => l.quantity > 0) ?? [];
      if (held.length) {
        const where = held.map(
          (l) => `${fromMinor(l.quantity, current!.precision)} ${current!.unit} at ${l.locationId}`,
        );
        throw new AppError(
          400,
          'validation-error',
          `${KIND_LABEL[this.kind]} ${sku} has stock (${where.join(', ')}): move or consume it first`,
          { field: 'sku', details: { reason: 'has-stock', locations: held.map((l) => l.locationId) } },
        );
      }
      if (current) await this.copyToLedger(current.journal);
      const tombstone: StockDoc = {
        ...(current ?? {
          _id,
          tenantId: this.tenantDb.tenantId,
          sku,
          kind: this.kind,
          unit: '',
          precision: 0,
          version: 0,
        }),
        locations: [],
        costing: null,
        alerts: [],
        hasAlerts: false,
        journal: [],
        retired: true,
        retiredRecord: recordCreatedAt,
        flushed: true,
        updatedAt: new Date(),
      };
      if (await this.write(current, tombstone)) {
        if (current) await announceAlertsRetired(this.tenantDb, current, tombstone.updatedAt);
        return;
      }
    }
    throw new AppError(409, 'conflict', `The stock of ${sku} keeps changing while it is being deleted; retry`);
  }

  /**
   * Before a record's units (or currency) change: makes its stock document hold no balance and
   * count in `unit`/`precision`, over its version (or inserts it), so that a receipt that read the
   * old record loses its write and reads again. False when some location holds its stock: then
   * the change must not be made.
   */
  async claimUnits(sku: string, unit: string, precision: number): Promise<boolean> {
    const _id = recordId(this.tenantDb.tenantId, sku);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = await this.read(_id);
      if (current && !current.retired && current.locations.length) return false;
      const base: StockDoc = current ?? {
        _id,
        tenantId: this.tenantDb.tenantId,
        sku,
        kind: this.kind,
        unit,
        precision,
        locations: [],
        costing: null,
        alerts: [],
        hasAlerts: false,
        journal: [],
        version: 0,
        updatedAt: new Date(),
      };
      if (await this.write(current, { ...base, unit, precision, updatedAt: new Date() })) return true;
      await sleep(Math.random() * 10);
    }
    throw new AppError(409, 'conflict', `The stock of ${sku} keeps changing while its units change; retry`);
  }

  /** Recomputes the current cost after the costing method changed (a write only when there is stock). */
  async recost(sku: string): Promise<void> {
    const _id = recordId(this.tenantDb.tenantId, sku);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const [record, current] = await Promise.all([this.records.get(sku), this.read(_id)]);
      if (!current || current.retired) return;
      if (await this.write(current, recost(current, factsOf(record), new Date()))) return;
      await sleep(Math.random() * 10);
    }
  }

  /** The ledger of a SKU, newest first (0-based pages). */
  async movements(rawSku: string, q: { page: number; limit: number }) {
    const record = await this.records.get(rawSku);
    await this.flushLedger(record.sku);
    // a SKU deleted and created again starts a new ledger: movements of the old record stay stored, not listed
    const filter = { sku: record.sku, kind: this.kind, at: { $gte: record.createdAt } };
    const [docs, total] = await Promise.all([
      this.ledger.find(filter, { sort: { at: -1, _id: -1 }, ...pageWindow0(q) }).toArray(),
      this.ledger.countDocuments(filter),
    ]);
    return { docs: docs as StockMovement[], total };
  }

  /** Stock documents of this kind that have or had alerts. */
  async withAlerts(): Promise<StockDoc[]> {
    const docs = await this.stocks.find({ kind: this.kind, hasAlerts: true }, { projection: { alerts: 1 } }).toArray();
    return docs as Pick<StockDoc, 'alerts'>[] as StockDoc[];
  }
}

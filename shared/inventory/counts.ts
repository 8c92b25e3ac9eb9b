import { defineCollection } from '../db/collection';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { mapLimit } from '../concurrency';
import { newId } from '../ids';
import { Locations } from '../locations/locations';
import { Catalog } from '../products/catalog';
import { pageWindow, type PageRequest } from '../paging';
import { Adjustments, badRequest } from './adjustments';
import { skuNotFound } from './skus';
import { assertManualEdit } from './handlers';
import { Ledger } from './ledger';

/**
 * Stock counts at one location: open → (completing) → completed.
 *
 * Items are recorded with PUT …/items: each SKU's counted quantity beside the ledger's balance at
 * that moment (expected). Completing turns every item whose counted quantity differs from its
 * expected one into an approved `count_correction` adjustment that moves the balance by the
 * difference (counted − expected, never below zero) through the ledger under the key
 * `cnt:<countId>:<sku>`: what was sold or received between counting and completing stays counted,
 * where setting the balance to the counted quantity would undo it.
 *
 * Completion first claims the count (`open → completing`, one guarded update, with a lease), so
 * of concurrent completes one does the work; the others wait for it and answer 409
 * conflict/count-completed. Each correction has an id derived from the count and the SKU and a
 * fixed ledger key, so a completion that stopped half-way is finished by the next complete
 * (after the lease) without applying anything twice.
 */
export const COUNT_TYPES = ['full', 'cycle', 'spot'] as const;
export type CountType = (typeof COUNT_TYPES)[number];
export type CountStatus = 'open' | 'completing' | 'completed';
export const COUNT_STATUSES: CountStatus[] = ['open', 'completing', 'completed'];

/** Items per PUT …/items request. */
export const MAX_COUNT_ITEMS = 1000;
/** SKUs per count. */
export const MAX_COUNT_SKUS = 5000;
const LEASE_MS = 60_000;
const WAIT_MS = 30_000;

export interface CountItem {
  sku: string;
  /** The ledger's balance when the SKU was (last) counted. */
  expectedQuantity: number;
  countedQuantity: number;
  difference: number;
  countedBy: string;
  countedAt: Date;
}

export interface CountSummary {
  itemsCounted: number;
  discrepancies: number;
  adjustments: string[];
  /** SKUs whose correction was left undone: their balance was corrected after they were counted. */
  superseded: string[];
  /** SKUs left uncorrected because their product or variant was deleted after they were counted. */
  deleted: string[];
}

export interface CountDoc {
  _id: string; // cnt_…
  tenantId: string;
  name: string;
  locationId: string;
  countType: CountType;
  notes: string | null;
  status: CountStatus;
  items: CountItem[];
  /** Incremented by every items write; a write is guarded by the version it read. */
  version: number;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
  completedBy: string | null;
  completedAt: Date | null;
  /** While a completion works: others leave it alone until then. */
  leaseUntil: Date | null;
  summary: CountSummary | null;
}

export const counts = defineCollection<CountDoc>({
  name: 'inventory_counts',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, createdAt: -1 } }, { key: { tenantId: 1, status: 1, createdAt: -1 } }],
});

/** A create request as the API's schema lets it through (createCountBody in input-schemas.ts). */
export interface CreateCountInput {
  name: string;
  locationId: string;
  countType: CountType;
  notes?: string | null;
}

/** One counted SKU as the API's schema lets it through (countItemsBody in input-schemas.ts). */
export interface CountEntry {
  sku: string;
  countedQuantity: number;
}

function invalidItems(message: string, field: string): AppError {
  return badRequest('bad-request/invalid-items', message, field);
}

/** The entries with their SKUs as stored; a SKU named twice (in any case) is 400 bad-request/invalid-items. */
export function countEntries(entries: CountEntry[]): CountEntry[] {
  const seen = new Set<string>();
  return entries.map((e, i) => {
    const sku = e.sku.trim().toUpperCase();
    const at = `countItems.${i}.sku`;
    if (seen.has(sku)) throw invalidItems(`${at}: ${sku} appears more than once in countItems`, at);
    seen.add(sku);
    return { sku, countedQuantity: e.countedQuantity };
  });
}

export function countNotFound(id: string): AppError {
  return new AppError(404, 'not-found', `No count ${id}`);
}

export function countConflict(id: string, status: Exclude<CountStatus, 'open'>): AppError {
  const message =
    status === 'completed'
      ? `Count ${id} is already completed; its corrections were applied`
      : `Count ${id} is being completed by another request; read it again in a moment`;
  return new AppError(409, `conflict/count-${status}`, message, { details: { status } });
}

export function presentCount(c: CountDoc) {
  return {
    id: c._id,
    name: c.name,
    locationId: c.locationId,
    countType: c.countType,
    notes: c.notes,
    status: c.status,
    items: c.items.map((i) => ({
      sku: i.sku,
      expectedQuantity: i.expectedQuantity,
      countedQuantity: i.countedQuantity,
      difference: i.difference,
      countedBy: i.countedBy,
      countedAt: i.countedAt,
    })),
    summary: c.summary,
    createdBy: c.createdBy,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    completedBy: c.completedBy,
    completedAt: c.completedAt,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class Counts {
  constructor(
    private readonly tenantDb: TenantDb,
    private readonly actor: string,
  ) {}

  private get col() {
    return this.tenantDb.collection(counts);
  }

  /** `id`: derived from the request's Idempotency-Key, so a retry finds the count it made (insertOnce). */
  async create(request: CreateCountInput, id = newId('cnt')): Promise<CountDoc> {
    const input = {
      ...request,
      name: request.name.trim(),
      locationId: request.locationId.trim(),
      notes: request.notes?.trim() || null,
    };
    await new Locations(this.tenantDb).require(input.locationId);
    const now = new Date();
    const doc: Omit<CountDoc, 'tenantId'> = {
      _id: id,
      name: input.name,
      locationId: input.locationId,
      countType: input.countType,
      notes: input.notes,
      status: 'open',
      items: [],
      version: 1,
      createdBy: this.actor,
      createdAt: now,
      updatedAt: now,
      completedBy: null,
      completedAt: null,
      leaseUntil: null,
      summary: null,
    };
    const earlier = await this.col.insertOnce(doc);
    // read after the insert (a location's delete marks it before it looks for open counts): a
    // count at a location deleted meanwhile could never be completed, so it is no count
    if (!earlier) await this.keepOffDeleted(id, input.locationId);
    return earlier ?? ({ ...doc, tenantId: this.tenantDb.tenantId } as CountDoc);
  }

  /** Drops a count just made at a location a delete took (404) or is still deciding on (409). */
  private async keepOffDeleted(id: string, locationId: string): Promise<void> {
    const standing = await new Locations(this.tenantDb).decidedStanding(locationId);
    if (standing === 'ok') return;
    await this.col.deleteById(id);
    if (standing === 'gone')
      throw new AppError(404, 'not-found/location', `No location ${locationId}`, { field: 'locationId' });
    throw new AppError(409, 'conflict', `Location ${locationId} is being deleted; retry`, { field: 'locationId' });
  }

  async get(id: string): Promise<CountDoc> {
    const doc = await this.col.findOne({ _id: id });
    if (!doc) throw countNotFound(id);
    return doc;
  }

  async list(
    q: PageRequest & { status?: CountStatus; locationId?: string },
  ): Promise<{ counts: CountDoc[]; totalCount: number }> {
    const filter = {
      ...(q.status ? { status: q.status } : {}),
      ...(q.locationId?.trim() ? { locationId: q.locationId.trim() } : {}),
    };
    const [docs, totalCount] = await Promise.all([
      this.col.find(filter, { sort: { createdAt: -1, _id: -1 }, ...pageWindow(q) }).toArray(),
      this.col.countDocuments(filter),
    ]);
    return { counts: docs as CountDoc[], totalCount };
  }

  private assertOpen(doc: CountDoc): void {
    if (doc.status !== 'open') throw countConflict(doc._id, doc.status);
  }

  /**
   * Records counted quantities: each SKU's expected quantity is its balance now; a SKU counted
   * before is replaced. Unknown SKUs are 404 not-found and managed ones 403, before anything is
   * written. The write is guarded by the count's version, so concurrent PUTs both land.
   */
  async recordItems(id: string, counted: CountEntry[]): Promise<CountDoc> {
    const entries = countEntries(counted);
    const first = await this.get(id);
    this.assertOpen(first);
    const catalog = new Catalog(this.tenantDb);
    const owners = await mapLimit(entries, 8, (e) => catalog.skuOwner(e.sku));
    const unknown = entries.find((_, i) => !owners[i]);
    if (unknown) throw skuNotFound(unknown.sku);
    for (const e of entries) await assertManualEdit(this.tenantDb, e.sku, first.locationId);
    const ledger = new Ledger(this.tenantDb);
    const now = new Date();
    const expected = await mapLimit(entries, 8, (e) => ledger.onHand(e.sku, first.locationId));
    const fresh: CountItem[] = entries.map((e, i) => ({
      sku: e.sku,
      expectedQuantity: expected[i],
      countedQuantity: e.countedQuantity,
      difference: e.countedQuantity - expected[i],
      countedBy: this.actor,
      countedAt: now,
    }));
    const bySku = new Set(fresh.map((f) => f.sku));
    let doc = first;
    for (let attempt = 0; attempt < 20; attempt++) {
      this.assertOpen(doc);
      const items = [...doc.items.filter((i) => !bySku.has(i.sku)), ...fresh];
      if (items.length > MAX_COUNT_SKUS)
        throw invalidItems(`A count may hold at most ${MAX_COUNT_SKUS} SKUs`, 'countItems');
      const written = await this.col.findOneAndUpdate(
        { _id: id, status: 'open', version: doc.version },
        { $set: { items, updatedAt: new Date() }, $inc: { version: 1 } },
        { returnDocument: 'after' },
      );
      if (written) return written;
      doc = await this.get(id);
    }
    throw new AppError(409, 'conflict', `Count ${id} keeps changing; retry`);
  }

  /** Completes the count; see the module comment. */
  async complete(id: string): Promise<CountDoc> {
    const doc = await this.get(id);
    if (doc.status === 'completed') throw countConflict(id, 'completed');
    // everything that could refuse is checked before anything is written
    await new Locations(this.tenantDb).require(doc.locationId);
    for (const item of doc.items)
      if (item.difference !== 0) await assertManualEdit(this.tenantDb, item.sku, doc.locationId);
    const claimed = await this.claim(doc);
    return this.finish(claimed);
  }

  /** open → completing, or a completing count whose lease ran out; otherwise wait for the one completing it. */
  private async claim(doc: CountDoc): Promise<CountDoc> {
    const deadline = Date.now() + WAIT_MS;
    let current = doc;
    for (;;) {
      const now = new Date();
      const lease = { leaseUntil: new Date(now.getTime() + LEASE_MS), completedBy: this.actor, updatedAt: now };
      let claimed: CountDoc | null = null;
      if (current.status === 'open') {
        claimed = await this.col.findOneAndUpdate(
          { _id: current._id, status: 'open' },
          { $set: { status: 'completing', ...lease } },
          { returnDocument: 'after' },
        );
      } else if (current.status === 'completing' && (!current.leaseUntil || current.leaseUntil <= now)) {
        claimed = await this.col.findOneAndUpdate(
          { _id: current._id, status: 'completing', leaseUntil: current.leaseUntil },
          { $set: lease },
          { returnDocument: 'after' },
        );
      }
      if (claimed) return claimed;
      current = await this.get(current._id);
      if (current.status === 'completed') throw countConflict(current._id, 'completed');
      if (current.status === 'completing' && Date.now() > deadline) throw countConflict(current._id, 'completing');
      if (current.status === 'completing') await sleep(150);
    }
  }

  private async finish(doc: CountDoc): Promise<CountDoc> {
    const adjustments = new Adjustments(this.tenantDb, this.actor);
    // a SKU deleted since it was counted held no stock (a delete needs a zero balance): there is
    // nothing left to correct, and refusing would leave the count open for good
    const catalog = new Catalog(this.tenantDb);
    const counted = doc.items.filter((i) => i.difference !== 0);
    const owners = await mapLimit(counted, 8, (i) => catalog.skuOwner(i.sku));
    const differing = counted.filter((_, n) => owners[n]);
    let done = 0;
    const made = await mapLimit(differing, 4, async (item) => {
      const adj = await adjustments.correctFromCount(doc, item);
      if (++done % 50 === 0)
        await this.col.updateById(doc._id, { $set: { leaseUntil: new Date(Date.now() + LEASE_MS) } });
      return adj;
    });
    const now = new Date();
    const summary: CountSummary = {
      itemsCounted: doc.items.length,
      discrepancies: counted.length,
      adjustments: made.map((a) => a._id),
      superseded: made.filter((a) => a.supersededBy).map((a) => a.sku),
      deleted: counted.filter((_, n) => !owners[n]).map((i) => i.sku),
    };
    const completed = await this.col.findOneAndUpdate(
      { _id: doc._id, status: 'completing' },
      { $set: { status: 'completed', completedAt: now, updatedAt: now, summary, leaseUntil: null } },
      { returnDocument: 'after' },
    );
    if (!completed) throw countConflict(doc._id, 'completed'); // a taker-over finished it first
    return completed;
  }
}

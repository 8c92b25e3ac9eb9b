import type { TenantDb } from '../db/tenant-db';
import { materials, recordId, supplies, type MaterialDoc, type StockKind, type SupplyDoc } from './collections';
import type { UnitSystem } from './quantity';

/**
 * Reading material and supply records by SKU, for whoever names them (bills of materials,
 * modifiers, the catalog's rules). Kept apart from records.ts, which imports the catalog.
 */

export type StockRecord = MaterialDoc | SupplyDoc;

export function isMaterial(doc: StockRecord): doc is MaterialDoc {
  return 'baseUnit' in doc;
}

/** The kind of a record. */
export function kindOf(doc: StockRecord): StockKind {
  return isMaterial(doc) ? 'material' : 'supply';
}

/** The units a record's quantities may be given in. */
export function unitsOf(doc: StockRecord): UnitSystem {
  return isMaterial(doc)
    ? { base: { code: doc.baseUnit.code, precision: doc.baseUnit.precision }, alternatives: doc.alternativeUnits }
    : { base: { code: doc.consumptionUnit, precision: doc.unitPrecision }, alternatives: doc.alternativeUnits };
}

/**
 * The material or supply records named by `skus` (any case), by upper-case SKU: what a bill of
 * materials or a modifier may consume. One primary-key read of each collection, in parallel.
 */
export async function stockRecordsBySku(tenantDb: TenantDb, skus: string[]): Promise<Map<string, StockRecord>> {
  const ids = [...new Set(skus.map((s) => recordId(tenantDb.tenantId, s.trim().toUpperCase())))];
  const [m, s] = await Promise.all([
    tenantDb.collection(materials).findByIds(ids),
    tenantDb.collection(supplies).findByIds(ids),
  ]);
  // one SKU space: a SKU is never both; were it so, the material answers, as it always has
  return new Map([...s, ...m].map((r) => [r.sku, r as StockRecord] as const));
}

/**
 * How long a product write's naming of a record holds it against a delete: longer than a write
 * takes from its check to its store (an import plans a chunk before it writes it).
 */
export const NAMED_HOLD_MS = 120_000;

/** How long a delete's mark stands: a delete decides in far less. */
const DELETE_MARK_MS = 60_000;

/**
 * Marks the records a product write names as named now, before it stores them: a delete that
 * starts afterwards sees the mark and refuses (409) until the write has landed and released it
 * (or the hold expired), when its own check sees what was stored. A record a delete has marked is
 * not marked here: its SKU is answered in `deleting` (with those gone), and the write refuses it.
 * (A delete marks, then checks who names the record; a write marks, then stores: whichever marks
 * second sees the other.)
 */
export async function holdNamed(
  tenantDb: TenantDb,
  records: StockRecord[],
): Promise<{ deleting: string[]; release: () => Promise<void> }> {
  const now = new Date();
  const deleting: string[] = [];
  const held: { col: ReturnType<typeof recordsOf>; ids: string[] }[] = [];
  for (const kind of ['material', 'supply'] as const) {
    const ids = records.filter((r) => (isMaterial(r) ? 'material' : 'supply') === kind).map((r) => r._id);
    if (!ids.length) continue;
    const col = recordsOf(tenantDb, kind);
    // a delete's mark older than a delete takes is one whose process died before it decided
    const stale = new Date(now.getTime() - DELETE_MARK_MS);
    const done = await col.updateMany(
      { _id: { $in: ids }, $or: [{ deletingAt: { $exists: false } }, { deletingAt: { $lt: stale } }] } as never,
      { $set: { namedAt: now } } as never,
    );
    held.push({ col, ids });
    if (done.matchedCount < ids.length) {
      const found = new Map((await col.findByIds(ids as never)).map((r) => [r._id, r]));
      for (const r of records)
        if (ids.includes(r._id) && (!found.has(r._id) || found.get(r._id)!.deletingAt! >= stale)) deleting.push(r.sku);
    }
  }
  // only this write's own mark: another write may have marked since
  const release = async () => {
    await Promise.all(
      held.map(({ col, ids }) =>
        col.updateMany({ _id: { $in: ids }, namedAt: now } as never, { $unset: { namedAt: '' } } as never),
      ),
    );
  };
  return { deleting, release };
}

const recordsOf = (tenantDb: TenantDb, kind: StockKind) =>
  tenantDb.collection<StockRecord>((kind === 'material' ? materials : supplies) as never);

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

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
 * materials or a modifier may consume. Two primary-key reads per SKU, in parallel.
 */
export async function stockRecordsBySku(tenantDb: TenantDb, skus: string[]): Promise<Map<string, StockRecord>> {
  const wanted = [...new Set(skus.map((s) => s.trim().toUpperCase()))];
  const found = await Promise.all(
    wanted.map(async (sku) => {
      const _id = recordId(tenantDb.tenantId, sku);
      const [m, s] = await Promise.all([
        tenantDb.collection(materials).findOne({ _id }),
        tenantDb.collection(supplies).findOne({ _id }),
      ]);
      return (m ?? s) as StockRecord | null;
    }),
  );
  return new Map(found.flatMap((r) => (r ? [[r.sku, r] as const] : [])));
}

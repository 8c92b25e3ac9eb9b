import type { TenantDb } from '../db/tenant-db';
import type { ProductDoc } from '../products/types';
import { stockLevels, type StockLevel } from './collections';

export interface SkuStock {
  total: number;
  byLocation: { locationId: string; onHand: number }[];
}

/** The ledger balances of some SKUs, per SKU (SKUs without any balance are absent: 0). */
export async function stockOf(tenantDb: TenantDb, skus: string[], locationId?: string): Promise<Map<string, SkuStock>> {
  const out = new Map<string, SkuStock>();
  if (!skus.length) return out;
  const filter = { sku: { $in: [...new Set(skus)] }, ...(locationId ? { locationId } : {}) };
  const levels = (await tenantDb
    .collection(stockLevels)
    .find(filter, { projection: { recent: 0 } })
    .toArray()) as StockLevel[];
  for (const l of levels) {
    const s = out.get(l.sku) ?? { total: 0, byLocation: [] };
    s.total += l.onHand;
    s.byLocation.push({ locationId: l.locationId, onHand: l.onHand });
    out.set(l.sku, s);
  }
  return out;
}

export function skusOfProduct(doc: ProductDoc): string[] {
  return [doc.sku, ...doc.variants.map((v) => v.sku)];
}

/**
 * Adds stock to presented products: `variants[].stock` (the variant's total) wherever variants
 * are shown, and `inventory {total, byLocation}` when asked for. A product's total counts its own
 * SKU and its variants'.
 */
export async function addStock(
  tenantDb: TenantDb,
  docs: ProductDoc[],
  items: Record<string, unknown>[],
  opts: { inventory: boolean; locationId?: string },
): Promise<void> {
  const stock = await stockOf(tenantDb, docs.flatMap(skusOfProduct), opts.locationId);
  docs.forEach((doc, i) => {
    const item = items[i];
    if (Array.isArray(item.variants)) {
      item.variants = (item.variants as { sku: string }[]).map((v) => ({ ...v, stock: stock.get(v.sku)?.total ?? 0 }));
    }
    if (opts.inventory) {
      const byLocation = new Map<string, number>();
      for (const sku of skusOfProduct(doc))
        for (const b of stock.get(sku)?.byLocation ?? [])
          byLocation.set(b.locationId, (byLocation.get(b.locationId) ?? 0) + b.onHand);
      const list = [...byLocation]
        .map(([locationId, onHand]) => ({ locationId, onHand }))
        .sort((a, b) => a.locationId.localeCompare(b.locationId));
      item.inventory = { total: list.reduce((n, b) => n + b.onHand, 0), byLocation: list };
    }
  });
}

/** Ids of the products that have stock (> 0) at a location, through their own or a variant SKU. */
export async function productIdsAvailableAt(
  tenantDb: TenantDb,
  locationId: string,
  ownerOf: (sku: string) => Promise<{ productId: string } | null>,
): Promise<string[]> {
  const levels = await tenantDb
    .collection(stockLevels)
    .find({ locationId, onHand: { $gt: 0 } }, { projection: { sku: 1 } })
    .toArray();
  const owners = await Promise.all(levels.map((l) => ownerOf(l.sku)));
  return [...new Set(owners.filter((o): o is { productId: string } => o !== null).map((o) => o.productId))];
}

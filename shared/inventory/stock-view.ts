import type { TenantDb } from '../db/tenant-db';
import { ObjectId } from 'mongodb';
import { claimId, productSkus, products } from '../products/collections';
import type { ProductDoc } from '../products/types';
import { locations, systemLocationId } from '../locations/locations';
import { stockLevels, type StockLevel } from './collections';

export interface SkuStock {
  total: number;
  byLocation: { locationId: string; onHand: number }[];
}

/**
 * The ids of the tenant's locations (the system one always). A balance at any other location is a
 * deleted location's: a location is deleted only once its balances are 0, and those rows stay
 * (their ledger movements name them), so the stock reads leave them out rather than show a
 * location that is gone.
 */
export async function standingLocationIds(tenantDb: TenantDb): Promise<string[]> {
  const docs = await tenantDb
    .collection(locations)
    .find({}, { projection: { _id: 1 } })
    .toArray();
  return [...new Set([systemLocationId(tenantDb.tenantId), ...docs.map((d) => d._id)])];
}

/** A balance filter on the location: that one when named (the caller checked it), else any that exists. */
export async function levelsAt(tenantDb: TenantDb, locationId?: string | null) {
  return { locationId: locationId ? locationId : { $in: await standingLocationIds(tenantDb) } };
}

/** The ledger balances of some SKUs, per SKU (SKUs without any balance are absent: 0). */
export async function stockOf(tenantDb: TenantDb, skus: string[], locationId?: string): Promise<Map<string, SkuStock>> {
  const out = new Map<string, SkuStock>();
  if (!skus.length) return out;
  const filter = { sku: { $in: [...new Set(skus)] }, ...(await levelsAt(tenantDb, locationId)) };
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

export function skusOfProduct(doc: Pick<ProductDoc, 'sku' | 'variants'>): string[] {
  return [doc.sku, ...doc.variants.map((v) => v.sku)];
}

/**
 * The SKUs whose stock adds up to a product's: its own and its variants', except a calculated
 * bundle's, which all sell the same components (productStock shows each of them what those make
 * up): its own SKU alone.
 */
export function countedSkus(doc: Pick<ProductDoc, 'sku' | 'variants' | 'productType' | 'bundleConfig'>): string[] {
  return isCalculatedBundle(doc) ? [doc.sku] : skusOfProduct(doc);
}

export type StockShape = Pick<ProductDoc, 'sku' | 'variants' | 'productType' | 'bundleConfig'>;

/**
 * A bundle in `calculated` mode (the default) holds no stock of its own: selling one sells its
 * components (shared/orders/stock.ts), so what it has is what they make up.
 */
/** Products of these types hold no stock: selling one takes only the materials its BOM uses on sale. */
export const STOCKLESS_TYPES: ReadonlySet<string> = new Set(['digital', 'service']);

/**
 * Whether a SKU of a product holds no stock: the product is digital or a service, or the SKU is a
 * variant whose own productType is (a variant's type defaults to physical, so a digital product's
 * variants follow the product).
 */
export function holdsNoStock(product: Pick<ProductDoc, 'productType' | 'variants'>, sku: string): boolean {
  const variant = product.variants?.find((v) => v.sku === sku);
  return STOCKLESS_TYPES.has(product.productType) || (!!variant && STOCKLESS_TYPES.has(variant.productType));
}

export function isCalculatedBundle(doc: Pick<ProductDoc, 'productType' | 'bundleConfig'>): boolean {
  return doc.productType === 'bundle' && (doc.bundleConfig?.inventoryMode ?? 'calculated') !== 'reserved';
}

/**
 * How many of a calculated bundle its components make up: at each location, the fewest whole
 * bundles any component allows (floor of its balance over the quantity the bundle holds; a
 * component with no balance there allows none), never below 0; the total is the sum over
 * locations, since a bundle is put together from the stock of one place. Components that hold no
 * stock (`stockless`: digital, service) are not counted, as an order does not sell them.
 */
export function bundleStock(
  doc: Pick<ProductDoc, 'bundleConfig'>,
  stock: Map<string, SkuStock>,
  stockless: ReadonlySet<string> = new Set(),
): SkuStock {
  const components = (doc.bundleConfig?.components ?? []).filter((c) => !stockless.has(c.productSku));
  const at = (sku: string, locationId: string) =>
    stock.get(sku)?.byLocation.find((b) => b.locationId === locationId)?.onHand ?? 0;
  const places = new Set(
    components.flatMap((c) => (stock.get(c.productSku)?.byLocation ?? []).map((b) => b.locationId)),
  );
  const byLocation = [...places].sort().map((locationId) => ({
    locationId,
    onHand: Math.max(0, Math.min(...components.map((c) => Math.floor(at(c.productSku, locationId) / c.quantity)))),
  }));
  return { total: byLocation.reduce((n, b) => n + b.onHand, 0), byLocation };
}

/**
 * The balances that products show, per SKU: the ledger's, except that a calculated bundle's own
 * SKU shows what its components make up (bundleStock) whatever balance the SKU itself holds.
 */
export async function productStock(
  tenantDb: TenantDb,
  docs: StockShape[],
  locationId?: string,
): Promise<Map<string, SkuStock>> {
  const bundles = docs.filter(isCalculatedBundle);
  const components = [...new Set(bundles.flatMap((d) => d.bundleConfig!.components.map((c) => c.productSku)))];
  const [stock, stockless] = await Promise.all([
    stockOf(tenantDb, [...docs.flatMap(skusOfProduct), ...components], locationId),
    stocklessSkus(tenantDb, components),
  ]);
  for (const d of bundles) {
    // a variant of a calculated bundle sells its components as the bundle does
    const made = bundleStock(d, stock, stockless);
    for (const sku of skusOfProduct(d)) stock.set(sku, made);
  }
  return stock;
}

/**
 * Of these SKUs, the ones of calculated bundles (own or variant), with what each shows
 * (bundleStock): for the listings of ledger balances, which otherwise show their own rows.
 */
export async function calculatedAmong(
  tenantDb: TenantDb,
  skus: string[],
  locationId?: string,
): Promise<Map<string, SkuStock>> {
  const held = (await productsHoldingSkus(tenantDb, skus)).filter((h) => isCalculatedBundle(h.product));
  if (!held.length) return new Map();
  const docs = [...new Map(held.map((h) => [h.product._id.toHexString(), h.product])).values()];
  const stock = await productStock(tenantDb, docs, locationId);
  return new Map(held.map((h) => [h.sku, stock.get(h.sku) ?? { total: 0, byLocation: [] }]));
}

/**
 * The products holding these SKUs (their own or a variant's), with the SKU each holds: claims and
 * products read by primary key (TenantCollection.findByIds), which FerretDB answers without
 * decoding the rest of the catalog.
 */
export async function productsHoldingSkus(
  tenantDb: TenantDb,
  skus: string[],
): Promise<{ sku: string; product: StockShape & Pick<ProductDoc, '_id'> }[]> {
  if (!skus.length) return [];
  const claims = await tenantDb.collection(productSkus).findByIds(
    [...new Set(skus)].map((sku) => claimId(tenantDb.tenantId, sku)),
    {
      projection: { tenantId: 1, sku: 1, productId: 1, kind: 1 },
    },
  );
  const held = claims.filter(
    (c) => (c.kind === 'product' || c.kind === 'variant') && /^[0-9a-f]{24}$/.test(c.productId),
  );
  const docs = await tenantDb.collection(products).findByIds(
    [...new Set(held.map((c) => c.productId))].map((id) => new ObjectId(id)),
    {
      projection: {
        tenantId: 1,
        sku: 1,
        'variants.sku': 1,
        'variants.productType': 1,
        productType: 1,
        bundleConfig: 1,
      },
    },
  );
  const byId = new Map(docs.map((d) => [d._id.toHexString(), { ...d, variants: d.variants ?? [] }]));
  return held.flatMap((c) => {
    const product = byId.get(c.productId);
    return product ? [{ sku: c.sku, product }] : [];
  });
}

/** Which of these SKUs hold no stock (holdsNoStock). */
async function stocklessSkus(tenantDb: TenantDb, skus: string[]): Promise<Set<string>> {
  const held = await productsHoldingSkus(tenantDb, skus);
  return new Set(held.filter((h) => holdsNoStock(h.product, h.sku)).map((h) => h.sku));
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
  const stock = await productStock(tenantDb, docs, opts.locationId);
  docs.forEach((doc, i) => {
    const item = items[i];
    if (Array.isArray(item.variants)) {
      item.variants = (item.variants as { sku: string }[]).map((v) => ({ ...v, stock: stock.get(v.sku)?.total ?? 0 }));
    }
    if (opts.inventory) {
      const byLocation = new Map<string, number>();
      for (const sku of countedSkus(doc))
        for (const b of stock.get(sku)?.byLocation ?? [])
          byLocation.set(b.locationId, (byLocation.get(b.locationId) ?? 0) + b.onHand);
      const list = [...byLocation]
        .map(([locationId, onHand]) => ({ locationId, onHand }))
        .sort((a, b) => a.locationId.localeCompare(b.locationId));
      item.inventory = { total: list.reduce((n, b) => n + b.onHand, 0), byLocation: list };
    }
  });
}

/**
 * Ids of the products that have stock (> 0) at a location, through their own or a variant SKU; a
 * calculated bundle through what its components make up there (bundleStock), not its own SKU.
 */
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
  const ids = new Set(owners.filter((o): o is { productId: string } => o !== null).map((o) => o.productId));
  const bundles = (await tenantDb
    .collection(products)
    .find(
      {
        productType: 'bundle',
        'bundleConfig.inventoryMode': { $ne: 'reserved' },
        $or: [
          { _id: { $in: [...ids].filter((id) => ObjectId.isValid(id)).map((id) => new ObjectId(id)) } },
          { 'bundleConfig.components.productSku': { $in: levels.map((l) => l.sku) } },
        ],
      },
      { projection: { sku: 1, 'variants.sku': 1, productType: 1, bundleConfig: 1 } },
    )
    .toArray()
    .then((docs) => docs.map((d) => ({ ...d, variants: d.variants ?? [] })))) as (StockShape &
    Pick<ProductDoc, '_id'>)[];
  const stock = await productStock(tenantDb, bundles, locationId);
  for (const b of bundles) {
    const has = skusOfProduct(b).some((s) => (stock.get(s)?.total ?? 0) > 0);
    if (has) ids.add(b._id.toHexString());
    else ids.delete(b._id.toHexString());
  }
  return [...ids];
}

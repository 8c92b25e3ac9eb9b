import { withSyncStatus } from './sync-status';
import type { ProductDoc } from './types';

/** What `extend` can add to a list item; `all` is every one of them. `inventory` (stock from the ledger) is added by the routes (shared/inventory/stock-view.ts). */
export const EXTENDS = [
  'variants',
  'options',
  'description',
  'bindings',
  'metadata',
  'inventory',
  'dimensions',
  'seo',
  'all',
] as const;
export type Extend = (typeof EXTENDS)[number];

/** The fields every list item carries without `extend`. */
export const COMPACT_FIELDS = [
  'id',
  'sku',
  'status',
  'productType',
  'title',
  'price',
  'compareAtPrice',
  'currency',
  'brand',
  'model',
  'productKind',
  'category',
  'tags',
  'image',
  'hasVariants',
  'variantCount',
  'createdAt',
  'updatedAt',
] as const;

const EXTEND_FIELDS: Record<Exclude<Extend, 'all' | 'inventory'>, (keyof ProductDoc)[]> = {
  variants: ['variants'],
  options: ['options'],
  description: ['description', 'htmlDescription', 'bullets'],
  bindings: ['bindings'],
  metadata: ['metafields', 'attributes', 'categoryMap', 'condition', 'upc', 'barcode', 'barcodeType', 'satCode'],
  dimensions: ['shipping'],
  seo: ['seo'],
};

/**
 * The full product as the API shows it: `id` from `_id`, dates as ISO strings, each variant's
 * effective minAlertStock (its own, else the product's, else 5), and each binding's syncStatus as
 * it stands (a binding synced at an earlier version reads pending).
 */
export function presentProduct(doc: ProductDoc): Record<string, unknown> {
  const { _id, version, createdAt, updatedAt, search: _search, lastEditBy: _edit, editedBy: _by, ...rest } = doc;
  return {
    id: _id.toHexString(),
    ...rest,
    bindings: withSyncStatus(doc.bindings, version),
    variants: doc.variants.map((v) => ({
      ...v,
      ...(v.bindings ? { bindings: withSyncStatus(v.bindings, version) } : {}),
      minAlertStock: v.minAlertStock ?? doc.minAlertStock ?? 5,
    })),
    createdAt: createdAt.toISOString(),
    updatedAt: updatedAt.toISOString(),
  };
}

/** A list item: the compact fields, plus the groups `extend` asks for. */
export function presentListItem(doc: ProductDoc, extend: ReadonlySet<Extend>): Record<string, unknown> {
  const full = presentProduct(doc);
  if (extend.has('all')) return full;
  const item: Record<string, unknown> = {
    id: full.id,
    sku: doc.sku,
    status: doc.status,
    productType: doc.productType,
    title: doc.title,
    price: doc.price,
    compareAtPrice: doc.compareAtPrice,
    currency: doc.currency,
    brand: doc.brand,
    model: doc.model,
    productKind: doc.productKind,
    category: doc.category,
    tags: doc.tags,
    image: doc.media[0]?.src ?? null,
    hasVariants: doc.variants.length > 0,
    variantCount: doc.variants.length,
    createdAt: full.createdAt,
    updatedAt: full.updatedAt,
  };
  for (const group of extend) {
    if (group === 'all' || group === 'inventory') continue;
    for (const field of EXTEND_FIELDS[group]) item[field] = full[field];
  }
  for (const k of Object.keys(item)) if (item[k] === undefined) delete item[k];
  return item;
}
